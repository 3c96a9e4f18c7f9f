"""Compile a Python loop program into TTU register rows (seed 000's front end).

The source is parsed with :mod:`ast` and never executed. It may hold, at top level:

* integer constants, ``N = 4`` (usable in bounds and indices below them);
* ``for`` loops over ``range(stop)``, ``range(start, stop)`` or
  ``range(start, stop, step)`` with constant integer arguments. A loop's body is either
  exactly one inner ``for`` loop (perfect nesting) or plain statements (expressions,
  assignments, ``pass``) without control flow;
* array accesses in the innermost bodies: ``bias[h]``, ``V[i, j, k]``, ``V[i][j][k]``,
  each index an affine integer expression of the nest's loop variables
  (``V[2*i + 1, j]``).

The deepest top-level nest is the **main nest** (the first of equal depth); the loops
before it are the **prologue**, those after it the **epilogue**. Every access gets its
own register row, in source order. A nest's accesses advance in lockstep, so the stream
lists each iteration's accesses in the order they appear in the source (for
``out[i] = a[i]`` that is ``out`` first, although Python evaluates the right side
first).

Each array's layout is an :class:`~strider.AccessPattern` (its offset is the array's base
address) or a shape with an order and a base, see :func:`compile_program`.

Errors are :class:`~strider.errors.ProgramError` with the source line and column.

Examples
--------
Seed 000's program 212: a prologue reading ``V1`` (base 12) and the main nest over ``V2``.

>>> from strider import AccessPattern
>>> from strider.ttu import compile_program
>>> src = '''
... for h in range(3):
...     V1[h]
... for i in range(3):
...     for j in range(2):
...         for k in range(2):
...             V2[i][j][k]
... '''
>>> prog = compile_program(src, {"V1": AccessPattern((3,), (1,), 12),
...                              "V2": AccessPattern((3, 2, 2), (2, 6, 1))})
>>> prog.run().addresses.tolist()
[12, 13, 14, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any, Mapping

from ..access_pattern import AccessPattern
from ..errors import ArgumentError, LayoutError, ProgramError
from .config import TTUConfig
from .program import Access, Loop, LoopGroup, TTUProgram
from .rows import RowProgram, coalesce_loops, row_issues, row_values

ArraySpec = Any  # AccessPattern | Mapping | tuple, see layout_of()


def layout_of(name: str, spec: ArraySpec) -> AccessPattern:
    """The layout of array ``name`` from an accepted spec.

    Accepts an :class:`~strider.AccessPattern`; a mapping with ``shape`` and either
    ``strides`` or ``order`` ("C" default, or "F"), plus optional ``base``; or a tuple
    ``(shape,)``, ``(shape, order)`` or ``(shape, order, base)``.

    >>> layout_of("V", ((2, 3), "F", 7))
    AccessPattern(shape=(2, 3), strides=(1, 2), offset=7)
    >>> layout_of("V", {"shape": (2, 3), "strides": (1, 2)})
    AccessPattern(shape=(2, 3), strides=(1, 2), offset=0)
    """
    try:
        if isinstance(spec, AccessPattern):
            return spec
        if isinstance(spec, Mapping):
            extra = set(spec) - {"shape", "strides", "order", "base", "offset"}
            if extra or "shape" not in spec:
                raise ArgumentError(
                    f"array {name!r}: a layout mapping needs 'shape' and may have 'strides' or "
                    f"'order', and 'base'; got keys {sorted(spec)}"
                )
            base = spec.get("base", spec.get("offset", 0))
            if "strides" in spec:
                return AccessPattern(spec["shape"], spec["strides"], base)
            return AccessPattern.from_layout(spec["shape"], spec.get("order", "C"), base)
        if isinstance(spec, tuple) and 1 <= len(spec) <= 3:
            return AccessPattern.from_layout(*spec)
    except LayoutError as exc:
        raise ArgumentError(f"array {name!r}: {exc}") from None
    raise ArgumentError(
        f"array {name!r}: expected an AccessPattern, a mapping with shape/order/base or a "
        f"(shape, order, base) tuple, got {spec!r}"
    )


#: One array access of a nest: (array name, source text, affine index per dim, node).
_Found = tuple[str, str, list[tuple[dict[str, int], int]], ast.Subscript]


@dataclass
class _Nest:
    loops: list[Loop]
    accesses: list[_Found]
    line: int
    col: int


def _err(msg: str, node: ast.AST | None) -> ProgramError:
    if node is None or not hasattr(node, "lineno"):
        return ProgramError(msg)
    col = node.col_offset  # type: ignore[attr-defined]  # an AST node with a line has a column
    return ProgramError(msg, line=node.lineno, col=col + 1)


_CONST_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


class _Compiler:
    def __init__(self, source: str, arrays: Mapping[str, ArraySpec], config: TTUConfig):
        self.source = source
        self.layouts = {name: layout_of(name, spec) for name, spec in arrays.items()}
        self.config = config
        self.consts: dict[str, int] = {}

    # ------------------------------------------------------------------ parsing
    def parse(self) -> list[_Nest]:
        try:
            tree = ast.parse(self.source)
        except SyntaxError as exc:
            raise ProgramError(f"not valid Python: {exc.msg}", line=exc.lineno,
                               col=exc.offset) from None
        nests = []
        for k, stmt in enumerate(tree.body):
            if isinstance(stmt, ast.For):
                nests.append(self.nest(stmt, []))
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if name in self.layouts:
                    raise _err(f"`{name}` is declared as an array; it cannot be a constant", stmt)
                self.consts[name] = self.const(stmt.value, "a constant")
            elif isinstance(stmt, ast.Pass) or _is_docstring(stmt, k):
                continue
            else:
                raise _err(
                    f"unsupported top-level statement ({type(stmt).__name__}): a loop program "
                    f"holds only `for` loops and integer constants such as `N = 4`", stmt)
        if not nests:
            raise ProgramError("the program has no `for` loop: write at least one "
                               "`for v in range(...)` loop that reads an array")
        return nests

    def nest(self, node: ast.For, outer: list[Loop]) -> _Nest:
        loop = self.loop(node, outer)
        loops = outer + [loop]
        body = [s for s in node.body if not isinstance(s, ast.Pass)]
        inner = [s for s in body if isinstance(s, ast.For)]
        if inner:
            if len(body) != 1:
                other = next(s for s in body if not isinstance(s, ast.For)) \
                    if len(inner) == 1 else inner[1]
                raise _err(
                    "imperfect loop nest: a loop body must be either exactly one inner `for` "
                    "loop or statements without loops; move this statement into its own "
                    "top-level loop (a prologue or epilogue)", other)
            return self.nest(inner[0], loops)
        found = []
        for stmt in body:
            self.check_statement(stmt)
            for sub in _accesses_in(stmt):
                found.append(self.access(sub, loops))
        found.sort(key=lambda a: (a[3].lineno, a[3].col_offset))
        first = loops[0]
        return _Nest(loops, found, first.line, first.col)

    def loop(self, node: ast.For, outer: list[Loop]) -> Loop:
        if node.orelse:
            raise _err("`for ... else` is not supported in a loop program", node.orelse[0])
        if not isinstance(node.target, ast.Name):
            raise _err("the loop variable must be a plain name, as in `for i in range(4)`",
                       node.target)
        var = node.target.id
        if var in self.layouts or var in self.consts:
            raise _err(f"loop variable `{var}` reuses the name of an array or constant", node.target)
        if any(lp.var == var for lp in outer):
            raise _err(f"loop variable `{var}` is already used by an enclosing loop", node.target)
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "range" and not it.keywords and 1 <= len(it.args) <= 3):
            raise _err("only `for v in range(...)` loops are supported (1 to 3 constant "
                       "arguments)", it)
        args = [self.const(a, "a loop bound") for a in it.args]
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args[:2], 1) \
            if len(args) == 2 else tuple(args)
        if step == 0:
            raise _err("range() step must not be zero", it.args[2])
        return Loop(var, start, stop, step, node.lineno, node.col_offset + 1)

    def const(self, node: ast.AST, what: str) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name) and node.id in self.consts:
            return self.consts[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self.const(node.operand, what)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _CONST_OPS:
            left, right = self.const(node.left, what), self.const(node.right, what)
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
                raise _err(f"division by zero in {what}", node)
            if isinstance(node.op, ast.Pow) and right < 0:
                raise _err(f"negative power in {what}", node)
            return _CONST_OPS[type(node.op)](left, right)
        raise _err(f"{what} must be a constant integer expression (literals and constants "
                   f"defined above), got `{ast.unparse(node)}`", node)

    def check_statement(self, stmt: ast.stmt) -> None:
        if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
            raise _err(f"unsupported statement in a loop body ({type(stmt).__name__}): "
                       f"use expressions and assignments only, no control flow", stmt)
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                 ast.GeneratorExp, ast.IfExp, ast.NamedExpr, ast.Await,
                                 ast.Yield, ast.YieldFrom)):
                raise _err(f"`{ast.unparse(node)}`: conditional or nested evaluation is not "
                           f"supported in a loop body", node)

    def access(self, node: ast.Subscript, loops: list[Loop]) -> _Found:
        chain = []
        cur: ast.AST = node
        while isinstance(cur, ast.Subscript):
            chain.append(cur.slice)
            cur = cur.value
        chain.reverse()
        if not isinstance(cur, ast.Name):
            raise _err(f"`{ast.unparse(node)}`: only named arrays can be indexed", node)
        name = cur.id
        if name not in self.layouts:
            known = ", ".join(sorted(self.layouts)) or "none"
            raise _err(f"array `{name}` is not declared (declared arrays: {known}); give its "
                       f"layout, e.g. --array {name}=4x4:C@0", cur)
        layout = self.layouts[name]
        indices: list[ast.AST] = []
        for sl in chain:
            indices.extend(sl.elts if isinstance(sl, ast.Tuple) else [sl])
        if len(indices) != layout.ndim:
            raise _err(f"`{ast.unparse(node)}` uses {len(indices)} indices but `{name}` has "
                       f"{layout.ndim} dims {layout.shape}; index every dim once", node)
        loop_vars = {lp.var: lp for lp in loops}
        affine = []
        for d, idx in enumerate(indices):
            if isinstance(idx, (ast.Slice, ast.Starred)):
                raise _err(f"`{ast.unparse(idx)}`: slices are not supported; index dim {d} of "
                           f"`{name}` with one affine expression of the loop variables", idx)
            coefs, const = self.affine(idx, loop_vars)
            if all(lp.trips > 0 for lp in loops):
                lo = hi = const
                for var, c in coefs.items():
                    lp = loop_vars[var]
                    a, b = c * lp.start, c * (lp.start + (lp.trips - 1) * lp.step)
                    lo, hi = lo + min(a, b), hi + max(a, b)
                n = layout.shape[d]
                if lo < 0 or hi >= n:
                    raise _err(f"index `{ast.unparse(idx)}` of `{name}` (dim {d}) takes values "
                               f"{lo}..{hi} but dim {d} has extent {n} (valid 0..{n - 1})", idx)
            affine.append((coefs, const))
        return name, ast.unparse(node), affine, node

    def affine(self, node: ast.AST, loop_vars: dict[str, Loop]) -> tuple[dict[str, int], int]:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return {}, node.value
        if isinstance(node, ast.Name):
            if node.id in loop_vars:
                return {node.id: 1}, 0
            if node.id in self.consts:
                return {}, self.consts[node.id]
            raise _err(f"`{node.id}` is neither a loop variable of this nest nor a constant",
                       node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            coefs, const = self.affine(node.operand, loop_vars)
            if isinstance(node.op, ast.UAdd):
                return coefs, const
            return {k: -v for k, v in coefs.items()}, -const
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            lc, lk = self.affine(node.left, loop_vars)
            rc, rk = self.affine(node.right, loop_vars)
            sign = 1 if isinstance(node.op, ast.Add) else -1
            coefs = dict(lc)
            for k, v in rc.items():
                coefs[k] = coefs.get(k, 0) + sign * v
            return {k: v for k, v in coefs.items() if v}, lk + sign * rk
        if isinstance(node, ast.BinOp) and type(node.op) in _CONST_OPS:
            lc, lk = self.affine(node.left, loop_vars)
            rc, rk = self.affine(node.right, loop_vars)
            if isinstance(node.op, ast.Mult) and not (lc and rc):
                factor, (coefs, const) = (rk, (lc, lk)) if not rc else (lk, (rc, rk))
                return {k: v * factor for k, v in coefs.items() if v * factor}, const * factor
            if not lc and not rc:
                return {}, self.const(node, "an index")
        raise _err(f"index `{ast.unparse(node)}` is not affine: use sums of integer multiples "
                   f"of loop variables and constants, such as `2*i + j - 1`", node)

    # ------------------------------------------------------------------ lowering
    def lower(self, nests: list[_Nest]) -> TTUProgram:
        depth = [len(n.loops) for n in nests]
        main = depth.index(max(depth))
        groups: list[LoopGroup] = []
        accesses: list[Access] = []
        row_programs: list[RowProgram] = []
        total_rows = sum(len(n.accesses) for n in nests)
        for g, nest in enumerate(nests):
            role = "prologue" if g < main else "nest" if g == main else "epilogue"
            trips = tuple(lp.trips for lp in nest.loops)
            patterns = []
            for name, _text, affine, _node in nest.accesses:
                layout = self.layouts[name]
                strides, offset = [], layout.offset
                for lp in nest.loops:
                    per_index = sum(s * coefs.get(lp.var, 0)
                                    for s, (coefs, _) in zip(layout.strides, affine))
                    strides.append(per_index * lp.step)
                    offset += per_index * lp.start
                offset += sum(s * const for s, (_, const) in zip(layout.strides, affine))
                patterns.append(AccessPattern(trips, strides, offset))
            cols, col_strides = coalesce_loops(trips, [p.strides for p in patterns],
                                               self.config.dims)
            if len(cols) > self.config.dims:
                raise ProgramError(
                    f"this loop nest has {len(trips)} loops and still needs {len(cols)} TTU "
                    f"columns after merging loops whose strides chain; the unit has "
                    f"{self.config.dims} (raise TTUConfig.dims)",
                    line=nest.line, col=nest.col)
            rows = []
            for (name, text, _affine, node), pat, row_strides in zip(nest.accesses, patterns,
                                                                    col_strides):
                r = len(accesses)
                if r >= self.config.rows:
                    raise _err(f"the program needs {total_rows} register rows (one per array "
                               f"access) but the unit has {self.config.rows} (raise "
                               f"TTUConfig.rows)", node)
                row = row_values(cols, row_strides, pat.offset, self.config)
                issues = row_issues(row, self.config)
                if issues:
                    raise _err(f"`{text}` (row {r}) does not fit the TTU: {'; '.join(issues)}; "
                               f"use wider registers (TTUConfig.width_bits)", node)
                accesses.append(Access(name, text, role, g, pat, self.layouts[name].offset,
                                       node.lineno, node.col_offset + 1))
                row_programs.append(row)
                rows.append(r)
            groups.append(LoopGroup(role, tuple(nest.loops), tuple(rows), cols))
        return TTUProgram(self.config, tuple(groups), tuple(accesses), tuple(row_programs),
                          self.source)


def _is_docstring(stmt: ast.stmt, position: int) -> bool:
    return (position == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


def _accesses_in(node: ast.AST):
    """Outermost subscript chains in ``node``, depth first (indices are not searched)."""
    if isinstance(node, ast.Subscript):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _accesses_in(child)


def compile_program(source: str, arrays: Mapping[str, ArraySpec],
                    config: TTUConfig | None = None) -> TTUProgram:
    """Compile loop-program ``source`` into a :class:`TTUProgram` for a TTU of ``config``.

    Parameters
    ----------
    source : str
        Python text of ``for v in range(...)`` loops reading arrays (module docstring
        of :mod:`strider.ttu.compiler` lists what is accepted). Never executed.
    arrays : mapping
        Array name to layout: an :class:`~strider.AccessPattern` (its offset is the
        base address), ``{"shape": ..., "order": "C" | "F" or "strides": ...,
        "base": ...}`` or ``(shape, order, base)``.
    config : TTUConfig, optional
        The unit to compile for (default ``TTUConfig()``).

    Returns
    -------
    TTUProgram

    Raises
    ------
    ProgramError
        With line and column: syntax errors, non-``range`` loops, non-constant bounds,
        non-affine or out-of-bounds indices, undeclared arrays, more rows or columns
        than the unit has, values too wide for its registers.
    ArgumentError
        A layout in ``arrays`` is malformed.

    Examples
    --------
    Seed 001: ``V1`` laid out with strides (2, 6, 1).

    >>> from strider import AccessPattern
    >>> src = "for i in range(3):\\n for j in range(2):\\n  for k in range(2):\\n   V1[i][j][k]"
    >>> prog = compile_program(src, {"V1": AccessPattern((3, 2, 2), (2, 6, 1))},
    ...                        TTUConfig(rows=1, dims=3))
    >>> prog.row_programs[0].step, prog.row_programs[0].end
    ((2, 6, 1), (6, 12, 2))
    >>> prog.run().addresses.tolist()
    [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]
    >>> compile_program("for i in range(4):\\n    V1[i, 0, 0]", {"V1": AccessPattern((3, 2, 2), (2, 6, 1))})
    Traceback (most recent call last):
    ...
    strider.errors.ProgramError: line 2, column 8: index `i` of `V1` (dim 0) takes values 0..3 but dim 0 has extent 3 (valid 0..2)
    """
    if not isinstance(source, str):
        raise ArgumentError(f"source must be a str of Python text, got {type(source).__name__}")
    if not isinstance(arrays, Mapping):
        raise ArgumentError(f"arrays must map array names to layouts, got {type(arrays).__name__}")
    compiler = _Compiler(source, arrays, config if config is not None else TTUConfig())
    return compiler.lower(compiler.parse())


__all__ = ["compile_program", "layout_of"]

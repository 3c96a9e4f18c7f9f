"""The worked examples of seeds 000 and 001, with the streams the patents give.

The same programs ship as ``examples/ttu_prologue.py`` and
``examples/ttu_strided_tensor.py``; the tests check both reproduce these streams.

Examples
--------
>>> from strider.ttu.golden import STRIDED_TENSOR_EXAMPLE
>>> STRIDED_TENSOR_EXAMPLE.compile().run().addresses.tolist() == list(STRIDED_TENSOR_EXAMPLE.expected)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from ..access_pattern import AccessPattern
from .config import TTUConfig

if TYPE_CHECKING:
    from .program import TTUProgram


@dataclass(frozen=True)
class GoldenExample:
    """A loop program, its array layouts and the address stream its source document gives."""

    name: str
    title: str
    source: str
    arrays: Mapping[str, AccessPattern]
    expected: tuple[int, ...]
    config: TTUConfig = field(default_factory=lambda: TTUConfig(rows=4, dims=3))

    def compile(self) -> TTUProgram:
        """The compiled program."""
        from .compiler import compile_program  # the compiler loads with the first example run

        return compile_program(self.source, self.arrays, self.config)


PROLOGUE_EXAMPLE = GoldenExample(
    name="prologue",
    title="A prologue loop reads V1 (base 12), then the nest walks V2 (seed 000's program 212)",
    source=(
        "for h in range(3):\n"
        "    V1[h]\n"
        "for i in range(3):\n"
        "    for j in range(2):\n"
        "        for k in range(2):\n"
        "            V2[i][j][k]\n"
    ),
    arrays={"V1": AccessPattern((3,), (1,), 12), "V2": AccessPattern((3, 2, 2), (2, 6, 1))},
    expected=(12, 13, 14, 0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11),
)

STRIDED_TENSOR_EXAMPLE = GoldenExample(
    name="strided-tensor",
    title="Loops i, j, k walk V1 with steps 2, 6, 1: a non-row-major layout (seed 001)",
    source=(
        "for i in range(3):\n"
        "    for j in range(2):\n"
        "        for k in range(2):\n"
        "            V1[i][j][k]\n"
    ),
    arrays={"V1": AccessPattern((3, 2, 2), (2, 6, 1))},
    expected=(0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11),
)

EXAMPLES = (PROLOGUE_EXAMPLE, STRIDED_TENSOR_EXAMPLE)

__all__ = ["GoldenExample", "PROLOGUE_EXAMPLE", "STRIDED_TENSOR_EXAMPLE", "EXAMPLES"]

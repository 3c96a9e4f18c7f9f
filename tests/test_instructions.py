"""Each instruction is defined once: its class states operands, timing, checks and effect.

The second half proves it: a new instruction written as one class in this file runs
through every consumer (program files, listing, lowering and its checks, the cost model,
the simulator with real data and race checks) with no edit anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

import strider.program.instructions as isa
from strider import AccessPattern as AP
from strider import Hardware
from strider.cost import lane_cycles
from strider.data import random_array
from strider.errors import ProgramError
from strider.operands import ON_CHIP, Ref
from strider.program import Program
from strider.program.instructions import INSTRUCTION_TYPES, Instruction
from strider.sim import Machine
from strider.sim.estimate import estimate
from strider.sim.lower import lower

HW = Hardware.preset("tiny")


@pytest.mark.parametrize("name", sorted(INSTRUCTION_TYPES))
def test_every_instruction_defines_timing_checks_and_effect(name):
    cls = INSTRUCTION_TYPES[name]
    for part in ("timing", "check", "execute"):
        assert getattr(cls, part) is not getattr(Instruction, part), f"{name} lacks {part}"
    refs = [f for f, t in cls.__dataclass_fields__.items() if t.type in ("Ref", Ref)]
    assert list(cls.operand_names()) == refs
    assert name in isa.__doc__, f"{name} is missing from the instruction table"


def test_a_class_missing_a_part_is_caught():
    @dataclass(frozen=True, kw_only=True)
    class Incomplete(Instruction):
        dst: Ref
        engine_kind: ClassVar[str] = "vector"

        def timing(self, hw):
            return 1.0, 1.0

    try:
        assert Incomplete.check is Instruction.check  # what the test above flags
        tile = Ref.sbuf(0, 2, AP.contiguous((2,)), "int8")
        with pytest.raises(NotImplementedError, match="Incomplete defines no checks"):
            Incomplete(dst=tile).check(0, None)
    finally:
        del INSTRUCTION_TYPES["Incomplete"]


@dataclass(frozen=True, kw_only=True)
class VectorInvert(Instruction):
    """``dst[i] = ~src[i]`` (bitwise) on the vector engine, lane per partition."""

    src: Ref
    dst: Ref
    engine_kind: ClassVar[str] = "vector"

    def timing(self, hw: Hardware) -> tuple[float, float]:
        c = lane_cycles(self.src, hw.vector.lanes, hw.vector.instruction_cycles)
        return c, c

    def check(self, k: int, rules: Any) -> None:
        rules.ref(k, self, "src", self.src, ON_CHIP)
        rules.ref(k, self, "dst", self.dst, ON_CHIP)
        rules.same_partitions(k, self)
        rules.same_itemsize(k, self, self.src, self.dst)

    def execute(self, k: int, machine: Any) -> None:
        src = machine.read(k, self, "src", self.src, raw=True)
        dst = machine.view(self.dst, raw=True)
        dst[...] = ~src.reshape(dst.shape)
        machine.wrote(self.dst)


# registered by defining it; the tests below must not leave it behind
del INSTRUCTION_TYPES["VectorInvert"]


@pytest.fixture()
def invert_registered():
    INSTRUCTION_TYPES["VectorInvert"] = VectorInvert
    yield
    del INSTRUCTION_TYPES["VectorInvert"]


def invert_program(dtype: str = "int16") -> Program:
    p = Program("invert")
    p.tensor("x", (8, 12), dtype, role="input")
    p.tensor("y", (8, 12), dtype, role="output")
    a = Ref.sbuf(0, 8, AP.contiguous((12,)), dtype)
    b = Ref.sbuf(0, 8, AP.contiguous((12,), offset=16), dtype)
    load = p.dma(0, Ref.dram("x", AP.contiguous((8, 12)), dtype), a)
    inv = p.add(VectorInvert(src=a, dst=b, deps=(load,), label="invert"))
    p.dma(1, b, Ref.dram("y", AP.contiguous((8, 12)), dtype), deps=[inv])
    return p


@pytest.mark.usefixtures("invert_registered")
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "bfloat16"])
def test_a_new_instruction_is_one_class(dtype):
    p = invert_program(dtype)
    assert Program.from_json(p.to_json()) == p                       # program files
    assert "VectorInvert" in p.listing() and "# invert" in p.listing()
    table = lower(p, HW)                                             # lowering + checks
    assert table.latency[1] == HW.vector.instruction_cycles + 12
    assert estimate(p, HW).cycles > table.latency[1]                 # the cost model
    x = random_array((8, 12), dtype, np.random.default_rng(3))
    r = Machine(HW).run(p, {"x": x}, check_races=True)               # the simulator
    raw = f"u{x.dtype.itemsize}"
    assert np.array_equal(r.outputs["y"].view(raw), ~x.view(raw))


@pytest.mark.usefixtures("invert_registered")
def test_a_new_instructions_checks_run_in_lowering():
    p = Program("bad")
    p.tensor("x", (4,), "int8", role="input")
    p.add(VectorInvert(src=Ref.sbuf(0, 2, AP.contiguous((4,)), "int8"),
                       dst=Ref.sbuf(1, 2, AP.contiguous((4,)), "int8")))
    with pytest.raises(ProgramError, match="instruction 0 \\(VectorInvert on vector\\): "
                                           "src uses partitions 0..1 but dst 1..2"):
        lower(p, HW)

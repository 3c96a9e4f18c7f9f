"""The planners' compiled modules (setup.py's COMPILED, built by mypyc) plan what their
Python source plans: the same strategies, predictions and programs, on random hardware
and shapes. The installed package (compiled where the install built it) is held to the
source tree run as pure Python in a second process. Where nothing is compiled (an
editable install) both sides are the source, and the test shows only that the build
report says so."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import strider
from strider.version import build, compiled_modules

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"

#: What both sides plan: the digest of every plan (strategy, prediction, program).
DIGEST = """
import hashlib, random, sys
from strider.hardware.sampling import random_hardware, random_permutation
from strider.strategy import plan_permute
rng = random.Random(int(sys.argv[1]))
digest = hashlib.sha256()
for k in range(int(sys.argv[2])):
    hw = random_hardware(rng.choice)
    shape, perm, dtype = random_permutation(rng.choice, 40, 20000)
    for strategy in ("auto", "vector"):
        try:
            plan = plan_permute(shape, perm, dtype, hw, strategy)
            digest.update(repr((plan.strategy, plan.predicted_cycles,
                                plan.program.instructions)).encode())
        except Exception as exc:   # (a refusal is part of the answer)
            digest.update(f"{type(exc).__name__}: {exc}".encode())
print(digest.hexdigest())
"""


def _setup_list() -> list[str]:
    text = (ROOT / "setup.py").read_text()
    start = text.index("COMPILED = [")
    body = text[start:text.index("]", start)]
    return [part.strip().strip('"') for part in body.split("[", 1)[1].split(",")
            if part.strip()]


def test_the_compiled_list_names_modules_of_the_package():
    listed = _setup_list()
    assert listed and len(set(listed)) == len(listed)
    for path in listed:
        assert (SOURCE / "strider" / path).is_file(), path
    dotted = {"strider." + p[:-3].replace("/", ".") for p in listed}
    # whatever is installed compiled is on the list (a stale build is not)
    assert set(compiled_modules()) <= dotted


def test_the_build_report_names_what_runs():
    compiled = compiled_modules()
    assert build() == (f"compiled: {len(compiled)} modules (mypyc)" if compiled
                       else "pure Python")


@pytest.mark.skipif(not SOURCE.is_dir(), reason="no source tree beside the tests")
def test_compiled_modules_plan_what_their_source_plans():
    seed, cases = random.Random().randrange(1 << 30), 6
    here = subprocess.run([sys.executable, "-c", DIGEST, str(seed), str(cases)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": ""}, cwd=ROOT / "tests")
    pure = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
         "import strider; assert strider.__file__.startswith(sys.path[0]), strider.__file__; "
         + "exec(" + repr(DIGEST) + ")", str(SOURCE), str(seed), str(cases)],
        capture_output=True, text=True, check=True, cwd=ROOT / "tests")
    assert here.stdout.strip() == pure.stdout.strip(), (
        f"seed {seed}: the installed package ({build()}, {strider.__file__}) and its "
        "source plan differently")
    assert len(here.stdout.strip()) == 64   # (a digest, not an empty answer)

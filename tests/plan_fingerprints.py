"""Plan fingerprints: a SHA-1 of every strategy's program over fixed cases.

A refactor that must not change what the planners emit records the fingerprints before
it and checks them after it::

    python tests/plan_fingerprints.py --write tests/data/plan_fingerprints.json
    python tests/plan_fingerprints.py --check tests/data/plan_fingerprints.json

The cases are the built-in suite on ``trn1-like`` and 40 seeded random (hardware,
permutation) pairs; each applicable strategy's plan is fingerprinted (the SHA-1 of its
program's JSON) with its predicted cycles, and a refusal by its reason's first words.
The test module ``test_plan_fingerprints`` checks the quick subset in the default run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any, Iterator

from strider import Hardware, PermuteRequest, Plan
from strider.demo_suite import CASES
from strider.hardware.sampling import random_hardware, random_permutation
from strider.strategy import candidates

#: Seeds of the random (hardware, permutation) cases.
RANDOM_SEEDS = range(40)


def cases(quick: bool = False) -> Iterator[tuple[str, PermuteRequest, Hardware]]:
    """``(key, request, hardware)``; ``quick`` keeps every other random case only (the
    default test run's share)."""
    if not quick:
        trn1 = Hardware.preset("trn1-like")
        for case in CASES:
            yield f"suite {case.name}", PermuteRequest(case.shape, case.perm, case.dtype), trn1
    for seed in RANDOM_SEEDS[::2] if quick else RANDOM_SEEDS:
        rng = random.Random(seed)
        hw = random_hardware(rng.choice)
        shape, perm, dtype = random_permutation(rng.choice, max_side=40, max_size=60_000)
        yield f"random {seed}", PermuteRequest(shape, perm, dtype), hw


def fingerprint(request: PermuteRequest, hw: Hardware) -> dict[str, Any]:
    """Each strategy's program SHA-1 and predicted cycles, or its refusal."""
    out: dict[str, Any] = {}
    for name, found in candidates(request, hw):
        if isinstance(found, Plan):
            digest = hashlib.sha1(found.program.to_json().encode()).hexdigest()
            out[name] = {"sha1": digest, "predicted_cycles": repr(found.predicted_cycles)}
        else:
            out[name] = {"refused": " ".join(str(found).split()[:6])}
    return out


def record(quick: bool = False) -> dict[str, Any]:
    return {key: fingerprint(request, hw) for key, request, hw in cases(quick)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, help="record the fingerprints in this file")
    mode.add_argument("--check", type=Path, help="compare with the fingerprints in this file")
    parser.add_argument("--quick", action="store_true", help="every other random case only")
    args = parser.parse_args(argv)
    now = record(args.quick)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"{len(now)} cases recorded in {args.write}")
        return 0
    then = json.loads(args.check.read_text())
    changed = [k for k in now if then.get(k) != now[k]]   # (a --quick run checks its own)
    for key in changed:
        print(f"CHANGED {key}:\n  then {then.get(key)}\n  now  {now[key]}")
    print(f"{len(now) - len(changed)} of {len(now)} cases unchanged")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

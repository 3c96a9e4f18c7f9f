"""Plan fingerprints: a SHA-1 of every strategy's program over fixed cases.

A refactor that must not change what the planners emit records the fingerprints before
it and checks them after it::

    python tests/plan_fingerprints.py --write tests/data/plan_fingerprints.json
    python tests/plan_fingerprints.py --check tests/data/plan_fingerprints.json

The cases are the built-in suite on ``trn1-like`` and 40 seeded random (hardware,
permutation) pairs; each applicable strategy's plan by the exhaustive search (the
reference, ``search="exhaustive"``) is fingerprinted (the SHA-1 of its program's JSON)
with its predicted cycles, and a refusal by its reason's first words.

The default search (``search="ranked"``) is held to it on the same cases: its ``auto``
plan must be predicted within RANKED_WITHIN of the exhaustive search's fastest plan,
and its ``predicted_cycles`` must be its own program's estimate (``--check`` reports
both; a ranked plan may change without a re-recording, as long as it stays that close).
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
from strider.sim.estimate import estimate
from strider.strategy import candidates, choose, plan_permute

#: Seeds of the random (hardware, permutation) cases.
RANDOM_SEEDS = range(40)
#: How much slower the ranked search's plan may be predicted than the exhaustive one's.
RANKED_WITHIN = 1.05


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


def fingerprint(request: PermuteRequest, hw: Hardware,
                ranked: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each strategy's program SHA-1 and predicted cycles (the exhaustive search), or its
    refusal; with ``ranked`` (a dict) also :func:`ranked_check`'s figures put in it."""
    out: dict[str, Any] = {}
    found_all = candidates(request, hw, search="exhaustive")
    if ranked is not None:
        ranked.update(ranked_check(request, hw, found_all))
    for name, found in found_all:
        if isinstance(found, Plan):
            digest = hashlib.sha1(found.program.to_json().encode()).hexdigest()
            out[name] = {"sha1": digest, "predicted_cycles": repr(found.predicted_cycles)}
        else:
            out[name] = {"refused": " ".join(str(found).split()[:6])}
    return out


def ranked_check(request: PermuteRequest, hw: Hardware,
                 exhaustive: list[tuple[str, Plan | str]]) -> dict[str, Any]:
    """The ranked search's ``auto`` plan against the exhaustive search's (``exhaustive``:
    its candidates): ``ratio`` of their predicted cycles and whether the ranked plan's
    prediction is its own program's estimate (``honest``); empty where nothing plans."""
    if not any(isinstance(p, Plan) for _, p in exhaustive):
        return {}
    best = choose(exhaustive, request, hw).predicted_cycles
    plan = plan_permute(request.shape, request.perm, request.dtype, hw, search="ranked")
    return {"ratio": plan.predicted_cycles / best if best else 1.0,
            "honest": estimate(plan.program, hw).cycles == plan.predicted_cycles}


def record(quick: bool = False, ranked: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every case's fingerprint; with ``ranked`` (a dict) also each case's
    :func:`ranked_check`, by key."""
    out = {}
    for key, request, hw in cases(quick):
        figures: dict[str, Any] | None = {} if ranked is not None else None
        out[key] = fingerprint(request, hw, figures)
        if ranked is not None and figures:
            ranked[key] = figures
    return out


def ranked_problems(ranked: dict[str, Any]) -> list[str]:
    """The cases where the ranked search's plan is too slow or its prediction not its
    program's estimate."""
    return [f"{key}: ranked plan predicted {f['ratio']:.4f}x the exhaustive one's"
            + ("" if f["honest"] else ", and not its own program's estimate")
            for key, f in ranked.items() if f["ratio"] > RANKED_WITHIN or not f["honest"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", type=Path, help="record the fingerprints in this file")
    mode.add_argument("--check", type=Path, help="compare with the fingerprints in this file")
    parser.add_argument("--quick", action="store_true", help="every other random case only")
    args = parser.parse_args(argv)
    ranked: dict[str, Any] = {}
    now = record(args.quick, None if args.write else ranked)
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
    problems = ranked_problems(ranked)
    for line in problems:
        print("RANKED " + line)
    worst = max(f["ratio"] for f in ranked.values())
    print(f"ranked search: {len(ranked) - len(problems)} of {len(ranked)} cases within "
          f"{RANKED_WITHIN - 1:.0%} of the exhaustive search and honest (worst {worst:.4f}x)")
    return 1 if changed or problems else 0


if __name__ == "__main__":
    sys.exit(main())

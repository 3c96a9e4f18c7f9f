"""Plans stay what they were unless a change means to move them.

The quick subset of :mod:`plan_fingerprints` (20 of its 40 seeded random cases, every
strategy, the exhaustive search) against the recorded fingerprints, and the default
search's plans held to them; the script checks them all and the suite. A change that
improves plans on purpose
re-records them (``python tests/plan_fingerprints.py --write
tests/data/plan_fingerprints.json``) and says so in its commit and the changelog.
"""

from __future__ import annotations

import json
from pathlib import Path

import plan_fingerprints

RECORDED = Path(__file__).parent / "data" / "plan_fingerprints.json"


def test_random_case_plans_are_unchanged():
    """The exhaustive search's plans as recorded; the default (ranked) search's plans
    within RANKED_WITHIN of them, each predicted by its own program's estimate."""
    recorded = json.loads(RECORDED.read_text())
    ranked: dict = {}
    now = plan_fingerprints.record(quick=True, ranked=ranked)
    assert len(now) == len(plan_fingerprints.RANDOM_SEEDS[::2])
    planned = sum("sha1" in v for case in now.values() for v in case.values())
    assert planned >= 50, "the random cases should mostly plan, else they guard little"
    changed = {key: (recorded.get(key), value) for key, value in now.items()
               if recorded.get(key) != value}
    assert changed == {}
    assert len(ranked) >= len(now) - 2, "the ranked search should be checked on most cases"
    assert plan_fingerprints.ranked_problems(ranked) == []

import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # shared strategies module
# the permute kernel's tile sizes: deterministic defaults, nothing measured or cached
# (tests/test_host_tuning.py turns measuring on for itself)
os.environ["STRIDER_TUNE"] = "0"

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile("fuzz", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("STRIDER_HYPOTHESIS", "default"))


@pytest.fixture(autouse=True, scope="session")
def _plan_cache_folder(tmp_path_factory):
    """The plan cache in a folder of this test session, never the user's ~/.cache (set
    in os.environ, so subprocesses and pool workers use it too)."""
    saved = os.environ.get("STRIDER_CACHE_DIR")
    os.environ["STRIDER_CACHE_DIR"] = str(tmp_path_factory.mktemp("plan-cache"))
    yield
    if saved is None:
        del os.environ["STRIDER_CACHE_DIR"]
    else:
        os.environ["STRIDER_CACHE_DIR"] = saved

import os
import sys

from hypothesis import settings

sys.path.insert(0, os.path.dirname(__file__))  # shared strategies module
# the permute kernel's tile sizes: deterministic defaults, nothing measured or cached
# (tests/test_host_tuning.py turns measuring on for itself)
os.environ["STRIDER_TUNE"] = "0"

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile("fuzz", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("STRIDER_HYPOTHESIS", "default"))

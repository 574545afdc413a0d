import os

import pytest
import torch

# One intra-op thread by default (the book's default); LENGTHGEN_TEST_THREADS=2 runs the suite with
# two, as `make unit` does (CI's one threads pass), so thread-dependent rounding is exercised.
torch.set_num_threads(int(os.environ.get("LENGTHGEN_TEST_THREADS", "1")))


@pytest.fixture(autouse=True)
def _clean_knobs(monkeypatch):
    """Tests start from the default knobs whatever the caller's environment says."""
    for var in ("LENGTHGEN_SCALE", "LENGTHGEN_DEVICE", "LENGTHGEN_THREADS"):
        monkeypatch.delenv(var, raising=False)
    yield

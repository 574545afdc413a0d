import os

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _clean_knobs(monkeypatch):
    """Tests start from the default knobs whatever the caller's environment says."""
    for var in ("LENGTHGEN_SCALE", "LENGTHGEN_DEVICE", "LENGTHGEN_THREADS"):
        monkeypatch.delenv(var, raising=False)
    yield

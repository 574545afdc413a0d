import pytest
import torch

from lengthgen import config
from lengthgen.config import ConfigError


def test_defaults():
    assert config.get_scale() == "smoke"
    assert config.get_device().type in ("cpu", "cuda")


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_scale_from_env(monkeypatch, scale):
    monkeypatch.setenv("LENGTHGEN_SCALE", scale)
    assert config.get_scale() == scale


def test_bad_scale_names_value_and_choices(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_SCALE", "huge")
    with pytest.raises(ConfigError, match=r"'huge'.*smoke, full"):
        config.get_scale()


def test_bad_device(monkeypatch):
    monkeypatch.setenv("LENGTHGEN_DEVICE", "tpu")
    with pytest.raises(ConfigError, match=r"'tpu'.*auto, cpu, cuda"):
        config.get_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="machine has CUDA")
def test_cuda_requested_without_cuda():
    with pytest.raises(ConfigError, match="cuda"):
        config.get_device("cuda")


def test_setup_threads_and_seed(monkeypatch):
    cfg = config.setup(seed=7)
    assert cfg.threads == 1 and torch.get_num_threads() == 1
    a = torch.rand(3)
    config.setup(seed=7)
    assert torch.equal(a, torch.rand(3))
    monkeypatch.setenv("LENGTHGEN_THREADS", "zero")
    with pytest.raises(ConfigError, match="zero"):
        config.setup()
    monkeypatch.setenv("LENGTHGEN_THREADS", "0")
    with pytest.raises(ConfigError, match="threads"):
        config.setup()


def test_checks():
    assert config.check_positive_int("n", 3) == 3
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ConfigError, match="n must be"):
            config.check_positive_int("n", bad)
    assert config.check_probability("p", 0.25) == 0.25
    for bad in (-0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ConfigError, match="probability"):
            config.check_probability("p", bad)
    with pytest.raises(ConfigError, match="dtype"):
        config.get_dtype("float16")
    with pytest.raises(ConfigError, match="seed"):
        config.setup(seed=-1)


def test_get_device_accepts_torch_devices():
    import torch

    from lengthgen.config import ConfigError, get_device

    assert get_device(torch.device("meta")) == torch.device("meta")
    assert get_device(torch.device("cpu")) == torch.device("cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="torch sees no CUDA device"):
            get_device(torch.device("cuda:1"))

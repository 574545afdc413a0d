"""Run-time configuration: the scale and device knobs, threads, seeding and argument checks.
Environment variables, read at call time: ``LENGTHGEN_SCALE`` (``smoke``, default, or ``full``),
``LENGTHGEN_DEVICE`` (``auto``, ``cpu``, ``cuda``), ``LENGTHGEN_THREADS`` (default 1)."""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Iterable

SCALES = ("smoke", "full")
#: scales a reproduction may run at: also ``paper`` (chapter 4's GPU run of the paper's protocol)
RUN_SCALES = SCALES + ("paper",)
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "float64")
CHAPTERS = ("ch0", "ch1", "ch2", "ch3", "ch4", "ch5")


class ConfigError(ValueError):
    """A bad configuration value (environment variable or argument)."""


# --------------------------------------------------------------------------- argument checks
def check_choice(name: str, value, choices: Iterable) -> str:
    """Return ``value`` if it is one of ``choices``; otherwise raise naming both."""
    choices = tuple(choices)
    if value not in choices:
        raise ConfigError(
            f"unknown {name} {value!r}; valid choices: {', '.join(map(str, choices))}"
        )
    return value


def check_positive_int(name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as int if it is an integer >= ``minimum``; otherwise raise."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_probability(name: str, value) -> float:
    """Return ``value`` as float if it lies in [0, 1]; otherwise raise."""
    if isinstance(value, bool) or not isinstance(value, Real) or not (0.0 <= float(value) <= 1.0):
        raise ConfigError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def nonempty(name: str, values) -> list:
    """``values`` as a list; a string, a scalar or an empty sequence is refused."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
        raise ConfigError(f"{name} must be a non-empty list, got {values!r}")
    return list(values)


def check_seeds(seeds, name: str = "seeds") -> list[int]:
    """``seeds`` as a non-empty list of integers >= 0 (the one seeds check at the public edges)."""
    seeds = nonempty(name, seeds)
    return [check_positive_int(f"{name}[{i}]", s, minimum=0) for i, s in enumerate(seeds)]


def check_finite(name: str, value, *, nonnegative: bool = False) -> float:
    """Return ``value`` as float if finite (and >= 0 when ``nonnegative``); otherwise raise."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    if nonnegative and value < 0:
        raise ConfigError(f"{name} must be >= 0, got {value!r}")
    return float(value)


# --------------------------------------------------------------------------- knobs
def _env(name: str, default: str) -> str:
    return os.environ.get(name, default).strip() or default


def get_scale(value: str | None = None) -> str:
    """The run scale: ``value`` if given, else ``$LENGTHGEN_SCALE``, else ``smoke``."""
    value = _env("LENGTHGEN_SCALE", "smoke") if value is None else value
    return check_choice("scale (LENGTHGEN_SCALE)", value, SCALES)


def get_run_scale(value: str | None = None) -> str:
    """The scale of a reproduction, as :func:`get_scale` but also ``paper`` (``reproduce`` only)."""
    value = _env("LENGTHGEN_SCALE", "smoke") if value is None else value
    return check_choice("scale", value, RUN_SCALES)


def get_device(value: str | None = None):
    """The torch device: ``value`` (a name or a ``torch.device``), else ``$LENGTHGEN_DEVICE``, else
    ``auto`` (CUDA when available); ``cuda`` without CUDA is an error, not a silent fallback."""
    import torch

    if not isinstance(value, torch.device):  # else an explicit one (e.g. cuda:1, or meta in tests)
        value = _env("LENGTHGEN_DEVICE", "auto") if value is None else value
        check_choice("device (LENGTHGEN_DEVICE)", value, DEVICES)
        if value == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        value = torch.device(value)
    if value.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {str(value)!r} was requested but torch sees no CUDA device; use 'cpu' or 'auto'"
        )
    return value


def get_dtype(value: str = "float64"):
    """The torch dtype named ``value`` (``float32`` or ``float64``)."""
    import torch

    return getattr(torch, check_choice("dtype", value, DTYPES))


@dataclass(frozen=True)
class RunConfig:
    """What :func:`setup` decided: scale, device, threads and the seed."""

    scale: str
    device: str
    threads: int
    seed: int


def setup(
    seed: int = 0,
    scale: str | None = None,
    device: str | None = None,
    threads: int | None = None,
    run: bool = False,
) -> RunConfig:
    """Configure a session (every chapter's first code cell): check the knobs, set CPU threads, seed
    Python's, NumPy's and torch's generators. ``run=True`` (``reproduce``) also accepts ``paper``."""
    import numpy as np
    import torch

    scale = get_run_scale(scale) if run else get_scale(scale)
    dev = get_device(device)
    if threads is None:  # a value that is not a whole number is named by the check below
        raw = os.environ.get("LENGTHGEN_THREADS", "1").strip()
        threads = int(raw) if raw.isdecimal() else raw
    threads = check_positive_int("threads (LENGTHGEN_THREADS)", threads)
    if dev.type == "cpu":
        torch.set_num_threads(threads)
    seed = check_positive_int("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return RunConfig(scale=scale, device=str(dev), threads=threads, seed=seed)

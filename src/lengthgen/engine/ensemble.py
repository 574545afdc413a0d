"""The ensemble's model interface: E members' parameters stacked along a leading member dimension
(pytrees of tensors); :mod:`lengthgen.engine.train` re-exports every public name here."""

from __future__ import annotations

from typing import Mapping, Sequence

import torch

from lengthgen.config import check_seeds


# --------------------------------------------------------------------------- pytrees of tensors
def _tree_map(fn, obj):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_tree_map(fn, o) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_tree_map(fn, o) for o in obj)
    if isinstance(obj, Mapping):
        return {k: _tree_map(fn, v) for k, v in obj.items()}
    return obj


def _tree_leaves(obj) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    _tree_map(lambda t: out.append(t) or t, obj)
    return out


def seeded_generators(seeds: Sequence[int], device="cpu") -> list[torch.Generator]:
    """One ``torch.Generator`` per seed (``manual_seed(seed)``): per-member init or data streams."""
    return [torch.Generator(device=device).manual_seed(s) for s in check_seeds(seeds)]


def members_of(params: Mapping[str, torch.Tensor]) -> int:
    """The ensemble size E of a params dict (checking every tensor has the same leading dim)."""
    if not isinstance(params, Mapping) or not params:
        raise ValueError(
            "params must be a non-empty dict of tensors with a leading member dimension"
        )
    sizes = {}
    for name, t in params.items():
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            raise ValueError(
                f"parameter {name!r} must be a tensor with a leading member dimension, got {type(t).__name__}"
                + (f" of shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) else "")
            )
        sizes[name] = int(t.shape[0])
    if len(set(sizes.values())) != 1:
        raise ValueError(f"parameters disagree on the number of members: {sizes}")
    return next(iter(sizes.values()))


def select_members(params: Mapping[str, torch.Tensor], index) -> dict[str, torch.Tensor]:
    """The sub-ensemble ``index`` (ints or a long tensor) of a params dict, as new tensors."""
    E = members_of(params)
    idx = torch.as_tensor(index, dtype=torch.long)
    if idx.dim() != 1 or (idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= E)):
        raise ValueError(f"member index must be a 1-D list of integers in [0, {E}), got {index!r}")
    return {k: v.detach().index_select(0, idx.to(v.device)).clone() for k, v in params.items()}


def _check_model(model) -> None:
    if not callable(getattr(model, "forward", None)):
        raise TypeError(f"model must have a forward(params, x) method; got {type(model).__name__}")


def _params_device(params) -> torch.device:
    devs = {t.device for t in params.values()}
    if len(devs) != 1:
        raise ValueError(f"parameters live on several devices: {sorted(map(str, devs))}")
    return devs.pop()

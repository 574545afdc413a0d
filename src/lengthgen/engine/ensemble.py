"""The ensemble's model interface, shared by the trainer and the chapters: E members' parameters
stacked along a leading member dimension, handled as pytrees of tensors.

* :func:`seeded_generators`, :func:`members_of`, :func:`select_members`: per-member generators,
  the ensemble size, a sub-ensemble;
* :class:`vmap_model`: an ordinary ``nn.Module`` factory as an ensemble model (``torch.func``);
* :func:`paired` and :class:`VariantModel`: several models with the same parameter names trained
  as one ensemble on identical initial tensors and batches.

:mod:`lengthgen.engine.train` (the trainer) re-exports every public name here.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch

from lengthgen.config import ConfigError, check_positive_int, check_seeds


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


def select_members(
    params: Mapping[str, torch.Tensor], index
) -> dict[str, torch.Tensor]:
    """The sub-ensemble ``index`` (ints or a long tensor) of a params dict, as new tensors."""
    E = members_of(params)
    idx = torch.as_tensor(index, dtype=torch.long)
    if idx.dim() != 1 or (idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= E)):
        raise ValueError(
            f"member index must be a 1-D list of integers in [0, {E}), got {index!r}"
        )
    return {
        k: v.detach().index_select(0, idx.to(v.device)).clone()
        for k, v in params.items()
    }


def _check_model(model) -> None:
    for meth in ("forward",):
        if not callable(getattr(model, meth, None)):
            raise TypeError(
                f"model must have a {meth}(params, x) method; got {type(model).__name__}"
            )


def _params_device(params) -> torch.device:
    devs = {t.device for t in params.values()}
    if len(devs) != 1:
        raise ValueError(
            f"parameters live on several devices: {sorted(map(str, devs))}"
        )
    return devs.pop()


# --------------------------------------------------------------------------- torch.func wrapper
class vmap_model:
    """Wrap an ``nn.Module`` factory into the ensemble model interface via ``torch.func``.

    ``init(seeds, dtype, device)`` builds one module per seed (the global RNG is forked and seeded
    with that seed, so the caller's RNG state is untouched) and stacks their parameters with
    ``torch.func.stack_module_state``; buffers are carried as ``_buffer.<name>`` constants.
    ``forward(params, x)`` runs ``torch.func.functional_call`` under ``torch.func.vmap`` over the
    member dimension of the parameters and of ``x`` (a tensor, or a tuple passed as ``*x``).
    Hand-batched einsum models are usually faster (see ``book/engine.md``).
    """

    def __init__(self, module_factory: Callable[[], torch.nn.Module]):
        if not callable(module_factory):
            raise ConfigError(
                f"module_factory must be a callable returning an nn.Module, got {module_factory!r}"
            )
        self.factory = module_factory
        self._base = None

    def _template(self, dtype, device):
        if self._base is None:
            import copy

            with torch.random.fork_rng(devices=[]):
                m = self.factory()
            if not isinstance(m, torch.nn.Module):
                raise TypeError(
                    f"module_factory must return an nn.Module, got {type(m).__name__}"
                )
            self._base = copy.deepcopy(m).to("meta")
        return self._base

    def init(
        self, seeds: Sequence[int], dtype=torch.float64, device=None
    ) -> dict[str, torch.Tensor]:
        seeds = check_seeds(seeds)
        dev = torch.device("cpu") if device is None else torch.device(device)
        mods = []
        for s in seeds:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(s))
                mods.append(self.factory().to(dtype))
        self._template(dtype, dev)
        params, buffers = torch.func.stack_module_state(mods)
        out = {k: v.detach().to(dev) for k, v in params.items()}
        out.update({f"_buffer.{k}": v.detach().to(dev) for k, v in buffers.items()})
        return out

    def forward(self, params: Mapping[str, torch.Tensor], x):
        base = self._base
        if base is None:
            raise RuntimeError(
                "call init(...) once before forward (it builds the module template)"
            )
        p = {k: v for k, v in params.items() if not k.startswith("_buffer.")}
        b = {
            k[len("_buffer.") :]: v
            for k, v in params.items()
            if k.startswith("_buffer.")
        }

        def one(p1, b1, x1):
            args = x1 if isinstance(x1, tuple) else (x1,)
            return torch.func.functional_call(base, (p1, b1), args)

        return torch.func.vmap(one, in_dims=(0, 0, 0))(
            p, b, tuple(x) if isinstance(x, list) else x
        )


# --------------------------------------------------------------------------- paired variants
def paired(
    params: Mapping[str, torch.Tensor], data_seeds: Sequence[int], variants: int = 2
):
    """Duplicate every member into ``variants`` copies that share initial tensors and batches.

    Returns ``(params, data_seeds)`` of size ``variants · E``: copy v of member e sits at index
    ``v·E + e``, starts from an identical clone of member e's tensors and gets the same data seed
    (so an identical stream of training batches). A ``_variant`` constant ``[variants·E]`` holds
    v; :class:`VariantModel` uses it to run each copy through its own model. This is how Zhu &
    Chiang pair A_pos with A_norm (D.2).
    """
    variants = check_positive_int("variants", variants)
    E = members_of(params)
    if len(data_seeds) != E:
        raise ConfigError(
            f"data_seeds has {len(data_seeds)} seeds but params have {E} members"
        )
    if "_variant" in params:
        raise ConfigError("params already carry a '_variant' constant (already paired)")
    out = {
        k: torch.cat([v.detach().clone() for _ in range(variants)])
        for k, v in params.items()
    }
    dev = _params_device(params)
    out["_variant"] = torch.arange(variants, device=dev).repeat_interleave(E)
    return out, [int(s) for s in data_seeds] * variants


class VariantModel:
    """Several models with the same parameter names trained as one ensemble.

    Member e runs through ``models[params["_variant"][e]]`` (see :func:`paired`); outputs are
    gathered back in member order. ``init`` delegates to the first model (paired variants share
    initial tensors).
    """

    def __init__(self, *models):
        if not models:
            raise ConfigError("VariantModel needs at least one model")
        for m in models:
            _check_model(m)
        self.models = models

    def init(self, seeds, dtype=torch.float64, device=None):
        return self.models[0].init(seeds, dtype, device)

    def forward(self, params, x):
        if "_variant" not in params:
            raise ValueError(
                "params lack the '_variant' constant; build them with lengthgen.engine.train.paired"
            )
        var = params["_variant"]
        if int(var.max()) >= len(self.models) or int(var.min()) < 0:
            raise ValueError(f"_variant values must lie in [0, {len(self.models)})")
        outs, order = [], []
        for v, m in enumerate(self.models):
            idx = (var == v).nonzero().flatten()
            if idx.numel() == 0:
                continue
            sub = {k: t.index_select(0, idx) for k, t in params.items()}
            xs = _tree_map(lambda t: t.index_select(0, idx.to(t.device)), x)
            outs.append(m.forward(sub, xs))
            order.append(idx)
        out = torch.cat(outs)
        perm = torch.cat(order)
        inv = torch.empty_like(perm)
        inv[perm] = torch.arange(perm.numel(), device=perm.device)
        return out.index_select(0, inv)

"""Batched optimizers for ensembles: Adam, AdamW, SGD and Muon (:class:`torch.optim.Muon` on every
matrix per member, AdamW on the rest, as Huang & Li do: chapter 4, App. B). Member e's update reads
only its own gradient, state and hyperparameters, so one batched step equals E ``torch.optim``
steps up to rounding (``tests/test_optim.py``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Mapping, Sequence

import torch

from lengthgen.config import ConfigError, check_choice, check_finite, check_positive_int, nonempty

OPTIMIZERS = ("adam", "adamw", "sgd", "muon")
NS_DTYPES = ("bfloat16", "float32", "float64")

#: torch.optim.Muon's Newton–Schulz coefficients (Keller Jordan's quintic) and norm floor.
MUON_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
MUON_NS_EPS = 1e-7


def _check_per_member(name: str, value):
    """A finite number >= 0 or a non-empty sequence of them (returned as float / tuple)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().tolist()
    if isinstance(value, Real) and not isinstance(value, bool):
        return check_finite(name, value, nonnegative=True)
    values = enumerate(nonempty(name, value))
    return tuple(check_finite(f"{name}[{i}]", v, nonnegative=True) for i, v in values)


@dataclass(frozen=True)
class OptimConfig:
    """How every member is optimised (``torch.optim``'s defaults, but weight decay 0); ``lr`` and
    ``weight_decay`` may be per-member sequences. ``decay`` names the decayed parameters (``None``:
    all); ``decay_members`` ``{name: E booleans}`` decays a parameter only for some members;
    ``clip`` is a per-member gradient-norm threshold. ``muon_params`` (``None``: every matrix but
    ``adamw_params``) are trained by Muon (Nesterov momentum, torch's "original" learning-rate
    adjustment), the rest by AdamW at the same ``lr``. SGD has no momentum (App. B.1.1)."""

    name: str = "adam"
    lr: float | Sequence[float] = 1e-3
    weight_decay: float | Sequence[float] = 0.0
    decay: Sequence[str] | None = None
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    clip: float | None = None
    muon_momentum: float = 0.95
    ns_steps: int = 5
    ns_dtype: str = "bfloat16"
    muon_params: Sequence[str] | None = None
    adamw_params: Sequence[str] = ()
    decay_members: Mapping[str, Sequence[bool]] | None = None

    def __post_init__(self):
        check_choice("optimizer", self.name, OPTIMIZERS)
        for attr in ("lr", "weight_decay"):
            object.__setattr__(self, attr, _check_per_member(attr, getattr(self, attr)))
        if len(self.betas) != 2:
            raise ConfigError(f"betas must be a pair (beta1, beta2), got {self.betas!r}")
        for i, b in enumerate(self.betas):
            if not check_finite(f"betas[{i}]", b, nonnegative=True) < 1:
                raise ConfigError(f"betas[{i}] must lie in [0, 1), got {b!r}")
        for attr in ("eps", "muon_momentum"):
            check_finite(attr, getattr(self, attr), nonnegative=True)
        if self.clip is not None and check_finite("clip", self.clip) <= 0:
            raise ConfigError(f"clip must be > 0 (or None for no clipping), got {self.clip!r}")
        if check_positive_int("ns_steps", self.ns_steps) >= 100:
            raise ConfigError(f"ns_steps must be < 100, got {self.ns_steps!r}")
        check_choice("ns_dtype", self.ns_dtype, NS_DTYPES)
        for attr in ("decay", "muon_params", "adamw_params"):
            if isinstance(val := getattr(self, attr), str):
                raise ConfigError(
                    f"{attr} must be a sequence of parameter names, got the string {val!r}"
                )
            if val is not None:
                object.__setattr__(self, attr, tuple(val))
        if self.decay_members is not None:
            clean = {str(n): tuple(f) for n, f in dict(self.decay_members).items()}
            for name, flags in clean.items():
                if not flags or not all(isinstance(f, bool) for f in flags):
                    raise ConfigError(f"decay_members[{name!r}] must be True/False, got {flags!r}")
            object.__setattr__(self, "decay_members", clean)

    def per_member(self, name: str, members: int) -> tuple[float, ...]:
        """The hyperparameter ``name`` (``lr`` or ``weight_decay``) as E values."""
        val = getattr(self, name)
        val = val if isinstance(val, tuple) else (float(val),) * members
        if len(val) != members:
            raise ConfigError(
                f"{name} has {len(val)} values but the ensemble has {members} members"
            )
        return val


# --------------------------------------------------------------------------- building blocks
def clip_grad_norm_(grads: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Clip member by member, in place, by :func:`torch.nn.utils.clip_grad_norm_`'s rule; returns
    the pre-clipping norms ``[E]``."""
    norms = sum(g.reshape(g.shape[0], -1).pow(2).sum(1) for g in grads).sqrt()
    coef = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))
    return norms


def zeropower_newton_schulz(
    G: torch.Tensor, steps: int = 5, dtype: torch.dtype = torch.bfloat16
) -> torch.Tensor:
    """Approximate orthogonalisation ``U Vᵀ`` of each matrix in ``G = [E, A, B]``:
    :class:`torch.optim.Muon`'s quintic Newton–Schulz iteration batched over members."""
    if G.dim() != 3:
        raise ValueError(f"expected a stack of matrices [E, A, B], got shape {tuple(G.shape)}")
    a, b, c = MUON_NS_COEFFICIENTS
    X = G.to(dtype)
    tall = G.size(1) > G.size(2)
    if tall:
        X = X.mT
    X = X / torch.linalg.vector_norm(X, dim=(-2, -1), keepdim=True).clamp(min=MUON_NS_EPS)
    for _ in range(steps):
        gram = X @ X.mT
        update = torch.baddbmm(gram, gram, gram, beta=b, alpha=c)
        X = torch.baddbmm(X, update, X, beta=a)
    if tall:
        X = X.mT
    return X


def _col(v, t: torch.Tensor):
    """A per-member tensor ``[E]`` shaped to broadcast against ``t [E, ...]`` (a float as is)."""
    return v.view(-1, *([1] * (t.dim() - 1))) if isinstance(v, torch.Tensor) else v


def _state(st: dict, p: torch.Tensor, keys=("exp_avg", "exp_avg_sq")) -> list[torch.Tensor]:
    """The state tensors ``keys`` of ``p`` in ``st`` (zeros at the first step): Adam's moments."""
    for k in keys:
        if k not in st:
            st[k] = torch.zeros_like(p)
    return [st[k] for k in keys]


class EnsembleOptimizer:
    """Per-member optimizer state for a dict of stacked parameters: ``step(params, grads)``
    updates ``params`` in place; ``select(index)`` keeps only the given members."""

    def __init__(self, config: OptimConfig, params: dict[str, torch.Tensor], names: Sequence[str]):
        self.config = config
        self.names = list(names)
        E = self.members = int(params[self.names[0]].shape[0])
        self.lr, wd = config.per_member("lr", E), config.per_member("weight_decay", E)
        for label in ("decay", "muon_params", "adamw_params", "decay_members"):
            for n in getattr(config, label) or ():
                if n not in params:
                    raise ValueError(
                        f"{label} names unknown parameter {n!r}; parameters: {', '.join(params)}"
                    )
        masks = dict(config.decay_members or {})
        for n, flags in masks.items():
            if len(flags) != E:
                raise ConfigError(
                    f"decay_members[{n!r}] has {len(flags)} flags but the ensemble has {E} members"
                )
        #: each parameter's weight decay per member: its decay_members flags, else ``decay``
        self.wd: dict[str, tuple[float, ...]] = {}
        for n in self.names:
            flags = masks.get(n) or [config.decay is None or n in config.decay] * E
            self.wd[n] = tuple(w if f else 0.0 for w, f in zip(wd, flags))
        self.muon = set()
        if config.name == "muon" and config.muon_params is None:
            self.muon = {n for n in self.names if params[n].dim() == 3} - set(config.adamw_params)
        elif config.name == "muon":
            self.muon = set(config.muon_params) & set(self.names)
            for n in sorted(self.muon, key=config.muon_params.index):
                if params[n].dim() != 3:
                    raise ValueError(
                        f"Muon needs a matrix per member ([E, out, in]); {n!r} has shape "
                        f"{tuple(params[n].shape)}"
                    )
                if n in config.adamw_params:
                    raise ValueError(f"{n!r} is listed in both muon_params and adamw_params")
        self.t = 0
        self._cache: dict = {}
        self.state: dict[str, dict[str, torch.Tensor]] = {n: {} for n in self.names}

    def select(self, index: torch.Tensor) -> None:
        """Keep members ``index`` (a 1-D long tensor), in that order, dropping the others' state."""
        idx = index.tolist()
        self.lr = tuple(self.lr[i] for i in idx)
        self.wd = {n: tuple(w[i] for i in idx) for n, w in self.wd.items()}
        for st in self.state.values():
            for k, v in st.items():
                st[k] = v.index_select(0, index.to(v.device))
        self.members = len(idx)
        self._cache.clear()

    def state_dict(self) -> dict:
        """The step count and every member's optimizer state, for a checkpoint."""
        state = {n: dict(st) for n, st in self.state.items()}
        return {"t": self.t, "members": self.members, "state": state}

    def load_state_dict(self, sd: Mapping) -> None:
        """Restore :meth:`state_dict` (same parameter names and member count, else ConfigError)."""
        if sd.get("members") != self.members or set(sd.get("state", {})) != set(self.state):
            raise ConfigError(
                f"optimizer checkpoint for {sd.get('members')} members and parameters "
                f"{sorted(sd.get('state', {}))} does not fit {self.members} members and "
                f"{sorted(self.state)}"
            )
        self.t = int(sd["t"])
        self.state = {n: dict(st) for n, st in sd["state"].items()}

    @torch.no_grad()
    def step(self, params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor]) -> None:
        name, decoupled = self.config.name, self.config.name != "adam"
        self.t += 1
        groups: dict = {}  # Adam-type parameters with scalar lr / wd: one foreach call per group
        for n in self.names:
            p, g, st = params[n], grads[n], self.state[n]
            if g is None:
                continue
            lr, wd = self._cached(self.lr, p), self._cached(self.wd[n], p)
            if name == "muon" and n in self.muon:
                self._muon(p, g, st, lr, wd)
            elif name == "sgd":
                self._sgd(p, g, lr, wd)
            elif isinstance(lr, torch.Tensor) or isinstance(wd, torch.Tensor):
                self._adam(p, g, st, lr, wd, decoupled=decoupled)
            else:
                groups.setdefault((lr, wd, decoupled, p.dtype, p.device), []).append((p, g, st))
        for (lr, wd, decoupled, _, _), items in groups.items():
            self._adam_foreach(items, lr, wd, decoupled)

    def _adam_foreach(self, items, lr: float, wd: float, decoupled: bool) -> None:
        """The same Adam/AdamW arithmetic as :meth:`_adam` with torch._foreach ops (fewer calls)."""
        b1, b2 = self.config.betas
        ps, gs = [p for p, _, _ in items], [g for _, g, _ in items]
        ms, vs = (list(m) for m in zip(*(_state(st, p) for p, _, st in items)))
        if wd != 0:
            if decoupled:
                torch._foreach_mul_(ps, 1 - lr * wd)
            else:
                gs = torch._foreach_add(gs, ps, alpha=wd)
        torch._foreach_lerp_(ms, gs, 1 - b1)
        torch._foreach_mul_(vs, b2)
        torch._foreach_addcmul_(vs, gs, gs, 1 - b2)
        bc1 = 1 - b1**self.t
        bc2_sqrt = math.sqrt(1 - b2**self.t)
        denom = torch._foreach_sqrt(vs)
        torch._foreach_div_(denom, bc2_sqrt)
        torch._foreach_add_(denom, self.config.eps)
        torch._foreach_addcdiv_(ps, ms, denom, -(lr / bc1))

    def _cached(self, vals: tuple[float, ...], like: torch.Tensor):
        """E values as a Python float when all equal (bitwise like torch.optim), else a tensor
        [E] on ``like``'s dtype and device (cached)."""
        if (key := (vals, like.dtype, like.device)) not in self._cache:
            same = all(v == vals[0] for v in vals)
            self._cache[key] = (
                float(vals[0]) if same else torch.tensor(vals, dtype=like.dtype, device=like.device)
            )
        return self._cache[key]

    @staticmethod
    def _nonzero(v) -> bool:
        return bool((v != 0).any()) if isinstance(v, torch.Tensor) else v != 0

    def _coupled_decay(self, g, p, wd):
        """``g + wd · p`` (L2 decay through the gradient, as Adam and SGD do)."""
        if not self._nonzero(wd):
            return g
        return g.add(p * _col(wd, p)) if isinstance(wd, torch.Tensor) else g.add(p, alpha=wd)

    def _adam(self, p, g, st, lr, wd, *, decoupled: bool) -> None:
        """torch.optim.Adam / AdamW (single-tensor path), member-wise."""
        b1, b2 = self.config.betas
        if decoupled:
            if self._nonzero(wd):
                p.mul_(1 - _col(lr, p) * _col(wd, p))
        else:
            g = self._coupled_decay(g, p, wd)
        m, v = _state(st, p)
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        bc1 = 1 - b1**self.t
        bc2_sqrt = math.sqrt(1 - b2**self.t)
        denom = (v.sqrt() / bc2_sqrt).add_(self.config.eps)
        if isinstance(lr, torch.Tensor):
            p.sub_(_col(lr / bc1, p) * (m / denom))
        else:
            p.addcdiv_(m, denom, value=-(lr / bc1))

    def _sgd(self, p, g, lr, wd) -> None:
        """torch.optim.SGD without momentum, member-wise."""
        g = self._coupled_decay(g, p, wd)
        if isinstance(lr, torch.Tensor):
            p.sub_(_col(lr, p) * g)
        else:
            p.add_(g, alpha=-lr)

    def _muon(self, p, g, st, lr, wd) -> None:
        """torch.optim.Muon, batched: momentum, Newton–Schulz per member, decoupled decay."""
        cfg = self.config
        (buf,) = _state(st, g, ("momentum_buffer",))
        buf.lerp_(g, 1 - cfg.muon_momentum)
        update = g.lerp(buf, cfg.muon_momentum)  # Nesterov
        O = zeropower_newton_schulz(update, cfg.ns_steps, getattr(torch, cfg.ns_dtype))
        ratio = math.sqrt(max(1, p.shape[1] / p.shape[2]))  # torch's "original" adjust_lr
        if isinstance(lr, torch.Tensor) or isinstance(wd, torch.Tensor):
            lr_t = torch.as_tensor(lr, dtype=p.dtype, device=p.device).expand(p.shape[0])
            p.mul_(1 - _col(lr_t, p) * _col(wd, p))
            p.sub_(_col(lr_t * ratio, p) * O.to(p.dtype))
        else:
            p.mul_(1 - lr * wd)
            p.add_(O, alpha=-(lr * ratio))

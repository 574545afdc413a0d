"""Chapter 4's paper-scale run (:mod:`lengthgen.chapters.ch4.paper_scale`): one training update of
the whole ensemble, run eagerly (:class:`PaperStep`) or captured once as a CUDA graph and replayed
(:class:`CapturedStep`, with the :class:`CapturableOptimizer`)."""

from __future__ import annotations

import time

import torch

from lengthgen.chapters.ch4.training import masked_loss
from lengthgen.config import ConfigError, check_positive_int
from lengthgen.engine.optim import EnsembleOptimizer


class CapturableOptimizer(EnsembleOptimizer):
    """:class:`EnsembleOptimizer` whose step has no host value that changes between updates, so a
    CUDA graph can capture it: AdamW's bias corrections (on ``b``) come from an update count kept
    on the device (equal to the parent to float32 tolerance, not bit for bit); Muon runs the
    parent's code. A replay does not run Python, so the replayer adds one to the host count
    :attr:`t` per replay (:meth:`PaperStep.after_replay`); :meth:`check_counter` compares the two.
    """

    _t_dev: torch.Tensor | None = None

    def step(self, params, grads) -> None:
        dev = params[self.names[0]].device
        if self._t_dev is None or self._t_dev.device != dev:
            self._t_dev = torch.full((), float(self.t), dtype=torch.float64, device=dev)
        with torch.no_grad():
            self._t_dev.add_(1)
        super().step(params, grads)

    def load_state_dict(self, sd) -> None:
        super().load_state_dict(sd)
        self._t_dev = None  # rebuilt from the restored host count at the next step

    def check_counter(self) -> None:
        """Raise RuntimeError when the device update count differs from the host's :attr:`t`
        (synchronises; called at checkpoints, not per update)."""
        if self._t_dev is not None and int(self._t_dev.item()) != self.t:
            raise RuntimeError(
                f"optimizer update count on the device is {int(self._t_dev.item())}, "
                f"on the host {self.t}: a replay was not counted"
            )

    def _adam_foreach(self, items, lr: float, wd: float, decoupled: bool) -> None:
        """AdamW/Adam with the bias corrections from the device count (class docstring)."""
        b1, b2 = self.config.betas
        t = self._t_dev
        bc1 = 1 - torch.pow(b1, t)
        bc2_sqrt = torch.sqrt(1 - torch.pow(b2, t))
        step_size = lr / bc1
        for p, g, st in items:
            if "exp_avg" not in st:
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            if wd != 0:
                if decoupled:
                    p.mul_(1 - lr * wd)
                else:
                    g = g.add(p, alpha=wd)
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / bc2_sqrt.to(v.dtype)).add_(self.config.eps)
            p.sub_(step_size.to(p.dtype) * m / denom)


class PaperStep:
    """One training update of the whole ensemble (batch, masked cross-entropy, gradients, bias mask,
    optimizer, loss sum), called by the eager loop and captured by :class:`CapturedStep`. Every
    tensor kept across updates is one of :meth:`buffers`, updated in place (a graph replay needs
    that); the caller does the epoch reshuffle (:meth:`DeviceLengthSampler.reshuffle`).
    """

    NAMES = ("W", "V", "b")

    def __init__(self, model, sampler, opt, params: dict, loss_sum: torch.Tensor):
        self.model, self.sampler, self.opt = model, sampler, opt
        self.params, self.loss_sum = params, loss_sum

    def __call__(self) -> None:
        names = self.NAMES
        x, y = self.sampler.batch()
        P = {n: self.params[n].detach().requires_grad_(True) for n in names}
        lvec = masked_loss(self.model.forward(P, x), y)
        grads = dict(zip(names, torch.autograd.grad(lvec.sum(), [P[n] for n in names])))
        self.model.mask_grads(grads)
        self.opt.step(self.params, grads)
        self.loss_sum += lvec.detach().double()

    def after_replay(self) -> None:
        """The host-side effect of one update that a graph replay skips: the optimizer's count."""
        self.opt.t += 1

    def buffers(self) -> dict[str, torch.Tensor]:
        """Every tensor the step carries from one update to the next, by name."""
        out = {f"params.{n}": t for n, t in self.params.items()}
        out |= {f"opt.{n}.{k}": v for n, st in self.opt.state.items() for k, v in st.items()}
        if getattr(self.opt, "_t_dev", None) is not None:
            out["opt.t"] = self.opt._t_dev
        out |= {"sampler.perm": self.sampler.perm, "sampler.k": self.sampler.k}
        return out | {"loss_sum": self.loss_sum}


def graph_unavailable_reason(device) -> str | None:
    """Why the captured step cannot run on ``device`` (one line), or ``None`` when it can: CUDA
    graphs need a CUDA device and a torch built with CUDA that sees one."""
    dev = torch.device(device)
    if dev.type != "cuda":
        return f"CUDA graphs need a CUDA device, this run is on {dev.type}"
    if not torch.cuda.is_available():
        return "CUDA graphs need a CUDA device, and torch sees none"
    return None


class CapturedStep:
    """A :class:`PaperStep` run through one CUDA-graph capture: ``warmup`` eager calls on a side
    stream (real updates that set up cuBLAS and the optimizer's state), then one capture and a
    replay per call (each followed by :meth:`PaperStep.after_replay`). Raises ConfigError (one
    line, :func:`graph_unavailable_reason`) off CUDA.
    """

    def __init__(self, step: PaperStep, warmup: int = 3):
        if not isinstance(step, PaperStep):
            raise ConfigError(f"CapturedStep needs a PaperStep, got {type(step).__name__}")
        if not isinstance(step.opt, CapturableOptimizer):
            raise ConfigError(
                "CapturedStep needs the PaperStep built with a CapturableOptimizer "
                "(VariantMLP.optimizer(..., capturable=True))"
            )
        why = graph_unavailable_reason(step.params["W"].device)
        if why is not None:
            raise ConfigError(f"cannot capture the step: {why}")
        self.step = step
        self.warmup = check_positive_int("warmup", warmup)
        self.calls, self.graph, self.capture_s = 0, None, None

    def __call__(self) -> None:
        if self.graph is not None:
            self.graph.replay()
            self.step.after_replay()
        elif self.calls < self.warmup:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.step()
            torch.cuda.current_stream().wait_stream(side)
        else:
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.step()  # recorded, not executed: its host effects count for this update
            g.replay()
            torch.cuda.synchronize()
            self.graph, self.capture_s = g, time.perf_counter() - t0
        self.calls += 1

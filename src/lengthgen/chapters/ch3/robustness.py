"""Chapter 3's robustness studies (details page): App. G's training lengths, App. H's RoPE
frequency sweep and induction, App. F's larger model; each trained cell is one ensemble
(:func:`train_seeds`); :mod:`.measures` reads the stored cells."""

from __future__ import annotations

import torch

from lengthgen.chapters.ch3 import paper
from lengthgen.chapters.ch3.paper import MAIN_TASKS, STUDY
from lengthgen.chapters.ch3.realizability import fit_ce, simulate
from lengthgen.chapters.ch3.training import train_groups
from lengthgen.config import check_finite
from lengthgen.engine.runs import Cell
from lengthgen.nn.positional import ENCODINGS, KernelFamily, frequencies

#: App. G: the 1L1H study at other training lengths (3 seeds, evaluated at 3·L0); L0 = 20 is
#: the main study's seeds 0–2 (the same protocol), so only 10 and 40 are trained here.
APP_G = {"L0s": (10, 20, 40), "trained": (10, 40), "seeds": (0, 1, 2)}
#: App. H, Table 10: RoPE frequency scales on skip-3 (1L1H, the main study's 5 seeds). 0.03 and
#: 0.01 are the paper's; 1 (standard), 0.3 and 0.1 ("moderately low") are our reading of the rest.
ROPE_SCALES = (1.0, 0.3, 0.1, 0.03, 0.01)
#: App. F: vocabulary 64, d = 128, the paper's 2 seeds; the 1L1H tier (the 2L4H tier is not run).
APP_F = {"vocab": 64, "d_model": 128, "seeds": (0, 1), "tier": "1L1H"}
#: App. H, Table 9: induction at one and two layers; 3 seeds (ours), LG at L = 60 (ours).
INDUCTION = {"tiers": ("1L1H", "2L4H"), "seeds": (0, 1, 2)}
#: Planned cells not stored yet (``reproduce ch3 --scale full`` stores them; their claims are then
#: checked): App. G at L0 = 40, over 20 CPU-minutes per ensemble (5); App. F, about 13 each.
NOT_RUN: frozenset = frozenset(n for e in ENCODINGS for n in (f"appG__L0_40__{e}", f"appF__{e}"))
#: App. G's training lengths that are measured: those whose cells are all stored.
APP_G_MEASURED = tuple(
    L0 for L0 in APP_G["L0s"] if not {f"appG__L0_{L0}__{e}" for e in ENCODINGS} & NOT_RUN
)


def train_seeds(tier, encoding, tasks, seeds, *, setting: dict, **protocol) -> list[dict]:
    """Train ``tasks`` × ``seeds`` as one ensemble, its rows tagged with ``setting``."""
    rows = train_groups(tier, encoding, [(tasks, s) for s in seeds], **protocol)
    return [{**r, **setting} for g in rows for r in g]


def _cell(name, tier, enc, tasks, seeds, **over) -> Cell:
    """A trained cell of App. C's protocol (:data:`paper.STUDY`), ``over`` changed (and tagged)."""
    kw = {"tier": tier, "encoding": enc, "tasks": list(tasks), "seeds": list(seeds)}
    kw |= {k: STUDY[k] for k in ("steps", "batch", "lr", "weight_decay", "eval_n", "train_eval_n")}
    kw |= {"L0": paper.L0, "lengths": list(STUDY["lengths"])} | over
    tag = {k: over[k] for k in ("L0", "rope_scale", "vocab") if k in over}
    return Cell(name, train_seeds, kw | {"setting": tag}, seeds=seeds)


def cells() -> list[Cell]:
    """The robustness cells of the full-scale plan, cheapest first."""
    G, F, I = APP_G["seeds"], APP_F, INDUCTION
    app_g = lambda L0: [
        _cell(f"appG__L0_{L0}__{e}", "1L1H", e, MAIN_TASKS, G, L0=L0, lengths=[3 * L0])
        for e in ENCODINGS
    ]
    sweep = [
        _cell(f"appH__rope_scale_{s:g}", "1L1H", "rope", ("skip3",), paper.SEEDS, rope_scale=s)
        for s in ROPE_SCALES
    ]
    ind = [
        _cell(f"appH__induction__{t}__{e}", t, e, ("induction",), I["seeds"], lengths=[60])
        for t in I["tiers"]
        for e in ENCODINGS
    ]
    size = {"vocab": F["vocab"], "d_model": F["d_model"]}
    big = [_cell(f"appF__{e}", F["tier"], e, MAIN_TASKS, F["seeds"], **size) for e in ENCODINGS]
    return [Cell("robustness_alpha", alpha_cell, {}), *app_g(10), *sweep, *ind, *app_g(40), *big]


class ScaledRope(KernelFamily):
    """RoPE's kernel family with every frequency multiplied by ``scale`` (App. H's sweep)."""

    def __init__(self, scale: float, **kw):
        self.scale = check_finite("scale", scale)  # before the base class sizes the features
        super().__init__("rope", **kw)

    def features(self, n: int, dtype=torch.float64) -> torch.Tensor:
        theta = self.scale * frequencies(self.num_freq, self.base)
        ang = torch.arange(n, dtype=torch.float64)[:, None] * theta
        return torch.stack([ang.cos(), ang.sin()], 2).reshape(n, -1).to(dtype)


def alpha_cell() -> dict:
    """α_L (CE) of App. G ``{L0: {"enc/task": α at 3·L0}}`` and App. H ``{scale: {L: α}}``."""
    appG = {
        str(L0): {
            f"{e}/{t}": simulate(fit_ce(fam, t, L0, **paper.CE_FIT), fam, t, 3 * L0, L0).alpha
            for e in ENCODINGS
            for fam in [KernelFamily(e, L0=L0)]
            for t in MAIN_TASKS
        }
        for L0 in APP_G["L0s"]
    }
    scaled = {}
    for s in ROPE_SCALES:
        fam = ScaledRope(s)
        W = fit_ce(fam, "skip3", paper.L0, **paper.CE_FIT)
        scaled[f"{s:g}"] = {str(L): simulate(W, fam, "skip3", L).alpha for L in STUDY["lengths"]}
    return {"appG": appG, "rope_scale": scaled}

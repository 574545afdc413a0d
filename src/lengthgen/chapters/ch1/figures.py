"""Chapter 1's explorer frames (section "Explorer" of ``notebooks/01_log_scaled_attention``): the
CLS token's last-layer attention and the output logits of a FIRST transformer, with standard and
with log-length scaled attention."""

from __future__ import annotations

import numpy as np
import torch

from lengthgen import plotting
from lengthgen.chapters.ch1 import constructions as C
from lengthgen.config import check_choice, check_positive_int
from lengthgen.nn.tasks import random_strings

#: The two models of the explorer: the exact two-layer FIRST construction and the one-layer one.
EXPLORER_MODELS = ("exact two-layer FIRST", "one-layer FIRST")


def explorer_frame(n: int = 100, model: str = EXPLORER_MODELS[0], seed: int = 0):
    """One explorer frame: a random length-``n`` string and it with w₁ flipped, read by ``model``
    (c = 2), standard vs log-scaled: last-layer CLS attention by position (left), logits (right)."""
    n = check_positive_int("n", int(n))
    check_choice("model", model, EXPLORER_MODELS)
    build = C.first if model == EXPLORER_MODELS[0] else C.first_log_scaled
    bits = random_strings(1, n, generator=torch.Generator().manual_seed(int(seed)))
    both = torch.cat([bits, bits])
    both[1, 0] = 1 - bits[0, 0]
    fig, (ax0, ax1) = plotting.figure(1, 2, width=3.4, height=2.8)
    logits = {}
    for scaled, col in ((False, plotting.PALETTE[0]), (True, plotting.PALETTE[1])):
        enc, p = build(c=2.0, log_scaled=scaled)  # c = 2: the default of first_log_scaled
        tr = enc.trace(p, both)
        lab = "× log N" if scaled else "standard"
        att = tr["attention"][-1][0, 0, 0].numpy()
        ax0.plot(range(n + 1), att, ".", ms=3, color=col, label=lab)
        logits[lab] = tr["logit"][0].numpy()
    ax0.set(yscale="log", xlabel="position i (0 = CLS)", ylabel="CLS attention weight")
    ax0.legend(loc="best", markerscale=3)
    x = np.arange(2)
    for j, (lab, v) in enumerate(logits.items()):
        ax1.bar(x + 0.38 * j, v, width=0.36, label=lab, color=plotting.PALETTE[j])
    ax1.axhline(0, color="k", lw=0.8)
    ticks = [f"w₁ = {int(both[0, 0])}", f"w₁ = {int(both[1, 0])}"]
    ax1.set(xticks=x + 0.19, xticklabels=ticks, xlabel=f"string of length n = {n}")
    ax1.set_ylabel("output logit s (> 0: accept)")
    fig.suptitle(f"{model} (c = 2)", fontsize=11)
    return plotting.finish(fig)

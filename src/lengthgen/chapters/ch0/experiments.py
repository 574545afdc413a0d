"""Chapter 0 (attention dilution): the numeric check of eqs. 1–2 on a grid of N up to 10^5, the
chapter's one stored cell ``dilution_grid`` (section "The stored run"), the same at every scale."""

from __future__ import annotations

import itertools

from lengthgen.chapters.ch0.dilution import favoured_weight, softmax_weight
from lengthgen.engine.runs import Cell

#: Advantages and lengths of the chapter's table; scale-independent, so smoke == full.
C_VALUES = (0.5, 1.0, 2.0, 4.0)
N_VALUES = (1, 2, 10, 100, 1_000, 10_000, 100_000)

#: What a stored dilution grid holds (:func:`lengthgen.store.validate`; the same at every scale).
GRID_SCHEMA = "rows.*.(c|N|log_scaled) max_abs_error rows.*.(softmax|closed_form):p"
GRID_SCHEMA += " rows=2*c_values*n_values"


def schema(name: str, scale: str = "full") -> str | None:
    """What stored cell ``name`` must hold."""
    return GRID_SCHEMA if name == "dilution_grid" else None


def dilution_grid(c_values=C_VALUES, n_values=N_VALUES) -> dict:
    """Numeric (torch.softmax) and closed-form favoured weights on the (c, N) grid, both scalings
    (chapter 0, "The weight of the favoured position")."""
    rows = [
        {
            "log_scaled": scaled,
            "c": c,
            "N": n,
            "softmax": softmax_weight(c, n, log_scaled=scaled),
            "closed_form": float(favoured_weight(c, n, log_scaled=scaled)),
        }
        for scaled, c, n in itertools.product((False, True), c_values, n_values)
    ]
    err = max(abs(r["softmax"] - r["closed_form"]) for r in rows)
    return {"rows": rows, "max_abs_error": err}


def cells(scale: str) -> list[Cell]:
    """The chapter's reproduction plan: one cell, the same at both scales."""
    kw = {"c_values": list(C_VALUES), "n_values": list(N_VALUES)}
    return [Cell("dilution_grid", dilution_grid, kw)]

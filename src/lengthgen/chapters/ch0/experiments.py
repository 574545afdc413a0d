"""Chapter 0 (attention dilution): the numeric check of eqs. 1–2 on a grid of N up to 10^5."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from lengthgen.chapters.ch0.dilution import favoured_weight, softmax_weight
from lengthgen.store import provenance, save_result

#: Advantages and lengths of the chapter's table; scale-independent, so smoke == full.
C_VALUES = (0.5, 1.0, 2.0, 4.0)
N_VALUES = (1, 2, 10, 100, 1_000, 10_000, 100_000)


def dilution_grid(c_values=C_VALUES, n_values=N_VALUES) -> dict:
    """Numeric (torch.softmax) and closed-form favoured weights on the (c, N) grid, both scalings."""
    rows = []
    for log_scaled in (False, True):
        for c in c_values:
            for n in n_values:
                rows.append({"log_scaled": log_scaled, "c": c, "N": n,
                             "softmax": softmax_weight(c, n, log_scaled=log_scaled),
                             "closed_form": float(favoured_weight(c, n, log_scaled=log_scaled))})
    err = max(abs(r["softmax"] - r["closed_form"]) for r in rows)
    return {"rows": rows, "max_abs_error": err}


def reproduce(scale: str, device: str, out: Path) -> list[Path]:
    t0 = time.perf_counter()
    data = dilution_grid()
    prov = provenance(scale=scale, device=device, wall_time_s=time.perf_counter() - t0)
    return [save_result(Path(out) / "dilution_grid.json", data, prov)]

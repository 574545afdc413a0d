"""Chapter 5's runs (the same at both scales) and the declaration of their stored cells
(:data:`SCHEMAS`). The plan (:func:`cells`): the volume-theory cells (:mod:`.volume_beta`), the
Parity cells (:mod:`.parity`), the softmax-mass cells below, then :mod:`.sum_sine` and
:mod:`.mass_more`.
"""

from __future__ import annotations

import math

from lengthgen.chapters.ch2 import paper as ch2_paper
from lengthgen.chapters.ch2.experiments import FULL, VOLUME_SCHEMA
from lengthgen.chapters.ch2.volume import uniform_box
from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.chapters.ch5 import mass, mass_more, sum_sine
from lengthgen.chapters.ch5 import parity as pa
from lengthgen.chapters.ch5 import volume_beta as vb
from lengthgen.chapters.ch5 import volume_claims as vc
from lengthgen.chapters.ch5.claims import DOUBLING_N, MASS_L0, MASS_LENGTHS, NEAR_ONE_C, SCALED_C
from lengthgen.chapters.ch5.claims import SINE_B, SUMMING_ALL, SUMMING_N
from lengthgen.chapters.ch5.sum_sine import ETAS, TRAIN_VARIANTS, train_cell_name, volume_cell_name
from lengthgen.config import ConfigError, check_finite
from lengthgen.engine.runs import Cell
from lengthgen.nn.positional import ENCODINGS
from lengthgen.store import Schema

#: A_gen points of the doubling check: classifier width, box half-width, sample size, seed
DOUBLING_POINTS = {"h": 4, "B": 1.0, "samples": 10_000, "seed": 0}


def parity_doubling(ns=DOUBLING_N) -> dict:
    """:func:`.parity.doubling_gap` for both attention scales at each n in ``ns``."""
    pts = dict(DOUBLING_POINTS)
    P = uniform_box("gen", *(pts[k] for k in ("h", "B", "samples", "seed")))
    rows = [
        {"beta": beta, "n": int(n), **pa.doubling_gap(P, int(n), beta)}
        for beta in ("one", "log")
        for n in ns
    ]
    return {"rows": rows, "points": pts}


def averaging_sine(Bs=SINE_B, past: int = 3) -> dict:
    """The searched largest exact length for each B (lengths 1 … bound + ``past``)."""
    rows = []
    for B in Bs:
        bound = pa.averaging_sine_bound(B)
        found, to = pa.largest_exact_n(B, bound + past), bound + past
        rows.append({"B": float(B), "bound": bound, "largest_exact_n": found, "searched_to": to})
    return {"rows": rows}


def summing(n_max=SUMMING_N, all_lengths=SUMMING_ALL) -> dict:
    return pa.summing_check(n_max, all_lengths=all_lengths)


def mass_tables(lengths=None, encodings=None, tasks=None) -> dict:
    """:func:`.mass.mass_alignment` of chapter 3's CE-fitted kernels, every encoding and task."""
    rows = []
    for e in encodings or ENCODINGS:
        for t in tasks or rz.TASKS:
            fam, W = rz.select(e, t, "ce", L0=MASS_L0)
            for L in lengths or MASS_LENGTHS:
                got = mass.mass_alignment(W, fam, t, L, MASS_L0)
                rows.append({"encoding": e, "task": t, **got})
    return {"rows": rows}


def _c_of(W, task) -> float:
    """c = m / log L0 of a learned table (:func:`.mass.clamped_margin`)."""
    return mass.clamped_margin(W, task, MASS_L0) / math.log(MASS_L0)


def mass_clamped(lengths=None) -> dict:
    """The learned tables on first, pos2, pos5: α^{½} next to our closed form, both scales."""
    rows = []
    for t in mass.FIXED_TARGET:
        fam, W = rz.select("learned_abs", t, "ce", L0=MASS_L0)
        m = mass.clamped_margin(W, t, MASS_L0)
        for L in lengths or MASS_LENGTHS:
            got = mass.mass_alignment(W, fam, t, L, MASS_L0)
            for k in mass.SCALES:
                closed = mass.first_clamped_half(W, t, L, MASS_L0, k)
                row = {"task": t, "L": int(L), "scale": k, "m": m, "c": _c_of(W, t)}
                rows.append(row | {"alpha_half": got[f"alpha_half_{k}"], "closed_form": closed})
    return {"rows": rows}


def mass_scaled(targets=None, lengths=None) -> dict:
    """Each learned table on first, pos2, pos5 scaled to c = m / log L0 in ``targets``: α^{½} with
    both scales next to our closed form with the log factor."""
    targets = [check_finite("c'", c, nonnegative=True) for c in (targets or SCALED_C)]
    if not all(c > 0 for c in targets):
        raise ConfigError(f"every target c' must be > 0, got {targets}")
    rows = []
    for t in mass.FIXED_TARGET:
        fam, W = rz.select("learned_abs", t, "ce", L0=MASS_L0)
        c = _c_of(W, t)
        for target in targets:
            Ws = W * (target / c)
            for L in lengths or MASS_LENGTHS:
                got = mass.mass_alignment(Ws, fam, t, L, MASS_L0)
                row = {"task": t, "c_fit": c, "c": _c_of(Ws, t), "L": int(L)}
                row |= {k: got[k] for k in ("alpha", "alpha_half_none", "alpha_half_log")}
                row["closed_form_log"] = mass.first_clamped_half(Ws, t, L, MASS_L0, "log")
                rows.append(row)
    return {"rows": rows}


def cells(scale: str) -> list[Cell]:
    return (
        vb.cells(scale)
        + [
            Cell("parity_doubling", parity_doubling, {"ns": list(DOUBLING_N)}),
            Cell("averaging_sine", averaging_sine, {"Bs": list(SINE_B), "past": 3}),
            Cell("summing", summing, {"n_max": SUMMING_N, "all_lengths": SUMMING_ALL}),
            Cell("mass_tables", mass_tables, {}),
            Cell("mass_clamped", mass_clamped, {}),
            Cell("mass_scaled", mass_scaled, {}),
            Cell(
                "mass_scaled_near_one",
                mass_scaled,
                {"targets": list(NEAR_ONE_C), "lengths": [max(MASS_LENGTHS)]},
            ),
        ]
        + sum_sine.cells(scale)
        + mass_more.cells(scale)
    )


def _s(kind, required, probabilities="", counts=()) -> Schema:
    """A :class:`lengthgen.store.Schema` from space-separated paths."""
    return Schema(f"ch5 {kind}", tuple(required.split()), tuple(probabilities.split()), counts)


def _rows(kind, required, probabilities="", count=None) -> Schema:
    """:func:`_s` with every path under ``rows.*`` and, with ``count(data)``, that many rows."""
    under = " ".join(f"rows.*.{p}" for p in required.split())
    probs = " ".join(f"rows.*.{p}" for p in probabilities.split())
    return _s(kind, under, probs, (("rows", count),) if count else ())


def _train_schema(exp: str) -> Schema:
    """A paired training cell of chapter 2's ``exp``."""
    n = len(FULL["seeds"]) * len(ch2_paper.STORED_NS[exp]) * 2  # × 2 scales
    return _s(
        f"training under both scales ({exp})",
        "members.*.variant members.*.N members.*.seed members.*.beta members.*.test",
        "members.*.test.* members.*.best_val_acc",
        (("members", lambda d: n * len(d["variants"])),),
    )


_ALPHAS = "alpha alpha_half_none alpha_half_log"
_SCALED = "task c L alpha_half_log"
#: every full-scale cell's schema, by name
SCHEMAS: dict[str, Schema] = {
    "beta_closed_forms": _s(
        "closed forms under both scales",
        "area.*.n area.*.area_log area.*.area_one area.*.ratio eta_star.first "
        "eta_star.index center_one.*.exact_above center_one.*.paper_eta_largest_n "
        "majority_center_failures",
        counts=(("area", lambda d: len(vc.AREA_NS)), ("center_one", lambda d: 4)),
    ),
    "beta_volume_log": VOLUME_SCHEMA,
    "beta_volume_one": VOLUME_SCHEMA,
    "beta_majority_box": _rows(
        "Majority raw-box volume under both scales",
        "n exact_log exact_one samples",
        "fraction_log fraction_one",
        lambda d: len(vc.BOX_NS),
    ),
    **{f"beta_train_{e}": _train_schema(e) for e in vb.TRAIN_EXPERIMENTS},
    "parity_doubling": _rows(
        "parity doubling",
        "beta n max_abs_output max_logit_error",
        count=lambda d: 2 * len(DOUBLING_N),
    ),
    "averaging_sine": _rows(
        "averaging + sine search", "B bound largest_exact_n", count=lambda d: len(SINE_B)
    ),
    "summing": _s("summing + sine", "errors errors_all_lengths weight_on_zeros min_margin"),
    "mass_tables": _rows("softmax mass tables", "encoding task L alpha alpha_log", _ALPHAS),
    "mass_clamped": _rows("clamped closed form", "task L scale c closed_form"),
    "mass_scaled": _rows("scaled learned tables", _SCALED, _ALPHAS),
    "mass_scaled_near_one": _rows(
        "learned tables scaled to c near 1",
        _SCALED,
        _ALPHAS,
        lambda d: len(mass.FIXED_TARGET) * len(NEAR_ONE_C),
    ),
    **{
        f"joint_{k.replace('/', '_')}": _rows(
            "joint exactness at N and 10N + 1",
            "N L samples exact_log exact_one one_not_log",
            "fraction_log fraction_one",
            lambda d, k=k: len(vc.JOINT[k][0]),
        )
        for k in vc.JOINT
    },
    **{
        volume_cell_name(eta): _s(
            "summing + sine volume",
            "rows.*.n rows.*.kind rows.*.fraction rows.*.lo rows.*.hi plain.*.fraction",
        )
        for eta in ETAS
    },
    **{
        train_cell_name(a, b): _rows(
            "summing + sine training", "acc first_failure seed", "acc.* train_acc"
        )
        for a, b in TRAIN_VARIANTS
    },
    "mass_refit": _s(
        "per-row log refit",
        "rows.*.encoding rows.*.task rows.*.L fits.*.norm",
        "rows.*.alpha rows.*.alpha_half",
    ),
    "mass_far": _rows(
        "RoPE far lengths",
        "task S4 far.*.alpha far.*.exceed",
        "far.*.alpha",
        lambda d: len(rz.TASKS),
    ),
}


def schema(name: str, scale: str = "full") -> Schema | None:
    """The schema of the full-scale cell ``name`` (smoke cells are not checked: ``None``)."""
    return SCHEMAS.get(name) if scale == "full" else None

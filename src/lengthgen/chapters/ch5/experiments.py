"""Chapter 5's runs, the same at both scales (the plan: :func:`cells`), and the one declaration
of their stored cells (:data:`SCHEMAS`): the Parity cells (:mod:`.parity`) and the softmax-mass
cells here, then those of :mod:`.volume_beta`, :mod:`.sum_sine` and :mod:`.mass`."""

from __future__ import annotations

import math

from lengthgen.chapters.ch2.experiments import VOLUME_SCHEMA
from lengthgen.chapters.ch2.volume import uniform_box
from lengthgen.chapters.ch3 import realizability as rz
from lengthgen.chapters.ch5 import mass, sum_sine
from lengthgen.chapters.ch5 import parity as pa
from lengthgen.chapters.ch5 import volume_beta as vb
from lengthgen.chapters.ch5.claims import DOUBLING_N, MASS_L0, MASS_LENGTHS, NEAR_ONE_C, SCALED_C
from lengthgen.chapters.ch5.claims import SINE_B, SUMMING_ALL, SUMMING_N
from lengthgen.chapters.ch5.sum_sine import ETAS, TRAIN_VARIANTS, train_cell_name, volume_cell_name
from lengthgen.config import ConfigError, check_finite
from lengthgen.engine.runs import Cell
from lengthgen.nn.positional import ENCODINGS

#: A_gen points of the doubling check: classifier width, box half-width, sample size, seed
DOUBLING_POINTS = {"h": 4, "B": 1.0, "samples": 10_000, "seed": 0}


def parity_doubling(ns=DOUBLING_N) -> dict:
    """:func:`.parity.doubling_gap` for both attention scales at each n in ``ns``."""
    P = uniform_box("gen", **DOUBLING_POINTS)
    rows = [
        {"beta": beta, "n": int(n), **pa.doubling_gap(P, int(n), beta)}
        for beta in ("one", "log")
        for n in ns
    ]
    return {"rows": rows, "points": dict(DOUBLING_POINTS)}


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


def _learned_tables():
    """``(task, family, W, m, c)`` of chapter 3's learned tables on first, pos2, pos5: the clamped
    margin m (:func:`.mass.clamped_margin`) and c = m / log L0."""
    for t in mass.FIXED_TARGET:
        fam, W = rz.select("learned_abs", t, "ce", L0=MASS_L0)
        m = mass.clamped_margin(W, t, MASS_L0)
        yield t, fam, W, m, m / math.log(MASS_L0)


def mass_clamped(lengths=None) -> dict:
    """The learned tables on first, pos2, pos5: α^{½} next to our closed form, both scales."""
    rows = []
    for t, fam, W, m, c in _learned_tables():
        for L in lengths or MASS_LENGTHS:
            got = mass.mass_alignment(W, fam, t, L, MASS_L0)
            for k in mass.SCALES:
                closed = mass.clamped_half(W, t, L, MASS_L0, mass.logit_scale(k, L, MASS_L0))
                row = {"task": t, "L": int(L), "scale": k, "m": m, "c": c}
                rows.append(row | {"alpha_half": got[f"alpha_half_{k}"], "closed_form": closed})
    return {"rows": rows}


def mass_scaled(targets=None, lengths=None) -> dict:
    """The learned tables scaled so that c = m / log L0 is each of ``targets`` (a positive factor
    keeps every argmax): α^{½} with both scales next to our closed form with the log factor."""
    targets = [check_finite("c'", c) for c in (targets or SCALED_C)]
    if not all(c > 0 for c in targets):
        raise ConfigError(f"every target c' must be > 0, got {targets}")
    rows = []
    for t, fam, W, _, c in _learned_tables():
        for target in targets:
            Ws = W * (target / c)
            c_scaled = mass.clamped_margin(Ws, t, MASS_L0) / math.log(MASS_L0)
            for L in lengths or MASS_LENGTHS:
                got = mass.mass_alignment(Ws, fam, t, L, MASS_L0)
                row = {"task": t, "c_fit": c, "c": c_scaled, "L": int(L)}
                row |= {k: got[k] for k in ("alpha", "alpha_half_none", "alpha_half_log")}
                s_log = mass.logit_scale("log", L, MASS_L0)
                rows.append(row | {"closed_form_log": mass.clamped_half(Ws, t, L, MASS_L0, s_log)})
    return {"rows": rows}


def cells(scale: str) -> list[Cell]:
    """The plan (module docstring)."""
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
        + mass.cells(scale)
    )


_ALPHAS = "rows.*.(alpha|alpha_half_none|alpha_half_log):p"
_SCALED = "rows.*.(task|c|L|alpha_half_log)"
_TRAIN = "members.*.(variant|N|seed|beta|test) members.*.(test.*|best_val_acc):p"
#: What every full-scale cell holds (:func:`lengthgen.store.validate`), by name
SCHEMAS: dict[str, str] = {
    "beta_closed_forms": "area.*.(n|area_log|area_one|ratio) eta_star.(first|index)"
    " center_one.*.(exact_above|paper_eta_largest_n) majority_center_failures"
    f" area={len(vb.AREA_NS)} center_one=4",
    "beta_volume_log": VOLUME_SCHEMA,
    "beta_volume_one": VOLUME_SCHEMA,
    "beta_majority_box": "rows.*.(n|exact_log|exact_one|samples)"
    f" rows.*.(fraction_log|fraction_one):p rows={len(vb.BOX_NS)}",
    # chapter 2's experiment under both scales: its members twice
    **{f"beta_train_{e}": f"{_TRAIN} members=2*seeds*Ns*variants" for e in vb.TRAIN_EXPERIMENTS},
    "parity_doubling": "rows.*.(beta|n|max_abs_output|max_logit_error) rows=2*ns",
    "averaging_sine": "rows.*.(B|bound|largest_exact_n) rows=Bs",
    "summing": "errors errors_all_lengths weight_on_zeros min_margin",
    "mass_tables": f"rows.*.(encoding|task|L|alpha|alpha_log) {_ALPHAS}",
    "mass_clamped": "rows.*.(task|L|scale|c|closed_form)",
    "mass_scaled": f"{_SCALED} {_ALPHAS}",
    "mass_scaled_near_one": f"{_SCALED} {_ALPHAS} rows={len(mass.FIXED_TARGET)}*targets",
    **{
        f"joint_{k.replace('/', '_')}": "rows.*.(N|L|samples|exact_log|exact_one|one_not_log)"
        " rows.*.(fraction_log|fraction_one):p rows=Ns"
        for k in vb.JOINT
    },
    **{volume_cell_name(eta): "rows.*.(n|kind|fraction|lo|hi) plain.*.fraction" for eta in ETAS},
    **{
        train_cell_name(a, b): "rows.*.(acc|first_failure|seed) rows.*.(acc.*|train_acc):p"
        for a, b in TRAIN_VARIANTS
    },
    "mass_refit": "rows.*.(encoding|task|L) fits.*.norm rows.*.(alpha|alpha_half):p",
    "mass_far": f"rows.*.(task|S4|far.*.exceed) rows.*.far.*.alpha:p rows={len(rz.TASKS)}",
}


def schema(name: str, scale: str = "full") -> str | None:
    """What the full-scale cell ``name`` holds (smoke cells are not checked: ``None``)."""
    return SCHEMAS.get(name) if scale == "full" else None

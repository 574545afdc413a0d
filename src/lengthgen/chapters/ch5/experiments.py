"""Chapter 5's runs (our experiments across the papers). Section "Parity: averaging versus
summing": three cells, the same at both scales (each takes seconds).

``parity_doubling``  A_gen's outputs at (t, n) and (2t, 2n), β_n = 1 and log n, 10⁴ points of the
                     box [−1, 1]^D (:func:`lengthgen.chapters.ch5.parity.doubling_gap`)
``averaging_sine``   the largest exact length of averaging + one sine unit for each B, searched
                     up to three lengths past our bound (:func:`.parity.largest_exact_n`)
``summing``          chapter 4's biased sine construction on the counts (:func:`.parity.summing_check`)
"""

from __future__ import annotations

from lengthgen.chapters.ch5 import parity as pa
from lengthgen.chapters.ch5.claims import DOUBLING_N, SINE_B, SUMMING_ALL, SUMMING_N
from lengthgen.engine.runs import Cell
from lengthgen.store import Schema

#: A_gen points of the doubling check: classifier width, box half-width, sample size, seed
DOUBLING_POINTS = {"h": 4, "B": 1.0, "samples": 10_000, "seed": 0}

SCHEMAS = {
    "parity_doubling": Schema(
        "ch5 parity doubling",
        required=(
            "rows.*.beta",
            "rows.*.n",
            "rows.*.max_abs_output",
            "rows.*.max_logit_error",
        ),
        counts=(("rows", lambda d: 2 * len(DOUBLING_N)),),
    ),
    "averaging_sine": Schema(
        "ch5 averaging + sine search",
        required=("rows.*.B", "rows.*.bound", "rows.*.largest_exact_n"),
        counts=(("rows", lambda d: len(SINE_B)),),
    ),
    "summing": Schema(
        "ch5 summing + sine",
        required=("errors", "errors_all_lengths", "weight_on_zeros", "min_margin"),
    ),
}


def parity_doubling(ns=DOUBLING_N, points=None) -> dict:
    """:func:`.parity.doubling_gap` for both attention scales at each n in ``ns``."""
    from lengthgen.chapters.ch2.volume import uniform_box

    pts = {**DOUBLING_POINTS, **(points or {})}
    P = uniform_box("gen", pts["h"], pts["B"], pts["samples"], pts["seed"])
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
        rows.append(
            {
                "B": float(B),
                "bound": bound,
                "largest_exact_n": pa.largest_exact_n(B, bound + past),
                "searched_to": bound + past,
            }
        )
    return {"rows": rows}


def summing(n_max=SUMMING_N, all_lengths=SUMMING_ALL) -> dict:
    return pa.summing_check(n_max, all_lengths=all_lengths)


def cells(scale: str) -> list[Cell]:
    """The plan: the same three cells at both scales."""
    return [
        Cell("parity_doubling", parity_doubling, {"ns": list(DOUBLING_N)}),
        Cell("averaging_sine", averaging_sine, {"Bs": list(SINE_B), "past": 3}),
        Cell("summing", summing, {"n_max": SUMMING_N, "all_lengths": SUMMING_ALL}),
    ]

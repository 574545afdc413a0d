"""Chapter 5's claim declaration (:func:`claim_maker`) and comparisons: a value exactly 0 in real
arithmetic gets a tolerance (ledger ``residue``) far above float64 rounding, a count :func:`equal`,
closed forms in rows :data:`ONE_ROW`, slopes :func:`slope_holds`, properties :func:`everywhere`."""

from __future__ import annotations

from lengthgen.claims import Claim, Deviation
from lengthgen.stats import loglog_slope

#: a closed form counting rows by a strict inequality: one boundary row may round the other way
ONE_ROW = 1.0
#: the one cause a prediction of ours is recorded as failed with (chapter 5's ``CAUSES``)
FAILED = "prediction failed"
#: a log-log slope's 95 % t-interval widened by this (finite-n bias ≤ 0.05) must hold the exponent
SLOPE_ALLOWANCE = 0.1


def failed(what_came_out: str) -> dict:
    """A prediction the stored run refuted: :data:`FAILED` with what came out instead."""
    return {"deviation": Deviation(FAILED, what_came_out)}


def claim_maker(loc: str, group: str = "ours"):
    """``make(cid, statement, comparison, why, measure, **kw)``: a stored claim of ``loc``."""

    def make(cid, statement, comparison: dict, why, measure, **kw):
        kw = {"group": group, **comparison, **kw}
        return Claim(cid, loc, statement, source="stored", measure=measure, why=why, **kw)

    return make


def value(paper_value, tolerance, **kw) -> dict:
    """Ours within ``tolerance`` of ``paper_value`` (``residue=``: below it ours is rounding)."""
    return {"paper_value": paper_value, "check": "value", "tolerance": tolerance, **kw}


def equal(paper_value) -> dict:
    """Ours is exactly ``paper_value`` (a count, a list of counts)."""
    return {"paper_value": paper_value, "check": "equal"}


def holds(paper_value, predicate, check: str = "predicate") -> dict:
    """``predicate(ours)`` decides; ``paper_value`` says in words what it asks."""
    return {"paper_value": paper_value, "check": check, "holds": predicate}


def everywhere() -> dict:
    """A property that must hold everywhere: its measure returns ``True``."""
    return holds(True, lambda v: v is True)


def slope_fit(ns, fractions, hits, *, lengths: bool = False) -> dict:
    """The log-log slope, its 95 % t-interval, the fewest hits behind a point (and ``lengths``)."""
    s, lo, hi = loglog_slope(list(ns), list(fractions))
    count = {"lengths": len(ns)} if lengths else {}
    return {"slope": s, "lo": lo, "hi": hi, **count, "min_hits": min(hits)}


def slope_holds(v: dict, exponent) -> bool:
    """The exponent lies in the slope's 95 % interval widened by :data:`SLOPE_ALLOWANCE`."""
    return v["lo"] - SLOPE_ALLOWANCE <= exponent <= v["hi"] + SLOPE_ALLOWANCE

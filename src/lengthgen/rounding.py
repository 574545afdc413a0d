"""How the claims ledger writes, compares and shows values: rounded to a claim's digits, residues
as their bound, equal up to that rounding (so the ledger is the same on every machine), and in
words for a reader (:func:`fmt_value`). Re-exported by :mod:`lengthgen.claims`."""

from __future__ import annotations

import math

from lengthgen.store import ResultFileError, _clean, number, read_json


def _as_list(x):
    """``x`` as a list if it is a list, a tuple or an array of one or more dimensions, else None."""
    v = list(x) if isinstance(x, (list, tuple)) else x.tolist() if hasattr(x, "tolist") else None
    return v if isinstance(v, list) else None


def _map_floats(x, fn):
    """``x`` with ``fn`` applied to every finite float in it (recursively)."""
    if isinstance(x, dict):
        return {k: _map_floats(v, fn) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_map_floats(v, fn) for v in x]
    return fn(x) if isinstance(x, float) and math.isfinite(x) else x


def round_sig(x, digits: int = 4):
    """``x`` with floats rounded to ``digits`` significant digits (recursively)."""
    return _map_floats(x, lambda v: float(f"{v:.{digits}g}") if v != 0.0 else v)


def bound_residues(x, floor: float | None):
    """``x`` with every finite float of magnitude ≤ ``floor`` written as ``"≤ floor"``."""
    if floor is None:
        return x
    return _map_floats(x, lambda v: f"≤ {floor:.3g}" if abs(v) <= floor else v)


def _rounding_unit(x, digits: int) -> float:
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return 0.0
    return 10.0 ** (math.floor(math.log10(abs(x))) - digits + 1)


def same_within_rounding(a, b, digits: int = 4) -> bool:
    """Whether two ledger values agree up to one unit in the ``digits``-th significant digit of
    the finer of the two (the same structure and non-numbers)."""
    if isinstance(a, dict) or isinstance(b, dict):
        same = isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
        return same and all(same_within_rounding(a[k], b[k], digits) for k in a)
    la, lb = _as_list(a), _as_list(b)
    if la is not None or lb is not None:
        same = la is not None and lb is not None and len(la) == len(lb)
        return same and all(same_within_rounding(x, y, digits) for x, y in zip(la, lb))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if number(a) is not None and number(b) is not None:
        if a == b:
            return True
        if not (math.isfinite(float(a)) and math.isfinite(float(b))):
            return False
        units = [u for u in (_rounding_unit(a, digits), _rounding_unit(b, digits)) if u]
        unit = min(units, default=0.0)  # the finer of the two: 1.0 → 0.9995 is a change
        return abs(float(a) - float(b)) <= unit * (1 + 1e-9)
    return _clean(a) == _clean(b)


def keep_within_rounding(records: list[dict], path, digits: dict | None = None) -> list[dict]:
    """``records`` with each ``our_value`` replaced by the one written at ``path`` where only the
    ledger's rounding separates them (every other field equal)."""
    try:  # a missing, unreadable or malformed written ledger keeps nothing
        old = read_json(path)
    except ResultFileError:
        old = []
    old = old if isinstance(old, list) else []
    by_id = {r["id"]: r for r in old if isinstance(r, dict) and "id" in r}
    out = []
    for r in records:
        o, d = by_id.get(r["id"], {}), (digits or {}).get(r["id"], 4)
        same = set(o) == set(r) and all(_clean(o[k]) == _clean(r[k]) for k in r if k != "our_value")
        if same and same_within_rounding(o["our_value"], r["our_value"], d):
            r = dict(r, our_value=o["our_value"])
        out.append(r)
    return out


def _is_zero(x) -> bool:
    v = _as_list(x)
    if v is not None:
        return len(v) > 0 and all(_is_zero(y) for y in v)
    return number(x) is not None and x == 0


#: a ``value`` check of zero whose tolerance is at most this is a check of float rounding (a residue)
RESIDUE_SCALE = 1e-6


def residue_of(claim) -> float | None:
    """The rounding floor of a claim's value: its ``residue``, else the tolerance of a ``value``
    check of zero within :data:`RESIDUE_SCALE`, else None."""
    if claim.residue is not None:
        return float(claim.residue)
    tol = claim.tolerance
    if claim.check == "value" and _is_zero(claim.paper_value) and float(tol) <= RESIDUE_SCALE:
        return float(tol)
    return None


# --------------------------------------------------------------------------- values for people
#: words for keys inside a value (a reader never sees a raw key; others read with spaces for "_")
KEY_WORDS = dict(
    kv.split("=", 1)
    for kv in "ce_bits=cross-entropy (bits);ce_bits_at_n_max=cross-entropy at the longest n "
    "(bits);ce_bits_at_10=cross-entropy at n = 10 (bits);min_acc=min accuracy;error_at_1e5=error "
    "at n = 10⁵;ci95=95 % interval;p_20_of_20=chance of 20 of 20;max_rel_diff_train_ce=max "
    "relative change of training loss;rho=Spearman ρ;rho_chi=ρ with χ;rho_ell=ρ with ℓ;p_chi=p "
    "for χ;p_ell=p for ℓ;peak_B2=peak density × B²;histogram_max_B2=histogram max × B²;"
    "eps_over_B2=ε / B²;cond=condition number;m=rows;wd=weight decay".split(";")
)
_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def superscript(x) -> str:
    """``x`` (digits and signs) as a Unicode exponent: "n" + superscript(-3) reads n⁻³."""
    return str(x).replace("−", "-").translate(_SUPER)


def _number(x, digits: int) -> str:
    """``x`` to ``digits`` digits, ``1.6 × 10²⁷``, "−", thousands "17 665" (a comma reads as a list)."""
    if isinstance(x, int) or not math.isfinite(x):
        return f"{x:,}".replace(",", " ").replace("-", "−").replace("nan", "not a number")
    mant, _, exp = f"{x:.{digits}g}".partition("e")
    power = f"10{superscript(int(exp))}" if exp else ""
    text = mant if not exp else power if mant == "1" else f"{mant} × {power}"
    return text.replace("-", "−")


def _list_text(v: list, digits: int, items: int, of: str) -> str:
    if all(isinstance(x, bool) for x in v):
        return f"{sum(v)} of {len(v)} yes" if not all(v) else f"all {len(v)} yes"
    if len(v) > 2 and len(texts := {fmt_value(x, digits) for x in v}) == 1:
        return f"{texts.pop()} for all {len(v)} {of}"
    if len(v) > items and all(number(x) is not None for x in v):
        lo, hi = (fmt_value(x, digits) for x in (min(v), max(v)))
        return f"min {lo}, max {hi} over {len(v)} {of}"
    rows = all(isinstance(x, (list, tuple)) for x in v)
    sep = "; " if rows or any(isinstance(x, dict) for x in v) else ", "
    shown = [fmt_value(x, digits, items=items, nested=True) for x in v[:items]]
    more = f"{sep}… ({len(v)} {'rows' if rows else of})" if len(v) > items else ""
    return sep.join(shown) + more


def fmt_value(v, digits=4, *, items=8, of="values", nested=False) -> str:
    """A claim value as a reader reads it (never a Python repr): ``mean (lo to hi)``, ``84 of 100
    runs perfect``, ``min 0.8, max 1 over 7 values``, other lists and dicts item by item."""
    if v is None or (isinstance(v, (list, tuple, dict)) and not v):
        return "none" if nested or v is not None else "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if number(v) is not None:
        return _number(v, digits)
    if isinstance(v, str):  # a residue's bound as the ledger writes it: "≤ 1e-09"
        num = v[2:].replace(".", "", 1).replace("e-", "", 1)
        ok = v[:2] in ("≤ ", "< ", "≥ ", "> ") and num.isdigit()
        return f"{v[:2]}{_number(float(v[2:]), digits)}" if ok else v
    if not isinstance(v, dict):
        text = _list_text(list(v), digits, items, of)
        return f"({text})" if nested else text
    f = lambda x: fmt_value(x, digits, items=items, nested=True)  # noqa: E731
    rest, head = dict(v), []
    if {"perfect", "runs"} <= set(v):
        head.append(f"{f(rest.pop('perfect'))} of {f(rest.pop('runs'))} runs perfect")
        rest.pop("rate", None)
    for lead in ("mean", "slope"):
        if {lead, "lo", "hi"} <= set(v):
            m, lo, hi = (f(rest.pop(k)) for k in (lead, "lo", "hi"))
            head.append(f"{m} ({lo} to {hi})" if lead == "mean" else f"slope {m} [{lo}, {hi}]")
    words = [f"{KEY_WORDS.get(k, str(k).replace('_', ' '))}: {f(x)}" for k, x in rest.items()]
    text = "; ".join(head + words[:items]) + ("; …" if len(words) > items else "")
    return f"({text})" if nested and len(words) + len(head) > 1 else text

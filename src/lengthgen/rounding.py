"""How the claims ledger writes and compares values: rounded to a claim's significant digits
(:func:`round_sig`), rounding residues written as the bound they were checked against
(:func:`bound_residues`; a claim's floor: :func:`residue_of`), and two values taken as equal when they differ only by that rounding
(:func:`same_within_rounding`, :func:`keep_within_rounding`), so the committed ledger is the same
on every machine. Used by :mod:`lengthgen.claims` (which re-exports these names) and
:mod:`lengthgen.verify`.
"""

from __future__ import annotations

import math
from pathlib import Path

from lengthgen.store import ResultFileError, _clean, read_json


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "tolist"):
        v = x.tolist()
        return v if isinstance(v, list) else None
    return None


def round_sig(x, digits: int = 4):
    """``x`` with floats rounded to ``digits`` significant digits (recursively), so re-running a
    chapter leaves the ledger file unchanged by float noise."""
    if isinstance(x, dict):
        return {k: round_sig(v, digits) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [round_sig(v, digits) for v in x]
    if isinstance(x, float) and math.isfinite(x) and x != 0.0:
        return float(f"{x:.{digits}g}")
    return x


def bound_residues(x, floor: float | None):
    """``x`` with every finite float of magnitude ≤ ``floor`` replaced by the string ``"≤ floor"``
    (recursively): a rounding residue is recorded as the bound it was checked against, not as the
    raw value, which changes from machine to machine."""
    if floor is None:
        return x
    if isinstance(x, dict):
        return {k: bound_residues(v, floor) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [bound_residues(v, floor) for v in x]
    if isinstance(x, float) and math.isfinite(x) and abs(x) <= floor:
        return f"≤ {floor:.3g}"
    return x


def _rounding_unit(x, digits: int) -> float:
    """One unit in the last of ``digits`` significant digits of ``x`` (the ledger's rounding)."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return 0.0
    return 10.0 ** (math.floor(math.log10(abs(x))) - digits + 1)


def same_within_rounding(a, b, digits: int = 4) -> bool:
    """Whether two ledger values agree up to the ledger's rounding: the same structure, the same
    non-numbers, and numbers that differ by at most one unit in the ``digits``-th significant digit
    of the smaller of the two (two machines that agree to float rounding may round a value on
    either side of a boundary; anything more is a change)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and set(a) == set(b)
            and all(same_within_rounding(a[k], b[k], digits) for k in a)
        )
    la, lb = _as_list(a), _as_list(b)
    if la is not None or lb is not None:
        return (
            la is not None
            and lb is not None
            and len(la) == len(lb)
            and all(same_within_rounding(x, y, digits) for x, y in zip(la, lb))
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    num = (int, float)
    if (
        isinstance(a, num)
        and isinstance(b, num)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        if a == b:
            return True
        if not (math.isfinite(float(a)) and math.isfinite(float(b))):
            return False
        units = [u for u in (_rounding_unit(a, digits), _rounding_unit(b, digits)) if u]
        unit = min(units, default=0.0)  # the finer of the two: 1.0 → 0.9995 is a change
        return abs(float(a) - float(b)) <= unit * (1 + 1e-9)
    return _clean(a) == _clean(b)


def keep_within_rounding(
    records: list[dict], path: str | Path, digits: dict | None = None
) -> list[dict]:
    """``records`` with each ``our_value`` replaced by the one already written at ``path`` when the
    two agree within the ledger's rounding (:func:`same_within_rounding` at the claim's ``digits``,
    ``digits[id]``, default 4) and every other field of
    the two records is equal; the records as they are when ``path`` is missing or is not a list of
    records (the write then replaces it). Only rounding is absorbed: a value that moved further, a
    changed status or any changed field is written."""
    path = Path(path)
    try:
        old = read_json(path) if path.exists() else []
    except ResultFileError:
        old = []
    if not isinstance(old, list):
        old = []
    by_id = {r["id"]: r for r in old if isinstance(r, dict) and "id" in r}
    out = []
    for r in records:
        o = by_id.get(r["id"])
        if (
            o is not None
            and set(o) == set(r)
            and all(_clean(o[k]) == _clean(r[k]) for k in r if k != "our_value")
            and same_within_rounding(
                o["our_value"], r["our_value"], (digits or {}).get(r["id"], 4)
            )
        ):
            r = dict(r, our_value=o["our_value"])
        out.append(r)
    return out


def _is_zero(x) -> bool:
    v = _as_list(x)
    if v is not None:
        return len(v) > 0 and all(_is_zero(y) for y in v)
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 0


#: a ``value`` check of zero whose tolerance is at most this is a check of float rounding (a residue)
RESIDUE_SCALE = 1e-6


def residue_of(claim) -> float | None:
    """The rounding floor of ``claim``'s value (a :class:`lengthgen.claims.Claim`): its ``residue``, else the tolerance of a ``value``
    check of a paper value of zero with a tolerance ≤ :data:`RESIDUE_SCALE` (a check that only
    rounding separates ours from zero), else None (no floor)."""
    if claim.residue is not None:
        return float(claim.residue)
    if (
        claim.check == "value"
        and _is_zero(claim.paper_value)
        and float(claim.tolerance) <= RESIDUE_SCALE
    ):
        return float(claim.tolerance)
    return None


# --------------------------------------------------------------------------- values for people
#: words for the keys our measurements use inside a value (a reader never sees a raw key);
#: a key not listed reads with its underscores as spaces
KEY_WORDS = {
    "ce_bits": "cross-entropy (bits)",
    "ce_bits_at_n_max": "cross-entropy at the longest n (bits)",
    "ce_bits_at_10": "cross-entropy at n = 10 (bits)",
    "min_acc": "min accuracy",
    "min_acc_near_1": "min accuracy near 1",
    "error_at_1e5": "error at n = 10⁵",
    "min_abs_logit": "min |logit|",
    "max_abs_logit": "max |logit|",
    "ci95": "95 % interval",
    "p_20_of_20": "chance of 20 of 20",
    "max_rel_diff_train_ce": "max relative change of training loss",
    "rho": "Spearman ρ",
    "rho_chi": "ρ with χ",
    "rho_ell": "ρ with ℓ",
    "p_chi": "p for χ",
    "p_ell": "p for ℓ",
    "peak_B2": "peak density × B²",
    "histogram_max_B2": "histogram max × B²",
    "eps_over_B2": "ε / B²",
    "within_3se": "within 3 SE",
    "cond": "condition number",
    "m": "rows",
    "wd": "weight decay",
    "relu_max": "ReLU max",
}
_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_EMPTY = "none"


def superscript(x) -> str:
    """``x`` (a number or a text of digits and signs) as a Unicode exponent: ``n`` + ``superscript(-3)``
    reads n⁻³ (claim statements write math in plain Unicode, as the rows show them)."""
    return str(x).replace("−", "-").translate(_SUPER)


def _words(key) -> str:
    return KEY_WORDS.get(key, str(key).replace("_", " "))


def _number(x, digits: int) -> str:
    """``x`` to ``digits`` significant digits, a Unicode minus, ``1.6 × 10²⁷`` for powers and a
    thin space between thousands (a comma would read as a list separator)."""
    if isinstance(x, int):
        return f"{x:,}".replace(",", " ").replace("-", "−")
    if not math.isfinite(x):
        return "not a number" if x != x else ("∞" if x > 0 else "−∞")
    text = f"{x:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        power = f"10{str(int(exp)).translate(_SUPER)}"
        text = power if mant in ("1", "-1") else f"{mant} × {power}"
        text = "-" + text if mant == "-1" else text
    return text.replace("-", "−")


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _list_text(v: list, digits: int, items: int, of: str) -> str:
    if not v:
        return _EMPTY
    if all(isinstance(x, bool) for x in v):
        yes = sum(v)
        return f"all {len(v)} yes" if yes == len(v) else f"{yes} of {len(v)} yes"
    texts = {fmt_value(x, digits) for x in v}
    if len(v) > 2 and len(texts) == 1:
        return f"{texts.pop()} for all {len(v)} {of}"
    if len(v) > items and all(_is_num(x) for x in v):
        lo, hi = min(v), max(v)
        return f"min {fmt_value(lo, digits)}, max {fmt_value(hi, digits)} over {len(v)} {of}"
    rows = all(isinstance(x, (list, tuple)) for x in v)
    sep = "; " if rows or any(isinstance(x, dict) for x in v) else ", "
    shown = [fmt_value(x, digits, items=items, nested=True) for x in v[:items]]
    more = f"{sep}… ({len(v)} {'rows' if rows else of})" if len(v) > items else ""
    return sep.join(shown) + more


def fmt_value(
    v, digits: int = 4, *, items: int = 8, of: str = "values", nested=False
) -> str:
    """A claim value in words and numbers a reader parses (used by the claim rows, the results
    boxes and the scorecard; chapter 0 explains the ledger): numbers to ``digits`` significant
    digits; an interval ``{mean, lo, hi}`` as ``mean (lo–hi)`` and a fit ``{slope, lo, hi}`` as
    ``slope s [lo, hi]``; run counts as ``84 of 100 runs perfect``; a list of more than ``items``
    numbers as its range (``min 0.8, max 1 over 7 values``, ``of`` names the entries); other lists
    and dicts item by item with their keys in words (:data:`KEY_WORDS`); ``none`` for nothing.
    Never a Python repr: no brackets, quotes or ``None``."""
    if v is None:
        return "none" if nested else "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if _is_num(v):
        return _number(v, digits)
    if isinstance(v, (list, tuple)):
        text = _list_text(list(v), digits, items, of)
        return f"({text})" if nested and text != _EMPTY else text
    if isinstance(v, str):  # a bound the ledger wrote for a rounding residue: "≤ 1e-09"
        op, _, num = v.partition(" ")
        if op in ("≤", "<", "≥", ">") and _is_float(num):
            return f"{op} {_number(float(num), digits)}"
        return v
    if not isinstance(v, dict):
        return str(v)
    if not v:
        return _EMPTY
    f = lambda x: fmt_value(x, digits, items=items, nested=True)  # noqa: E731
    rest = dict(v)
    head = []
    if {"perfect", "runs"} <= set(v):
        head.append(f"{f(rest.pop('perfect'))} of {f(rest.pop('runs'))} runs perfect")
        rest.pop("rate", None)
    for lead in ("mean", "slope"):
        if {lead, "lo", "hi"} <= set(v):
            m, lo, hi = rest.pop(lead), rest.pop("lo"), rest.pop("hi")
            head.append(
                f"{f(m)} ({f(lo)} to {f(hi)})"
                if lead == "mean"
                else f"slope {f(m)} [{f(lo)}, {f(hi)}]"
            )
    pairs = list(rest.items())
    body = [f"{_words(k)}: {f(x)}" for k, x in pairs[:items]]
    text = "; ".join(head + body) + ("; …" if len(pairs) > items else "")
    return f"({text})" if nested and len(pairs) + len(head) > 1 else text

"""The claims ledger: every number a chapter reports, the paper's value next to ours.

A chapter opens a :class:`Ledger`, records each claim with :meth:`Ledger.check` (or
:meth:`Ledger.not_reproducible`) and writes it with :meth:`Ledger.save` to
``results/claims/<chapter>.json``. The scorecard page and ``python -m lengthgen claims`` read
those files.

Comparisons
-----------
``equal``      our value equals the paper's (exactly, or element-wise for lists)
``tolerance``  ``|ours - paper| <= tolerance`` (absolute; scalars or equal-length lists)
``interval``   our value lies in ``interval = (lo, hi)`` (e.g. the paper's CI or a stated band)
``ci``         the paper's value lies in our interval ``interval = (lo, hi)`` (e.g. our bootstrap CI)
``predicate``  a qualitative statement; the caller computes ``holds`` (a bool) from measured data

Statuses
--------
``reproduced``        the comparison holds
``deviates``          it does not, and the chapter declared the deviation with a written reason
``not-reproducible``  the claim cannot be checked here (reason required), e.g. a missing data set

A claim whose comparison fails and which was *not* declared as a known deviation raises
:class:`ClaimFailed`, so an executed notebook (and therefore nbval) fails loudly.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from lengthgen.config import CHAPTERS, check_choice
from lengthgen.store import _clean, atomic_write_json, read_json, results_dir, ResultFileError


STATUSES = ("reproduced", "deviates", "not-reproducible")
COMPARISONS = ("equal", "tolerance", "interval", "ci", "predicate", "none")
SOURCES = ("live", "stored", "none")


class ClaimFailed(AssertionError):
    """A claim's comparison failed and the chapter had not declared it as a known deviation."""


@dataclass
class Claim:
    """One row of the ledger."""

    id: str
    chapter: str
    paper: str
    location: str
    statement: str
    paper_value: Any
    our_value: Any
    comparison: str
    tolerance: Any
    scale: str
    source: str
    status: str
    reason: str = ""
    holds: bool | None = None

    def to_dict(self) -> dict:
        return _clean(asdict(self))


def _as_list(x) -> list | None:
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "tolist"):
        v = x.tolist()
        return v if isinstance(v, list) else None
    return None


def compare(comparison: str, paper_value, our_value, *, tolerance=None, interval=None, holds=None) -> bool:
    """Evaluate one comparison (see the module docstring); returns whether it holds."""
    check_choice("comparison", comparison, COMPARISONS)
    if comparison == "predicate":
        if not isinstance(holds, bool):
            raise TypeError(f"a 'predicate' claim needs holds=True/False computed from data, got {holds!r}")
        return holds
    if comparison == "equal":
        a, b = _as_list(paper_value), _as_list(our_value)
        if a is not None or b is not None:
            return a == b
        return paper_value == our_value
    if comparison == "tolerance":
        if tolerance is None or float(tolerance) < 0:
            raise ValueError(f"a 'tolerance' claim needs tolerance >= 0, got {tolerance!r}")
        a, b = _as_list(paper_value), _as_list(our_value)
        if a is None and b is None:
            a, b = [paper_value], [our_value]
        if a is None or b is None or len(a) != len(b):
            raise ValueError(f"cannot compare {paper_value!r} with {our_value!r} element-wise")
        return all(x is not None and y is not None and math.isfinite(float(y)) and abs(float(x) - float(y)) <= float(tolerance)
                   for x, y in zip(a, b))
    if comparison in ("interval", "ci"):
        if interval is None or len(interval) != 2 or not float(interval[0]) <= float(interval[1]):
            raise ValueError(f"an '{comparison}' claim needs interval=(lo, hi) with lo <= hi, got {interval!r}")
        lo, hi = float(interval[0]), float(interval[1])
        v = our_value if comparison == "interval" else paper_value
        return v is not None and lo <= float(v) <= hi
    raise ValueError("comparison 'none' is only for not-reproducible claims")


class Ledger:
    """The claims of one chapter.

    Parameters
    ----------
    chapter : one of ``ch0`` … ``ch4``
    paper   : short citation of the chapter's paper (e.g. ``"Chiang & Cholak 2022"``)
    scale   : the scale live claims are measured at (default: the ``LENGTHGEN_SCALE`` knob)
    """

    def __init__(self, chapter: str, paper: str, scale: str | None = None):
        from lengthgen.config import get_scale

        self.chapter = check_choice("chapter", chapter, CHAPTERS)
        self.paper = paper
        self.scale = get_scale(scale)
        self._claims: dict[str, Claim] = {}

    # ------------------------------------------------------------------ recording
    def _check_id(self, cid: str) -> str:
        if not isinstance(cid, str) or not cid.startswith(self.chapter + "."):
            raise ValueError(f"claim id {cid!r} must start with '{self.chapter}.'")
        return cid

    def check(self, id: str, *, location: str, statement: str, paper_value, our_value,
              comparison: str, tolerance=None, interval: Sequence[float] | None = None,
              holds: bool | None = None, source: str = "live", scale: str | None = None,
              known_deviation: str | None = None) -> Claim:
        """Record a claim and decide its status.

        ``known_deviation`` is the written reason for a deviation the chapter expects; without
        it a failing comparison raises :class:`ClaimFailed`. A claim that was declared as a
        deviation but holds is recorded as reproduced.
        """
        self._check_id(id)
        check_choice("source", source, ("live", "stored"))
        if comparison == "none":
            raise ValueError("use Ledger.not_reproducible for claims that cannot be checked")
        ok = compare(comparison, paper_value, our_value, tolerance=tolerance, interval=interval, holds=holds)
        if ok:
            status, reason = "reproduced", ""
        elif known_deviation:
            status, reason = "deviates", known_deviation
        else:
            raise ClaimFailed(
                f"claim {id} failed: paper {paper_value!r} vs ours {our_value!r} "
                f"({comparison}, tolerance={tolerance!r}, interval={interval!r}). "
                "Report it as a known deviation with its reason, or fix the reproduction.")
        tol = tolerance if comparison == "tolerance" else (list(interval) if interval is not None else None)
        claim = Claim(id=id, chapter=self.chapter, paper=self.paper, location=location, statement=statement,
                      paper_value=_clean(paper_value), our_value=_clean(our_value), comparison=comparison,
                      tolerance=_clean(tol), scale=scale or self.scale, source=source, status=status,
                      reason=reason, holds=bool(ok))
        self._claims[id] = claim
        return claim

    def not_reproducible(self, id: str, *, location: str, statement: str, paper_value, reason: str) -> Claim:
        """Record a claim that cannot be checked here, with the reason."""
        self._check_id(id)
        if not reason:
            raise ValueError("a not-reproducible claim needs a reason")
        claim = Claim(id=id, chapter=self.chapter, paper=self.paper, location=location, statement=statement,
                      paper_value=_clean(paper_value), our_value=None, comparison="none", tolerance=None,
                      scale="n/a", source="none", status="not-reproducible", reason=reason, holds=None)
        self._claims[id] = claim
        return claim

    # ------------------------------------------------------------------ output
    @property
    def claims(self) -> list[Claim]:
        return list(self._claims.values())

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for c in self._claims.values():
            out[c.status] += 1
        return out

    def path(self, folder: str | Path | None = None) -> Path:
        return Path(folder or results_dir() / "claims") / f"{self.chapter}.json"

    def save(self, folder: str | Path | None = None) -> Path:
        """Write the ledger to ``results/claims/<chapter>.json`` (atomically)."""
        return atomic_write_json(self.path(folder), [c.to_dict() for c in self.claims])

    def table(self):
        """The ledger as a pandas DataFrame (for display at the end of a chapter)."""
        return claims_table([c.to_dict() for c in self.claims])


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        inner = ", ".join(_fmt(x) for x in v[:8])
        return f"[{inner}{', …' if len(v) > 8 else ''}]"
    return str(v)


def claims_table(rows: list[dict]):
    """Render claim dicts as a DataFrame with readable columns."""
    import pandas as pd

    cols = ["id", "location", "status", "paper_value", "our_value", "comparison", "source", "scale", "reason"]
    df = pd.DataFrame([{k: r.get(k) for k in cols} for r in rows], columns=cols)
    for c in ("paper_value", "our_value"):
        df[c] = df[c].map(_fmt)
    return df


def load_ledger(chapter: str, folder: str | Path | None = None) -> list[dict]:
    """Read one chapter's stored ledger (a list of claim dicts); [] if it was never written."""
    check_choice("chapter", chapter, CHAPTERS)
    path = Path(folder or results_dir() / "claims") / f"{chapter}.json"
    if not path.exists():
        return []
    rows = read_json(path)
    if not isinstance(rows, list) or any(not isinstance(r, dict) or "id" not in r or "status" not in r for r in rows):
        raise ResultFileError(f"corrupt claims file {path}: expected a list of claim objects")
    return rows


def load_all(folder: str | Path | None = None) -> list[dict]:
    """All chapters' claims, in chapter order."""
    out = []
    for ch in CHAPTERS:
        out.extend(load_ledger(ch, folder))
    return out


def scorecard(folder: str | Path | None = None):
    """Per-chapter counts of each status, as a DataFrame (the scorecard page's summary)."""
    import pandas as pd

    rows = load_all(folder)
    data = []
    for ch in CHAPTERS:
        mine = [r for r in rows if r.get("chapter") == ch]
        data.append({"chapter": ch, **{s: sum(r["status"] == s for r in mine) for s in STATUSES}, "total": len(mine)})
    return pd.DataFrame(data)

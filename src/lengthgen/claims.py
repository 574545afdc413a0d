"""The claims ledger: every number a chapter quotes from its paper, next to ours, checked by a
comparison chosen before our value was seen.

Each chapter declares its claims once, in ``lengthgen.chapters.chN.claims`` (beside ``paper.py``, the
paper's numbers): a list of :class:`Claim` records (and :class:`Unchecked` records for what the book
does not attempt). The notebook shows a claim next to its derivation (:meth:`Ledger.show` for claims
computed from stored full-scale results, :meth:`Ledger.record` for claims measured live while the
page executes) and writes the chapter's ledger ``results/claims/chN.json`` with :meth:`Ledger.save`.
``python -m lengthgen claims --check`` re-evaluates every stored-result claim from ``results/``
without any notebook and compares it with the committed ledger (:func:`check_ledgers`).

Checks (``Claim.check``), each justified in one line (``Claim.why``)
---------------------------------------------------------------------
``value``      ``|ours − paper| ≤ tolerance`` (element-wise for lists); the tolerance is the paper's
               own standard error or interval half-width where it reports one, else stated a priori
``interval``   ours lies in ``interval = (lo, hi)``: the paper's own interval, or a stated band
``equal``      ours equals the paper's value exactly (counts, sets, exact constructions)
``direction``  only the sign or order agrees (``holds(ours)``); shown and counted as "direction",
               never as a numeric reproduction
``predicate``  a precise property computed from data (``holds(ours)``), e.g. "every one of 20 runs
               is perfect"; the statement says what exactly

Statuses
--------
``reproduced``        the check holds (for a ``direction`` check: the direction holds)
``deviates``          it does not, and the chapter declared the deviation beforehand with a cause
                      from its list of causes and an explanation we wrote
``not-reproducible``  the paper's claim cannot be checked here (:class:`Unchecked`, reason given)
``not-attempted``     the book does not try to reproduce it (:class:`Unchecked`, reason given)

A failing check without a declared deviation raises :class:`ClaimFailed` (a notebook, nbval and CI
fail). A declared deviation whose check holds is recorded as reproduced and flagged
(``declared_deviation_holds``), so the next ``claims --check`` reports it. A reduced protocol
(``protocol=reduced("…")``) or a modified one (``protocol=modified("…")``: a model or setting that
differs from the paper's) stays visible whatever the outcome. Our own checks of the code (closed
forms, brute force) are ``group="self-check"`` and are not counted as reproduced paper claims.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lengthgen.config import CHAPTERS, ConfigError, check_choice
from lengthgen.store import (
    ResultFileError,
    _clean,
    atomic_write_json,
    read_json,
    results_dir,
)

CHECKS = ("value", "interval", "equal", "direction", "predicate")
STATUSES = ("reproduced", "deviates", "not-reproducible", "not-attempted")
#: ``ours``: a prediction of our own (chapter 5), counted apart from the papers' claims
GROUPS = ("paper", "self-check", "ours")
SOURCES = ("stored", "live")
PROTOCOL_KINDS = ("paper", "reduced", "modified")
#: a chapter's pages: its chapter page and its details page (protocol minutiae, secondary studies)
PAGES = ("main", "details")
#: the categories the scorecard counts: a direction check that holds is its own category
CATEGORIES = (
    "reproduced",
    "direction",
    "deviates",
    "not-reproducible",
    "not-attempted",
)


#: the cause recorded for a prediction of ours (group ``ours``) whose check fails: a failed
#: prediction is a finding, not an error, and needs no cause declared in advance
PREDICTION_FAILED = "our prediction did not hold"


class ClaimFailed(AssertionError):
    """A claim's check failed and the chapter had not declared the deviation."""


# --------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Protocol:
    """Whether our number comes from the paper's protocol, a reduced one (fewer updates, a smaller
    modulus, …) or a modified one (a different model or setting than the paper's); ``reduced`` says
    what was reduced or changed."""

    kind: str = "paper"
    reduced: str = ""

    def __post_init__(self):
        check_choice("protocol", self.kind, PROTOCOL_KINDS)
        if self.kind != "paper" and not self.reduced:
            raise ConfigError(
                f"a {self.kind} protocol must say what differs from the paper's"
            )


PAPER_PROTOCOL = Protocol()


def reduced(what: str) -> Protocol:
    """A reduced protocol; ``what`` says what was reduced (e.g. "p = 17, 2,000 updates")."""
    return Protocol("reduced", what)


def modified(what: str) -> Protocol:
    """A modified protocol: our model or setting differs from the paper's in ``what`` (not a reduction)."""
    return Protocol("modified", what)


@dataclass(frozen=True)
class Deviation:
    """A deviation declared before the check runs: a cause from the chapter's ``CAUSES`` and our
    own explanation (never built from the measured value)."""

    cause: str
    explanation: str


@dataclass(frozen=True)
class Claim:
    """One checked claim of a chapter's paper (or one of our self-checks).

    ``measure(results) -> ours`` computes our value from stored full-scale results
    (``source="stored"``; ``results`` is a :class:`StoredResults`); a ``source="live"`` claim gets its
    value from the executing notebook (:meth:`Ledger.record`). ``holds(ours) -> bool`` decides
    ``direction`` and ``predicate`` checks. ``digits`` significant digits of ours go to the ledger.

    ``residue`` is the size below which a float of ours is only rounding (it differs between CPUs,
    BLAS builds and thread counts): such floats are written to the ledger as the bound ``"≤ residue"``
    rather than their raw value, so the committed ledger is the same on every machine. A ``value``
    check of a paper value of zero with a tolerance at rounding scale (a residue check) takes its
    tolerance as ``residue`` by default (:func:`residue_of`).
    """

    id: str
    location: str
    statement: str
    paper_value: Any
    check: str
    why: str
    source: str = "stored"
    measure: Callable | None = None
    tolerance: float | None = None
    interval: tuple | None = None
    holds: Callable | None = None
    paper_uncertainty: Any = None
    protocol: Protocol = PAPER_PROTOCOL
    deviation: Deviation | None = None
    group: str = "paper"
    digits: int = 4
    residue: float | None = None

    def __post_init__(self):
        check_choice(f"check of {self.id}", self.check, CHECKS)
        if self.residue is not None and not (
            isinstance(self.residue, (int, float)) and self.residue > 0
        ):
            raise ConfigError(
                f"claim {self.id}: residue must be a number > 0, got {self.residue!r}"
            )
        check_choice(f"source of {self.id}", self.source, SOURCES)
        check_choice(f"group of {self.id}", self.group, GROUPS)
        if not self.why:
            raise ConfigError(
                f"claim {self.id}: say in one line why this comparison (why=...)"
            )
        if self.source == "stored" and not callable(self.measure):
            raise ConfigError(
                f"claim {self.id}: a stored claim needs measure(results) -> ours"
            )
        if self.check == "value" and (
            self.tolerance is None or not float(self.tolerance) >= 0
        ):
            raise ConfigError(f"claim {self.id}: a value check needs tolerance >= 0")
        if self.check == "interval":
            iv = self.interval
            if iv is None or len(iv) != 2 or not float(iv[0]) <= float(iv[1]):
                raise ConfigError(
                    f"claim {self.id}: an interval check needs interval=(lo, hi), lo <= hi"
                )
        if self.check in ("direction", "predicate") and not callable(self.holds):
            raise ConfigError(
                f"claim {self.id}: a {self.check} check needs holds(ours) -> bool"
            )
        if self.deviation is not None and not isinstance(self.deviation, Deviation):
            raise ConfigError(
                f"claim {self.id}: deviation must be a Deviation(cause, explanation)"
            )


@dataclass(frozen=True)
class Unchecked:
    """A claim of the paper that the book does not check: ``status`` is ``not-reproducible`` (cannot be
    checked here) or ``not-attempted`` (out of the book's scope); ``reason`` says why."""

    id: str
    location: str
    statement: str
    paper_value: Any
    status: str
    reason: str
    group: str = "paper"

    def __post_init__(self):
        check_choice(
            f"status of {self.id}", self.status, ("not-reproducible", "not-attempted")
        )
        if not self.reason:
            raise ConfigError(f"claim {self.id}: an unchecked claim needs a reason")


# --------------------------------------------------------------------------- evaluation
def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    if hasattr(x, "tolist"):
        v = x.tolist()
        return v if isinstance(v, list) else None
    return None


def compare(claim: Claim, ours) -> bool:
    """Whether ``ours`` passes ``claim``'s check (see the module docstring)."""
    c = claim.check
    if c in ("direction", "predicate"):
        out = claim.holds(ours)
        if not isinstance(out, (bool,)) and type(out).__name__ != "bool_":
            raise TypeError(
                f"claim {claim.id}: holds() must return a bool, got {out!r}"
            )
        return bool(out)
    if c == "equal":
        a, b = _as_list(claim.paper_value), _as_list(ours)
        if a is not None or b is not None:
            return _clean(a) == _clean(b)
        return _clean(claim.paper_value) == _clean(ours)
    if c == "value":
        a, b = _as_list(claim.paper_value), _as_list(ours)
        if a is None and b is None:
            a, b = [claim.paper_value], [ours]
        if a is None or b is None or len(a) != len(b):
            raise ValueError(
                f"claim {claim.id}: cannot compare {claim.paper_value!r} with {ours!r} element-wise"
            )
        return all(
            y is not None
            and math.isfinite(float(y))
            and abs(float(x) - float(y)) <= float(claim.tolerance)
            for x, y in zip(a, b)
        )
    lo, hi = (float(v) for v in claim.interval)
    return ours is not None and math.isfinite(float(ours)) and lo <= float(ours) <= hi


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


def _is_zero(x) -> bool:
    v = _as_list(x)
    if v is not None:
        return len(v) > 0 and all(_is_zero(y) for y in v)
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 0


#: a ``value`` check of zero whose tolerance is at most this is a check of float rounding (a residue)
RESIDUE_SCALE = 1e-6


def residue_of(claim: Claim) -> float | None:
    """The rounding floor of ``claim``'s value: its ``residue``, else the tolerance of a ``value``
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


def evaluate(claim: Claim, ours, *, chapter: str, scale: str) -> dict:
    """The ledger record of ``claim`` with our value ``ours``; raises :class:`ClaimFailed` if the
    check fails and no deviation was declared."""
    ours = _clean(ours)
    ok = compare(claim, ours)
    if not ok and claim.deviation is None and claim.group != "ours":
        raise ClaimFailed(
            f"claim {claim.id} failed: paper {claim.paper_value!r} vs ours {ours!r} "
            f"({claim.check}; tolerance={claim.tolerance!r}, interval={claim.interval!r}). "
            "Fix the reproduction, or declare the deviation with its cause in the chapter's claims."
        )
    rec = {
        "id": claim.id,
        "chapter": chapter,
        "group": claim.group,
        "location": claim.location,
        "statement": claim.statement,
        "paper_value": _clean(claim.paper_value),
        "paper_uncertainty": _clean(claim.paper_uncertainty),
        "our_value": round_sig(bound_residues(ours, residue_of(claim)), claim.digits),
        "check": claim.check,
        "tolerance": claim.tolerance,
        "interval": None
        if claim.interval is None
        else [float(v) for v in claim.interval],
        "why": claim.why,
        "source": claim.source,
        "scale": "full" if claim.source == "stored" else scale,
        "protocol": claim.protocol.kind,
        "protocol_note": claim.protocol.reduced,
        "status": "reproduced" if ok else "deviates",
        "holds": ok,
        "cause": None,
        "explanation": None,
        "declared_deviation_holds": False,
    }
    if claim.deviation is not None:
        rec["cause"], rec["explanation"] = (
            claim.deviation.cause,
            claim.deviation.explanation,
        )
        rec["declared_deviation_holds"] = ok
    elif not ok:  # a prediction of ours that failed: a result, reported as such
        rec["cause"] = PREDICTION_FAILED
    return rec


def unchecked_record(u: Unchecked, *, chapter: str) -> dict:
    return {
        "id": u.id,
        "chapter": chapter,
        "group": u.group,
        "location": u.location,
        "statement": u.statement,
        "paper_value": _clean(u.paper_value),
        "paper_uncertainty": None,
        "our_value": None,
        "check": None,
        "tolerance": None,
        "interval": None,
        "why": None,
        "source": None,
        "scale": None,
        "protocol": None,
        "protocol_note": "",
        "status": u.status,
        "holds": None,
        "cause": None,
        "explanation": u.reason,
        "declared_deviation_holds": False,
    }


def category(rec: dict) -> str:
    """Scorecard category of a ledger record: a holding ``direction`` check counts as "direction"."""
    if rec["status"] == "reproduced" and rec.get("check") == "direction":
        return "direction"
    return rec["status"]


# --------------------------------------------------------------------------- a chapter's declarations
def page_of(module, claim_id: str) -> str:
    """The page that shows a claim: ``details`` if its id starts with one of the prefixes in the
    chapter's ``DETAILS`` (its claims module), else ``main`` (the chapter page)."""
    prefixes = getattr(module, "DETAILS", ()) or ()
    return "details" if any(claim_id.startswith(p) for p in prefixes) else "main"


def chapter_claims(chapter: str):
    """The ``claims`` module of ``chapter`` (``lengthgen.chapters.chN.claims``)."""
    check_choice("chapter", chapter, CHAPTERS)
    mod = importlib.import_module(f"lengthgen.chapters.{chapter}.claims")
    ids = [c.id for c in mod.CLAIMS]
    if len(set(ids)) != len(ids):
        raise ConfigError(
            f"{chapter}: repeated claim ids {sorted({i for i in ids if ids.count(i) > 1})}"
        )
    for c in mod.CLAIMS:
        if not c.id.startswith(chapter + "."):
            raise ConfigError(f"claim id {c.id!r} must start with '{chapter}.'")
        if (
            isinstance(c, Claim)
            and c.deviation is not None
            and c.deviation.cause not in mod.CAUSES
        ):
            raise ConfigError(
                f"claim {c.id}: cause {c.deviation.cause!r} is not one of {chapter}'s CAUSES: "
                f"{', '.join(mod.CAUSES)}"
            )
    return mod


class StoredResults:
    """Lazy, cached access to a chapter's stored full-scale cells for ``measure`` functions:
    ``results.cell(name)`` is the validated value: read by the chapter's
    ``experiments.load_stored_cell(name, folder=...)`` where it defines one, else checked against
    ``experiments.SCHEMAS[name]`` when that exists. ``folder`` defaults to ``results/<chapter>/cells``."""

    def __init__(self, chapter: str, folder: str | Path | None = None):
        self.chapter = check_choice("chapter", chapter, CHAPTERS)
        self.folder = (
            Path(folder) if folder is not None else results_dir() / chapter / "cells"
        )
        self._cache: dict[str, Any] = {}
        self._prov: dict[str, dict] = {}

    def _experiments(self):
        try:
            return importlib.import_module(
                f"lengthgen.chapters.{self.chapter}.experiments"
            )
        except ModuleNotFoundError:
            return None

    def _schema(self, name):
        schemas = getattr(self._experiments(), "SCHEMAS", {}) or {}
        return schemas.get(name)

    def cell(self, name: str):
        if name not in self._cache:
            from lengthgen.engine.runs import load_stored

            mod = self._experiments()
            if mod is not None and hasattr(
                mod, "load_stored_cell"
            ):  # the chapter's own checked reader
                obj = mod.load_stored_cell(name, folder=self.folder)
            else:
                obj = load_stored(
                    self.chapter, name, schema=self._schema(name), folder=self.folder
                )
            self._cache[name], self._prov[name] = obj["data"], obj["provenance"]
        return self._cache[name]

    def provenance(self, name: str) -> dict:
        self.cell(name)
        return self._prov[name]


# --------------------------------------------------------------------------- the notebook's ledger
class Ledger:
    """The claims of one chapter while its notebook executes.

    ``show(id)`` evaluates a stored-result claim now and returns a small display; ``record(id, ours)``
    records a live claim measured by the notebook; ``save()`` writes ``results/claims/chN.json`` and
    refuses to if any declared claim was neither shown nor recorded (stored claims not shown are
    evaluated at save time).
    """

    def __init__(
        self,
        chapter: str,
        scale: str | None = None,
        results: StoredResults | None = None,
        page: str = "main",
    ):
        from lengthgen.config import get_scale

        self.module = chapter_claims(chapter)
        self.chapter = chapter
        self.page = check_choice("page", page, PAGES)
        self.scale = get_scale(scale)
        self.results = results or StoredResults(chapter)
        self.by_id = {c.id: c for c in self.module.CLAIMS}
        self._records: dict[str, dict] = {}

    def _mine(self):
        """This page's declared claims, in declaration order."""
        return [
            c for c in self.module.CLAIMS if page_of(self.module, c.id) == self.page
        ]

    def _claim(self, id: str, source: str | None = None):
        if id not in self.by_id:
            raise ConfigError(
                f"unknown claim {id!r} of {self.chapter}; declared: {', '.join(self.by_id)}"
            )
        other = page_of(self.module, id)
        if other != self.page:
            raise ConfigError(
                f"claim {id} is shown on the {other} page of {self.chapter}, not the "
                f"{self.page} page (DETAILS in lengthgen.chapters.{self.chapter}.claims)"
            )
        c = self.by_id[id]
        if source is not None and (not isinstance(c, Claim) or c.source != source):
            raise ConfigError(f"claim {id} is not a {source} claim")
        return c

    def show(self, id: str) -> "ClaimRows":
        """Evaluate stored-result claim ``id`` (or show an unchecked one, with its reason);
        returns its row of the claims table."""
        c = self._claim(id)
        if isinstance(c, Unchecked):
            self._records[id] = unchecked_record(c, chapter=self.chapter)
            return ClaimRows([self._records[id]])
        c = self._claim(id, "stored")
        self._records[id] = evaluate(
            c, c.measure(self.results), chapter=self.chapter, scale="full"
        )
        return ClaimRows([self._records[id]])

    def record(self, id: str, ours) -> "ClaimRows":
        """Record live claim ``id`` with our measured value ``ours``; returns its row of the table."""
        c = self._claim(id, "live")
        self._records[id] = evaluate(c, ours, chapter=self.chapter, scale=self.scale)
        return ClaimRows([self._records[id]])

    def claims(self, *items) -> "ClaimRows":
        """Several claims at once, as one table: each item is a stored claim's id (evaluated now) or
        a live claim's ``(id, ours)`` pair (recorded)."""
        recs = []
        for it in items:
            if isinstance(it, tuple) and len(it) == 2:
                recs += self.record(*it).records
            elif isinstance(it, str):
                recs += self.show(it).records
            else:
                raise ConfigError(
                    f"each item must be a stored claim id or an (id, ours) pair, got {it!r}"
                )
        return ClaimRows(recs)

    def held(self, id: str) -> bool:
        """Whether stored claim ``id`` holds (evaluated now, as :meth:`show` does): its status is
        ``reproduced``. For prose generated from the ledger; an unchecked claim has no verdict."""
        if isinstance(self._claim(id), Unchecked):
            raise ConfigError(
                f"claim {id} is not checked, so it neither holds nor fails"
            )
        return self.show(id).records[0]["status"] == "reproduced"

    def outcome(self, *ids: str) -> str:
        """The verdict of stored claims ``ids`` in words, for generated prose: "all 3 held",
        "2 of 3 held", "none of 2 held"; for one claim "it held" or "it failed"."""
        if not ids:
            raise ConfigError("outcome needs at least one claim id")
        n, k = len(ids), sum(self.held(i) for i in ids)
        if n == 1:
            return "it held" if k else "it failed"
        return (
            f"all {n} held"
            if k == n
            else (f"none of {n} held" if k == 0 else f"{k} of {n} held")
        )

    def records(self) -> list[dict]:
        """Every declared claim's record in declaration order (stored ones evaluated if not shown);
        raises naming the live claims that were never recorded."""
        missing = [
            c.id
            for c in self._mine()
            if isinstance(c, Claim) and c.source == "live" and c.id not in self._records
        ]
        if missing:
            raise ConfigError(
                f"{self.chapter}: live claims never recorded: {', '.join(missing)}"
            )
        out = []
        for c in self._mine():
            if isinstance(c, Unchecked):
                out.append(unchecked_record(c, chapter=self.chapter))
            elif c.id in self._records:
                out.append(self._records[c.id])
            else:
                out.append(
                    evaluate(
                        c, c.measure(self.results), chapter=self.chapter, scale="full"
                    )
                )
        return out

    def save(self, folder: str | Path | None = None) -> Path:
        """Write this page's part of the ledger (atomically; :func:`ledger_path`); nothing is
        written if a claim is missing. A value that differs from the one already written only by
        the ledger's rounding, every other field equal, keeps the written value
        (:func:`keep_within_rounding`): another CPU that rounds a value one unit apart in its last
        kept digit does not rewrite the committed ledger."""
        recs = self.records()
        path = ledger_path(self.chapter, self.page, folder)
        digits = {c.id: getattr(c, "digits", 4) for c in self._mine()}
        return atomic_write_json(path, keep_within_rounding(recs, path, digits))

    def table(self):
        """This page's claims as the book's claims table (HTML in a notebook)."""
        return ClaimRows(self.records())

    def unshown(self) -> list[str]:
        """This page's declared claims not displayed yet (by :meth:`show`, :meth:`record` or
        :meth:`claims`): a page shows each of its claims once."""
        return [c.id for c in self._mine() if c.id not in self._records]


# --------------------------------------------------------------------------- reading and checking
def ledger_path(chapter: str, page: str = "main", folder: str | Path | None = None):
    """Where one page's part of a chapter's ledger lives: ``results/claims/chN.json`` for the
    chapter's page, ``chN.details.json`` for its details page."""
    check_choice("chapter", chapter, CHAPTERS)
    check_choice("page", page, PAGES)
    name = chapter if page == "main" else f"{chapter}.{page}"
    return Path(folder or results_dir() / "claims") / f"{name}.json"


def load_ledger(chapter: str, folder: str | Path | None = None) -> list[dict]:
    """Read one chapter's committed ledger (a list of claim records: the chapter page's part,
    then the details page's); [] if never written. A claim recorded by both parts is a corrupt
    ledger."""
    rows, seen = [], {}
    for page in PAGES:
        path = ledger_path(chapter, page, folder)
        if not path.exists():
            continue
        part = read_json(path)
        if not isinstance(part, list) or any(
            not isinstance(r, dict) or "id" not in r or "status" not in r for r in part
        ):
            raise ResultFileError(
                f"corrupt claims file {path}: expected a list of claim records"
            )
        for r in part:
            if r["id"] in seen:
                raise ResultFileError(
                    f"claim {r['id']} is recorded in both {seen[r['id']]} and {path}"
                )
            seen[r["id"]] = path
        rows += part
    return rows


def load_all(folder: str | Path | None = None) -> list[dict]:
    """All chapters' ledgers, in chapter order."""
    return [r for ch in CHAPTERS for r in load_ledger(ch, folder)]


#: record fields fixed by a claim's declaration: a change means the committed ledger is stale
DECLARED_FIELDS = (
    "statement",
    "location",
    "paper_value",
    "check",
    "tolerance",
    "interval",
    "protocol",
    "protocol_note",
    "group",
    "cause",
)


def _rounding_unit(x: float, digits: int) -> float:
    """One unit in the last of ``digits`` significant digits of ``x`` (the ledger's rounding)."""
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
        units = [
            u
            for u in (
                _rounding_unit(float(a), digits),
                _rounding_unit(float(b), digits),
            )
            if u > 0
        ]
        unit = (
            min(units) if units else 0.0
        )  # the finer of the two: 1.0 → 0.9995 is a change
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


def _changed(old: dict, new: dict, digits: int = 4) -> str | None:
    """Why ``new`` differs materially from the committed ``old`` record (None if it does not).

    Stored results do not change, so a re-evaluated value may differ from the committed one only
    by the ledger's rounding (:func:`same_within_rounding`), whatever the paper tolerance: a value
    that moves further is a change of the code or of the stored results and is reported."""
    stale = [k for k in DECLARED_FIELDS if _clean(old.get(k)) != _clean(new.get(k))]
    if stale:
        return f"declaration changed ({', '.join(stale)}) since the ledger was written; re-run the chapter"
    if old.get("status") != new["status"]:
        return f"status {old.get('status')} → {new['status']}"
    a, b = old.get("our_value"), new["our_value"]
    if same_within_rounding(a, b, digits):
        return None
    return f"value {a!r} → {b!r}"


def check_ledgers(
    chapters=CHAPTERS, results_root: str | Path | None = None
) -> list[dict]:
    """Re-evaluate every stored-result claim from ``results/`` and compare with the committed
    ledgers. Returns one row per problem ``{chapter, id, problem}``: a claim whose status changed,
    whose value moved beyond the ledger's rounding (whatever the paper tolerance), that failed without a declared deviation, that exists
    on one side only, or a declared deviation that now holds."""
    problems = []
    for ch in chapters:
        mod = chapter_claims(ch)
        root = Path(results_root) if results_root is not None else results_dir()
        committed = {r["id"]: r for r in load_ledger(ch, root / "claims")}
        declared = {c.id for c in mod.CLAIMS}
        for page in PAGES:
            path = ledger_path(ch, page, root / "claims")
            for r in read_json(path) if path.exists() else []:
                want = page_of(mod, r["id"])
                if r["id"] in declared and want != page:
                    problems.append(
                        {
                            "chapter": ch,
                            "id": r["id"],
                            "problem": f"recorded in {path.name} but shown on the {want} page",
                        }
                    )
        for cid in sorted(set(committed) - declared):
            problems.append(
                {
                    "chapter": ch,
                    "id": cid,
                    "problem": "in the committed ledger but no longer declared",
                }
            )
        for cid in [c.id for c in mod.CLAIMS if c.id not in committed]:
            problems.append(
                {
                    "chapter": ch,
                    "id": cid,
                    "problem": "declared but missing from the committed ledger",
                }
            )
        results = StoredResults(ch, root / ch / "cells")
        for c in mod.CLAIMS:
            if not (isinstance(c, Claim) and c.source == "stored"):
                continue
            try:
                new = evaluate(c, c.measure(results), chapter=ch, scale="full")
            except ClaimFailed as err:
                problems.append(
                    {
                        "chapter": ch,
                        "id": c.id,
                        "problem": f"fails without a declared deviation: {err}",
                    }
                )
                continue
            if new["declared_deviation_holds"]:
                problems.append(
                    {
                        "chapter": ch,
                        "id": c.id,
                        "problem": f"declared deviation ({c.deviation.cause}) now holds",
                    }
                )
            if c.id in committed:
                why = _changed(committed[c.id], new, c.digits)
                if why:
                    problems.append({"chapter": ch, "id": c.id, "problem": why})
    return problems


# --------------------------------------------------------------------------- display
def fmt_value(v, digits: int = 3) -> str:
    """A claim value for people: numbers to ``digits`` significant digits, intervals ``a (b–c)``."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    if isinstance(v, dict):
        if set(v) >= {"mean", "lo", "hi"}:
            return f"{fmt_value(v['mean'])} ({fmt_value(v['lo'])}–{fmt_value(v['hi'])})"
        return "; ".join(f"{k}: {fmt_value(x)}" for k, x in list(v.items())[:6]) + (
            "; …" if len(v) > 6 else ""
        )
    if isinstance(v, (list, tuple)):
        inner = ", ".join(fmt_value(x) for x in v[:6])
        return f"[{inner}{', …' if len(v) > 6 else ''}]"
    return str(v)


def protocol_label(rec: dict) -> str:
    """``paper``, ``reduced: …`` or ``differs: …`` for a ledger record."""
    kind = rec.get("protocol")
    if kind == "reduced":
        return f"reduced: {rec.get('protocol_note')}"
    if kind == "modified":
        return f"differs: {rec.get('protocol_note')}"
    return kind or "—"


def claims_frame(rows: list[dict]):
    """Ledger records as a DataFrame of readable columns (``note``: self-check, or the declared
    cause and our explanation of a deviation)."""
    import pandas as pd

    def note(r):
        if r.get("status") == "deviates":
            return f"{r.get('cause')}: {r.get('explanation')}"
        if r.get("status") in ("not-reproducible", "not-attempted"):
            return r.get("explanation") or ""
        return (
            "self-check (not a paper claim)" if r.get("group") == "self-check" else ""
        )

    return pd.DataFrame(
        [
            {
                "claim": r["statement"],
                "where": r["location"],
                "paper": fmt_value(r["paper_value"]),
                "ours": fmt_value(r["our_value"]),
                "status": category(r),
                "check": r.get("check") or "—",
                "protocol": protocol_label(r),
                "note": note(r),
                "id": r["id"],
            }
            for r in rows
        ]
    )


def scorecard(folder: str | Path | None = None, *, group: str = "paper"):
    """Per-chapter counts of each category, as a DataFrame (the scorecard's totals)."""
    import pandas as pd

    rows = [r for r in load_all(folder) if r.get("group", "paper") == group]
    data = []
    for ch in CHAPTERS:
        mine = [r for r in rows if r.get("chapter") == ch]
        data.append(
            {
                "chapter": ch,
                **{k: sum(category(r) == k for r in mine) for k in CATEGORIES},
                "total": len(mine),
            }
        )
    df = pd.DataFrame(data)
    total = {
        "chapter": "all",
        **{k: int(df[k].sum()) for k in CATEGORIES},
        "total": int(df["total"].sum()),
    }
    return pd.concat([df, pd.DataFrame([total])], ignore_index=True)


# --------------------------------------------------------------------------- HTML (scorecard, chapter ends)
_BADGE = {
    "reproduced": "#1b7f3b",
    "direction": "#3465a4",
    "deviates": "#b5470b",
    "not-reproducible": "#6b6b6b",
    "not-attempted": "#8a8a8a",
}
_CSS = """<style>
div.lg-claims{font-size:0.86em;margin:0.5em 0;border-top:1px solid #ccc}
div.lg-claims .lg-row,div.lg-claims details.lg-claim>summary{display:grid;
 grid-template-columns:minmax(0,58fr) minmax(0,15fr) minmax(0,15fr) minmax(0,12fr);column-gap:8px;
 padding:3px 4px;border-bottom:1px solid #ddd;align-items:start}
div.lg-claims .lg-row{font-weight:bold}
div.lg-claims details.lg-claim>summary{cursor:pointer;list-style:none}
div.lg-claims details.lg-claim>summary::-webkit-details-marker{display:none}
div.lg-claims details.lg-claim>summary>span{overflow-wrap:anywhere;min-width:0}
div.lg-claims details.lg-claim>summary>span:first-child::before{content:"\\25B8\\00a0";color:#777}
div.lg-claims details.lg-claim[open]>summary>span:first-child::before{content:"\\25BE\\00a0"}
div.lg-claims .lg-more{padding:4px 10px 6px 18px;border-bottom:1px solid #ddd;color:#444;
 overflow-wrap:anywhere}
div.lg-claims .lg-more p{margin:0 0 3px 0}
div.lg-claims a.lg-perma{color:#999;text-decoration:none;margin-left:4px}
span.lg-badge{display:inline-block;padding:1px 6px;border-radius:8px;color:#fff;font-size:0.85em;white-space:nowrap}
table.lg-totals{border-collapse:collapse;font-size:0.82em;width:100%;table-layout:fixed}
table.lg-totals td,table.lg-totals th{padding:2px 4px;border-bottom:1px solid #ddd;text-align:right;
 overflow-wrap:anywhere} table.lg-totals td:first-child,table.lg-totals th:first-child{text-align:left;width:11%}
table.lg-totals span.lg-badge{white-space:normal}
div.lg-results{border:1px solid #bbb;border-radius:6px;padding:6px 10px;margin:0.4em 0 1em 0;font-size:0.9em}
div.lg-results table{width:100%;border-collapse:collapse;table-layout:fixed}
div.lg-results td,div.lg-results th{padding:2px 6px;border-bottom:1px solid #e3e3e3;vertical-align:top;
 text-align:left;overflow-wrap:anywhere}
div.lg-results p{margin:0.3em 0}
</style>"""


def _esc(x) -> str:
    import html

    return html.escape(str(x))


#: how a prediction of ours reads: it held or it failed
OURS_LABELS = {"reproduced": "held", "deviates": "failed"}


def badge(cat: str, label: str | None = None) -> str:
    """A coloured status badge (HTML) for a scorecard category (shown as ``label`` if given)."""
    return (
        f'<span class="lg-badge" style="background:{_BADGE.get(cat, "#555")}">'
        f"{_esc(label or cat)}</span>"
    )


def short_value(v, width: int = 40) -> str:
    """A claim value in a few words for a table cell: a long list by its ends and its length, a
    dict by its first two items, a long text cut at a word (the full value is in the row's
    details)."""
    if isinstance(v, (list, tuple)) and len(v) > 3:
        return f"{fmt_value(v[0])} … {fmt_value(v[-1])} ({len(v)} values)"
    if isinstance(v, dict) and not set(v) >= {"mean", "lo", "hi"} and len(v) > 2:
        return "; ".join(f"{k}: {fmt_value(x)}" for k, x in list(v.items())[:2]) + "; …"
    text = fmt_value(v)
    if len(text) > width:
        text = text[:width].rsplit(" ", 1)[0] + " …"
    return text


def claim_notes(r: dict) -> list[str]:
    """The collapsed part of a claim's row (HTML paragraphs): check kind and protocol, the one-line
    justification, interval or tolerance, the declared cause and our explanation, the id."""
    prot = "self-check" if r.get("group") == "self-check" else protocol_label(r)
    notes = []
    for key, name in (("paper_value", "paper"), ("our_value", "ours")):
        full = fmt_value(r.get(key))
        if short_value(r.get(key)) != full:
            notes.append(f"<b>{name}, in full:</b> {_esc(full)}")
    notes.append(
        f"<b>check:</b> {_esc(r.get('check') or '—')} · <b>protocol:</b> {_esc(prot)}"
    )
    if r.get("why"):
        notes.append(f"<b>why this check:</b> {_esc(r['why'])}")
    if r.get("interval"):
        notes.append(f"<b>interval:</b> {_esc(fmt_value(r['interval']))}")
    if r.get("tolerance") is not None:
        notes.append(f"<b>tolerance:</b> ± {_esc(fmt_value(r['tolerance']))}")
    if r.get("cause"):
        notes.append(f"<b>cause:</b> {_esc(r['cause'])}")
    if r.get("explanation"):
        notes.append(
            f"<b>{'why it deviates' if r['status'] == 'deviates' else 'reason'}:</b> "
            f"{_esc(r['explanation'])}"
        )
    if r.get("declared_deviation_holds"):
        notes.append("<b>note:</b> a deviation was declared but the check now holds")
    notes.append(
        f"<b>id:</b> <code>{_esc(r['id'])}</code> · {_esc(r.get('source') or '—')}"
    )
    return [f"<p>{n}</p>" for n in notes]


def claim_row(r: dict, *, anchor: bool = True, where: bool = True) -> str:
    """One claim as one row (statement | paper | ours | status) that opens to its details, which
    span the table's width. ``anchor``: the row carries ``id="claim-<id>"`` and a permalink; the
    ``data-*`` attributes are what the scorecard filters and sorts on."""
    cat = category(r)
    prot = (
        "self-check" if r.get("group") == "self-check" else (r.get("protocol") or "—")
    )
    attrs = (
        f'data-chapter="{_esc(r.get("chapter"))}" data-status="{_esc(cat)}" '
        f'data-check="{_esc(r.get("check") or "none")}" data-protocol="{_esc(prot)}" '
        f'data-group="{_esc(r.get("group", "paper"))}"'
    )
    ident = f' id="claim-{_esc(r["id"])}"' if anchor else ""
    label = OURS_LABELS.get(cat, cat) if r.get("group") == "ours" else cat
    where_note = "" if where else f"<p><b>where:</b> {_esc(r['location'])}</p>"
    perma = (
        f'<a class="lg-perma" href="#claim-{_esc(r["id"])}" title="link to this claim">#</a>'
        if anchor
        else ""
    )
    return (
        f'<details class="lg-claim"{ident} {attrs}><summary>'
        f"<span>{_esc(r['statement'])}"
        + (f" <i>({_esc(r['location'])})</i>" if where else "")
        + f"{perma}</span>"
        f"<span>{_esc(short_value(r['paper_value']))}</span>"
        f"<span>{_esc(short_value(r['our_value']))}</span><span>{badge(cat, label)}</span>"
        f'</summary><div class="lg-more">{where_note}{"".join(claim_notes(r))}</div></details>'
    )


def claims_html(
    rows: list[dict], *, css: bool = True, anchor: bool = True, where: bool = True
) -> str:
    """Ledger records as the book's compact claims table: one row per claim — statement (with
    the paper's location) | paper | ours | status — each opening to its check kind, protocol,
    justification, cause and id (:func:`claim_row`)."""
    head = (
        '<div class="lg-claims"><div class="lg-row"><span>claim</span><span>paper</span>'
        "<span>ours</span><span>status</span></div>"
    )
    body = "".join(claim_row(r, anchor=anchor, where=where) for r in rows)
    return (_CSS if css else "") + head + body + "</div>"


def totals_html(folder: str | Path | None = None) -> str:
    """The scorecard's totals per chapter (paper claims; self-checks counted apart) as HTML."""
    paper = scorecard(folder)
    selfc = scorecard(folder, group="self-check")
    ours = scorecard(folder, group="ours")
    cols = [k for k in CATEGORIES]
    out = [_CSS, '<table class="lg-totals"><thead><tr><th>chapter</th>']
    out += [f"<th>{badge(k)}</th>" for k in cols] + [
        "<th>paper claims</th><th>self-checks</th><th>our predictions (held)</th>"
        "</tr></thead><tbody>"
    ]
    for (_, r), (_, s), (_, o) in zip(
        paper.iterrows(), selfc.iterrows(), ours.iterrows()
    ):
        strong = r["chapter"] == "all"
        cell = (lambda v: f"<b>{v}</b>") if strong else (lambda v: str(v))
        held = int(o["reproduced"]) + int(o["direction"])
        mine = f"{int(o['total'])} ({held})" if int(o["total"]) else "—"
        out.append(
            f"<tr><td>{cell(r['chapter'])}</td>"
            + "".join(f"<td>{cell(int(r[k]))}</td>" for k in cols)
            + f"<td>{cell(int(r['total']))}</td><td>{cell(int(s['total']))}</td>"
            + f"<td>{cell(mine)}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


class ClaimRows:
    """Claim records as the book's claims table: displayed as HTML (``_repr_html_``); ``data`` is
    the same rows as a DataFrame and ``records`` the ledger records."""

    def __init__(self, records: list[dict]):
        self.records = list(records)

    @property
    def data(self):
        return claims_frame(self.records)

    def _repr_html_(self) -> str:
        return claims_html(self.records)


TITLES = {
    "ch0": "Chapter 0 — attention dilution (background)",
    "ch1": "Chapter 1 — Chiang & Cholak (2022)",
    "ch2": "Chapter 2 — Zhu & Chiang (2026)",
    "ch3": "Chapter 3 — Han, Chai & Wang (2026)",
    "ch4": "Chapter 4 — Huang & Li (2025)",
    "ch5": "Chapter 5 — across the papers (our experiments)",
}


#: the columns of the ledger's CSV download (one row per claim; lists and dicts as JSON)
CSV_FIELDS = (
    "id",
    "chapter",
    "group",
    "location",
    "statement",
    "paper_value",
    "our_value",
    "category",
    "status",
    "check",
    "tolerance",
    "interval",
    "protocol",
    "protocol_note",
    "cause",
    "explanation",
    "why",
    "source",
    "scale",
)


def ledger_csv(folder: str | Path | None = None) -> str:
    """Every chapter's ledger as CSV text (:data:`CSV_FIELDS`; ``category`` is the scorecard's)."""
    import csv
    import io
    import json

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in load_all(folder):
        row = []
        for k in CSV_FIELDS:
            v = category(r) if k == "category" else r.get(k)
            row.append(
                json.dumps(v, ensure_ascii=False)
                if isinstance(v, (list, dict))
                else ""
                if v is None
                else v
            )
        w.writerow(row)
    return buf.getvalue()


_FILTER_JS = """<script>
(function(){
var root=document.getElementById('lg-scorecard'); if(!root) return;
var rows=Array.prototype.slice.call(root.querySelectorAll('details.lg-claim'));
rows.forEach(function(r,i){r.setAttribute('data-order',i);});
var bar=document.getElementById('lg-filters'), count=document.getElementById('lg-count');
var rank={reproduced:0,direction:1,deviates:2,'not-reproducible':3,'not-attempted':4};
function val(name){return bar.querySelector('[name='+name+']').value;}
function apply(){
 var q=val('q').toLowerCase(), n=0;
 rows.forEach(function(r){
  var ok=['chapter','status','check','protocol','group'].every(function(k){
   var v=val(k); return !v || r.getAttribute('data-'+k)===v;});
  if(ok && q){ok=r.textContent.toLowerCase().indexOf(q)>=0;}
  r.style.display=ok?'':'none'; if(ok) n++;});
 count.textContent=n+' of '+rows.length+' claims shown';
 var key=val('sort'), sorted=rows.slice().sort(function(a,b){
  var x=+a.getAttribute('data-order'), y=+b.getAttribute('data-order');
  if(key==='status'){var d=rank[a.getAttribute('data-status')]-rank[b.getAttribute('data-status')]; if(d) return d;}
  if(key==='check'||key==='protocol'){var s=a.getAttribute('data-'+key).localeCompare(b.getAttribute('data-'+key)); if(s) return s;}
  if(key==='statement'){var t=a.querySelector('summary span').textContent.localeCompare(b.querySelector('summary span').textContent); if(t) return t;}
  return x-y;});
 sorted.forEach(function(r){root.appendChild(r);});}
bar.addEventListener('input',apply); bar.addEventListener('change',apply);
bar.querySelector('[name=reset]').addEventListener('click',function(){
 bar.querySelectorAll('select').forEach(function(s){s.selectedIndex=0;});
 bar.querySelector('[name=q]').value=''; apply();});
function openHash(){var h=decodeURIComponent(location.hash.slice(1)); if(h.indexOf('claim-')!==0) return;
 var el=document.getElementById(h); if(!el) return;
 if(el.style.display==='none'){bar.querySelector('[name=reset]').click();}
 el.open=true; el.scrollIntoView();}
window.addEventListener('hashchange',openHash);
apply(); openHash();
})();
</script>"""


def _options(name: str, label: str, values) -> str:
    opts = "".join(f'<option value="{_esc(v)}">{_esc(v)}</option>' for v in values)
    return (
        f'<label>{_esc(label)} <select name="{name}"><option value="">all</option>'
        f"{opts}</select></label>"
    )


def scorecard_markdown(
    folder: str | Path | None = None,
    figure: str | None = None,
    downloads: tuple[str, str] | None = None,
) -> str:
    """The generated body of the scorecard page (MyST markdown with raw HTML): the totals, the
    figure ``figure`` (a path relative to the page that includes the body), download links to
    the ledger as CSV and JSON (``downloads``: their paths relative to the page), then every
    claim of every chapter as one compact row (:func:`claim_row`, anchor ``claim-<id>``, a
    permalink), with client-side filters (chapter, status, check kind, protocol, paper claim or
    self-check), a text search and a sort — plain JavaScript, offline."""
    rows = load_all(folder)
    parts = [totals_html(folder), ""]
    if figure:
        parts += [
            f"```{{figure}} {figure}",
            ":name: fig-scorecard-totals",
            ":width: 100%",
            "",
            "Paper claims per chapter by status (self-checks not counted).",
            "```",
            "",
        ]
    if downloads:
        csv_path, json_path = downloads
        parts += [
            f"Download the whole ledger: {{download}}`CSV <{csv_path}>` · "
            f"{{download}}`JSON <{json_path}>` (one record per claim, every field).",
            "",
        ]
    present = lambda k: sorted({r.get(k) or "none" for r in rows})  # noqa: E731
    checks = sorted({r.get("check") or "none" for r in rows})
    protos = sorted(
        {
            "self-check"
            if r.get("group") == "self-check"
            else (r.get("protocol") or "—")
            for r in rows
        }
    )
    filters = (
        '<div id="lg-filters" class="lg-filters">'
        + _options(
            "chapter", "chapter", [c for c in CHAPTERS if c in present("chapter")]
        )
        + _options("status", "status", [c for c in CATEGORIES])
        + _options("check", "check", checks)
        + _options("protocol", "protocol", protos)
        + _options("group", "kind", ["paper", "self-check"])
        + '<label>search <input name="q" type="search" size="18"></label>'
        '<label>sort <select name="sort"><option value="book">book order</option>'
        '<option value="status">status</option><option value="check">check kind</option>'
        '<option value="protocol">protocol</option><option value="statement">statement</option>'
        '</select></label><button type="button" name="reset">reset</button>'
        ' <span id="lg-count"></span></div>'
    )
    parts += [
        "## Every claim",
        "",
        "Each row opens to its check, protocol, justification and cause; **#** is the claim's "
        "permalink. Chapters: "
        + "; ".join(f"{c} = {TITLES[c].split(' — ')[1]}" for c in CHAPTERS)
        + ".",
        "",
        "<style>div.lg-filters{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:0.86em;"
        "margin:0.4em 0;align-items:center} div.lg-filters select,div.lg-filters input"
        "{font-size:1em} #lg-scorecard{font-size:0.8em} #lg-scorecard .lg-row,"
        "#lg-scorecard details.lg-claim>summary{grid-template-columns:minmax(0,63fr) "
        "minmax(0,13fr) minmax(0,13fr) minmax(0,11fr);line-height:1.35}</style>",
        filters,
        "",
        claims_html(rows, css=False, where=False).replace(
            '<div class="lg-claims">', '<div class="lg-claims" id="lg-scorecard">', 1
        ),
        "",
        _FILTER_JS,
        "",
    ]
    return "\n".join(parts) + "\n"


def scorecard_figure(path: str | Path, folder: str | Path | None = None) -> Path:
    """Save the bar chart of paper claims per chapter and status to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lengthgen import plotting

    tot = scorecard(folder)
    tot = tot[tot["chapter"] != "all"]
    fig, ax = plotting.figure(width=6.4, height=2.4)
    left = [0] * len(tot)
    for cat in CATEGORIES:
        vals = tot[cat].tolist()
        ax.barh(tot["chapter"], vals, left=left, color=_BADGE[cat], label=cat)
        left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set(xlabel="paper claims (count)", ylabel="chapter")
    ax.legend(
        ncol=5,
        fontsize=9,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        handlelength=1.2,
        columnspacing=1.0,
    )
    plotting.finish(fig)
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def results_box_markdown(folder: str | Path | None = None) -> str:
    """The intro page's results box (HTML): per chapter its headline finding and main deviation
    (``HEADLINE`` of the chapter's claims module, each linked to its scorecard rows) and its
    counts, then the book's totals."""
    tot = scorecard(folder)
    row_of = {r["chapter"]: r for _, r in tot.iterrows()}

    selfc = {
        r["chapter"]: int(r["total"])
        for _, r in scorecard(folder, group="self-check").iterrows()
    }

    ours = {r["chapter"]: r for _, r in scorecard(folder, group="ours").iterrows()}

    def counts(r) -> str:
        out = " · ".join(f"{int(r[k])} {k}" for k in CATEGORIES if int(r[k])) or "none"
        o = ours.get(r["chapter"])
        if o is not None and int(o["total"]):
            held = int(o["reproduced"]) + int(o["direction"])
            mine = f"our predictions: {held} of {int(o['total'])} held"
            out = mine if not int(r["total"]) else f"{out}; {mine}"
        n = selfc.get(r["chapter"], 0)
        return out + (f" (and {n} self-checks)" if n else "")

    def links(ids) -> str:
        return " ".join(
            f'<a href="scorecard.html#claim-{_esc(i)}">[{n + 1}]</a>'
            for n, i in enumerate(ids)
        )

    out = [
        _CSS,
        '<div class="lg-results"><table class="lg-claims"><colgroup><col style="width:16%">'
        '<col style="width:34%"><col style="width:34%"><col style="width:16%"></colgroup><thead><tr>'
        "<th>chapter</th><th>main finding</th><th>main deviation</th><th>paper claims</th></tr></thead><tbody>",
    ]
    for ch in CHAPTERS:
        head = getattr(chapter_claims(ch), "HEADLINE", None) or {}
        r = row_of[ch]
        out.append(
            f"<tr><td>{_esc(TITLES[ch])}</td>"
            f"<td>{_esc(head.get('finding', '—'))} {links(head.get('finding_ids', []))}</td>"
            f"<td>{_esc(head.get('deviation', '—'))} {links(head.get('deviation_ids', []))}</td>"
            f"<td>{_esc(counts(r))}</td></tr>"
        )
    a = row_of["all"]
    out.append(
        f"<tr><td><b>all chapters</b></td><td colspan=2><b>{int(a['total'])} paper claims:</b> "
        f"{_esc(counts(a))}</td><td></td></tr></tbody></table></div>"
    )
    return "".join(out) + "\n"


def _label(r: dict) -> str:
    cat = category(r)
    return OURS_LABELS.get(cat, cat) if r.get("group") == "ours" else cat


def counts_line(rows: list[dict], group: str = "paper") -> str:
    """``12 reproduced · 3 direction · …`` over the claims of ``group`` in ``rows`` (the paper's
    claims by default; self-checks and our predictions apart)."""
    paper = [r for r in rows if r.get("group", "paper") == group]
    out = " · ".join(
        f"{n} {k}" for k in CATEGORIES if (n := sum(category(r) == k for r in paper))
    )
    return out or "none"


def headline_claims(chapter: str) -> list[dict]:
    """The chapter's 3–5 headline claims for its results box: ``HEADLINE["claims"]`` of its claims
    module, a list of ``{"claim": plain words, "id": ledger id}``."""
    head = getattr(chapter_claims(chapter), "HEADLINE", None) or {}
    items = head.get("claims") or []
    if not 3 <= len(items) <= 5 and chapter != "ch0":
        raise ConfigError(
            f"{chapter}: HEADLINE['claims'] lists {len(items)} claims; a results box shows 3 to 5"
        )
    return items


def results_box(chapter: str, folder: str | Path | None = None):
    """The results box on a chapter's first screen, generated from its committed ledger: the
    paper's headline claims in plain words with the paper's value, ours and our verdict (each
    linked to its row of the scorecard), the chapter's claim counts, its main deviation in one
    sentence (``HEADLINE["deviation"]``) and the cost of reproducing its stored results
    (:func:`lengthgen.cost.chapter_cost`)."""
    from lengthgen import cost

    rows = load_ledger(chapter, folder)
    by_id = {r["id"]: r for r in rows}
    head = getattr(chapter_claims(chapter), "HEADLINE", None) or {}
    items = headline_claims(chapter)
    missing = [it["id"] for it in items if it["id"] not in by_id]
    if missing:
        raise ConfigError(
            f"{chapter}: headline claims not in its ledger: {', '.join(missing)}"
        )
    link = "../book/scorecard.html#claim-"

    def short(v):  # a box cell: the value in a few words
        return short_value(v, 26)

    body = []
    for it in items:
        r = by_id[it["id"]]
        body.append(
            f"<tr><td>{_esc(it['claim'])}</td><td>{_esc(short(r['paper_value']))}</td>"
            f"<td>{_esc(short(r['our_value']))}</td>"
            f'<td><a href="{link}{_esc(r["id"])}">{badge(category(r), _label(r))}</a></td></tr>'
        )
    n_paper = sum(r.get("group", "paper") == "paper" for r in rows)
    n_ours = sum(r.get("group") == "ours" for r in rows)
    n_self = len(rows) - n_paper - n_ours
    c = cost.chapter_cost(chapter)
    spent = (
        f"its stored full-scale results took {cost.fmt_seconds(c['cpu_s'])} of CPU "
        f"(about {cost.fmt_seconds(c['projection_2core_s'])} on two cores)"
        if c["cpu_recorded"] and c["cpu_s"] >= 1
        else "its stored results take under a second to compute"
        if c["cpu_recorded"]
        else "it stores no full-scale results"
    )
    dev = head.get("deviation")
    dev_links = " ".join(
        f'<a href="{link}{_esc(i)}">[{n + 1}]</a>'
        for n, i in enumerate(head.get("deviation_ids", []))
    )
    parts = [
        _CSS,
        '<div class="lg-results" id="results-box"><p><b>Results at a glance.</b> '
        + (
            f"Of the paper's {n_paper} claims we check here: {_esc(counts_line(rows))}"
            + (f" (and {n_self} self-checks of our own code)" if n_self else "")
            if n_paper
            else f"Our experiments, not the papers' claims: of our {n_ours} predictions, each "
            f"fixed before its run: {_esc(counts_line(rows, 'ours'))}"
            + (f" (and {n_self} self-checks of our own code)" if n_self else "")
            if n_ours
            else f"This chapter checks no paper's claims; it runs {n_self} self-checks "
            "of our own code"
        )
        + ".</p>",
    ]
    if body:
        parts.append(
            '<table><colgroup><col style="width:55%"><col style="width:15%">'
            '<col style="width:15%"><col style="width:15%"></colgroup><thead><tr>'
            f"<th>{'the paper claims' if n_paper else 'we predicted' if n_ours else 'the chapter checks'}</th>"
            f"<th>{'paper' if n_paper else 'predicted' if n_ours else 'expected'}</th>"
            "<th>ours</th><th>verdict</th></tr>"
            "</thead><tbody>" + "".join(body) + "</tbody></table>"
        )
    if dev:
        parts.append(f"<p><b>Main deviation.</b> {_esc(dev)} {dev_links}</p>")
    parts.append(
        f"<p><b>Cost.</b> This page executes at smoke scale in minutes; {spent}.</p></div>"
    )
    from lengthgen.tables import HTML

    return HTML("".join(parts))

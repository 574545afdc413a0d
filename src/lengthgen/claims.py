"""The claims ledger: every number a chapter quotes from its paper, next to ours, checked by a
comparison chosen before our value was seen (``book/claims.md``). Chapters declare :class:`Claim`
and :class:`Unchecked` records in ``chapters/chN/claims.py``; a notebook's :class:`Ledger` shows
them and writes ``results/claims/chN.json``; :func:`check_ledgers` re-evaluates the stored-result
claims; :func:`compare` is each check. Imports no chapter statically and no page code."""

from __future__ import annotations

import importlib
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lengthgen.config import CHAPTERS, ConfigError, check_choice, get_scale
from lengthgen.rounding import _as_list, bound_residues, fmt_value, keep_within_rounding
from lengthgen.rounding import residue_of, round_sig, same_within_rounding
from lengthgen.store import ResultFileError, _clean, atomic_write_json, read_json, results_dir
from lengthgen.store import cells_dir, load_stored

CHECKS = ("value", "interval", "equal", "direction", "predicate")
#: ``ours``: a prediction of our own (chapter 5), counted apart from the papers' claims
GROUPS = ("paper", "self-check", "ours")
SOURCES = ("stored", "live")
PROTOCOL_KINDS = ("paper", "reduced", "modified")
#: a chapter's pages: its chapter page and its details page (protocol minutiae, secondary studies)
PAGES = ("main", "details")
#: the categories the scorecard counts: a direction check that holds is its own category
CATEGORIES = ("reproduced", "direction", "deviates", "not-reproducible", "not-attempted")
#: the cause of a failed prediction of ours (a finding, not an error: no cause declared)
PREDICTION_FAILED = "our prediction did not hold"


class ClaimFailed(AssertionError):
    """A claim's check failed and the chapter had not declared the deviation."""


# --------------------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Protocol:
    """The paper's protocol, a reduced one or a modified one; ``reduced`` says what differs."""

    kind: str = "paper"
    reduced: str = ""

    def __post_init__(self):
        check_choice("protocol", self.kind, PROTOCOL_KINDS)
        if self.kind != "paper" and not self.reduced:
            raise ConfigError(f"a {self.kind} protocol must say what differs from the paper's")


PAPER_PROTOCOL = Protocol()


def reduced(what: str) -> Protocol:
    """A reduced protocol (e.g. "p = 17, 2,000 updates")."""
    return Protocol("reduced", what)


def modified(what: str) -> Protocol:
    """A modified protocol: our model or setting differs from the paper's in ``what``."""
    return Protocol("modified", what)


@dataclass(frozen=True)
class Deviation:
    """A deviation declared before the check runs: a cause from the chapter's ``CAUSES`` and our
    explanation (never built from the measured value)."""

    cause: str
    explanation: str


@dataclass(frozen=True)
class Claim:
    """One checked claim of a chapter's paper (or one of our self-checks): ``measure(results)``
    computes ours from a :class:`StoredResults` (a ``live`` claim gets it from the notebook);
    ``holds(ours)`` decides ``direction`` / ``predicate`` checks. Floats of ours below ``residue``
    are rounding and are written as the bound ``"≤ residue"`` (:func:`residue_of`)."""

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
        c, res, iv, tol = self.check, self.residue, self.interval, self.tolerance
        check_choice(f"check of {self.id}", c, CHECKS)
        if res is not None and not (isinstance(res, (int, float)) and res > 0):
            raise ConfigError(f"claim {self.id}: residue must be a number > 0, got {res!r}")
        check_choice(f"source of {self.id}", self.source, SOURCES)
        check_choice(f"group of {self.id}", self.group, GROUPS)
        if not self.why:
            raise ConfigError(f"claim {self.id}: say in one line why this comparison (why=...)")
        if self.source == "stored" and not callable(self.measure):
            raise ConfigError(f"claim {self.id}: a stored claim needs measure(results) -> ours")
        if c == "value" and (tol is None or not float(tol) >= 0):
            raise ConfigError(f"claim {self.id}: a value check needs tolerance >= 0")
        if c == "interval" and (iv is None or len(iv) != 2 or not float(iv[0]) <= float(iv[1])):
            raise ConfigError(f"claim {self.id}: interval check needs interval=(lo, hi), lo <= hi")
        if c in ("direction", "predicate") and not callable(self.holds):
            raise ConfigError(f"claim {self.id}: a {c} check needs holds(ours) -> bool")
        if self.deviation is not None and not isinstance(self.deviation, Deviation):
            raise ConfigError(f"claim {self.id}: deviation must be a Deviation(cause, explanation)")


@dataclass(frozen=True)
class Unchecked:
    """A claim the book does not check: ``not-reproducible`` or ``not-attempted``, with a reason."""

    id: str
    location: str
    statement: str
    paper_value: Any
    status: str
    reason: str
    group: str = "paper"

    def __post_init__(self):
        check_choice(f"status of {self.id}", self.status, ("not-reproducible", "not-attempted"))
        if not self.reason:
            raise ConfigError(f"claim {self.id}: an unchecked claim needs a reason")


# --------------------------------------------------------------------------- evaluation
def compare(claim: Claim, ours) -> bool:
    """Whether ``ours`` passes ``claim``'s check: ``value`` (|ours − paper| ≤ tolerance,
    element-wise), ``interval`` (ours in [lo, hi]), ``equal``, ``direction`` (only the sign or
    order) and ``predicate`` (a precise property), both ``holds(ours)``."""
    if claim.check in ("direction", "predicate"):
        out = claim.holds(ours)
        if not isinstance(out, bool) and type(out).__name__ != "bool_":
            raise TypeError(f"claim {claim.id}: holds() must return a bool, got {out!r}")
        return bool(out)
    if claim.check == "interval":
        lo, hi = (float(v) for v in claim.interval)
        return ours is not None and math.isfinite(float(ours)) and lo <= float(ours) <= hi
    a, b = _as_list(claim.paper_value), _as_list(ours)
    if a is None and b is None:
        a, b = [claim.paper_value], [ours]
    if claim.check == "equal":
        return _clean(a) == _clean(b)
    if a is None or b is None or len(a) != len(b):
        raise ValueError(
            f"claim {claim.id}: cannot compare {claim.paper_value!r} with {ours!r} element-wise"
        )
    tol = float(claim.tolerance)
    return all(
        y is not None and math.isfinite(float(y)) and abs(float(x) - float(y)) <= tol
        for x, y in zip(a, b)
    )


class EmptyPopulation(ConfigError):
    """A claim whose population is empty: nothing to judge, so the ledger refuses to score it."""


def evaluate(claim: Claim, ours, *, chapter: str, scale: str) -> dict:
    """The ledger record of ``claim`` with our value ``ours``; raises :class:`ClaimFailed` (failed,
    no deviation declared) or :class:`EmptyPopulation` (an empty list or dict, but for ``equal``)."""
    ours = _clean(ours)
    if claim.check != "equal" and isinstance(ours, (list, tuple, dict)) and not ours:
        raise EmptyPopulation(
            f"claim {claim.id}: its population is empty (our value is {ours!r}), so it cannot "
            "be evaluated; restate it over a non-empty population or declare it Unchecked"
        )
    ok = compare(claim, ours)
    if not ok and claim.deviation is None and claim.group != "ours":
        raise ClaimFailed(
            f"claim {claim.id} failed: paper {claim.paper_value!r} vs ours {ours!r} "
            f"({claim.check}; tolerance={claim.tolerance!r}, interval={claim.interval!r}). "
            "Fix the reproduction, or declare the deviation with its cause in the chapter's claims."
        )
    rec = dict(id=claim.id, chapter=chapter, group=claim.group, location=claim.location)
    rec.update(statement=claim.statement, paper_value=_clean(claim.paper_value))
    rec["paper_uncertainty"] = _clean(claim.paper_uncertainty)
    rec["our_value"] = round_sig(bound_residues(ours, residue_of(claim)), claim.digits)
    iv = None if claim.interval is None else [float(v) for v in claim.interval]
    rec.update(check=claim.check, tolerance=claim.tolerance, interval=iv, why=claim.why)
    rec.update(source=claim.source, scale="full" if claim.source == "stored" else scale)
    rec.update(protocol=claim.protocol.kind, protocol_note=claim.protocol.reduced)
    dev = claim.deviation
    if dev is not None:
        cause, explanation = dev.cause, dev.explanation
    else:  # a prediction of ours that failed is a result, reported as such (no declared cause)
        cause, explanation = (None if ok else PREDICTION_FAILED), None
    rec.update(status="reproduced" if ok else "deviates", holds=ok, cause=cause)
    rec.update(explanation=explanation, declared_deviation_holds=dev is not None and ok)
    return rec


#: the fields of a ledger record, in the order :func:`evaluate` writes them
RECORD_FIELDS = tuple(
    "id chapter group location statement paper_value paper_uncertainty our_value check tolerance "
    "interval why source scale protocol protocol_note status holds cause explanation "
    "declared_deviation_holds".split()
)


def stored_record(c: Claim | Unchecked, results: StoredResults, chapter: str) -> dict:
    """The record of a stored claim measured on ``results``, or of an :class:`Unchecked` one."""
    if not isinstance(c, Unchecked):
        return evaluate(c, c.measure(results), chapter=chapter, scale="full")
    rec = dict.fromkeys(RECORD_FIELDS)
    rec.update(id=c.id, chapter=chapter, group=c.group, location=c.location)
    rec.update(statement=c.statement, paper_value=_clean(c.paper_value), protocol_note="")
    rec.update(status=c.status, explanation=c.reason, declared_deviation_holds=False)
    return rec


def category(rec: dict) -> str:
    """Scorecard category of a ledger record: a holding ``direction`` check counts as "direction"."""
    direction = rec["status"] == "reproduced" and rec.get("check") == "direction"
    return "direction" if direction else rec["status"]


# --------------------------------------------------------------------------- a chapter's declarations
def page_of(module, claim_id: str) -> str:
    """``details`` if the id starts with a prefix in the chapter's ``DETAILS``, else ``main``."""
    prefixes = getattr(module, "DETAILS", ()) or ()
    return "details" if any(claim_id.startswith(p) for p in prefixes) else "main"


def chapter_claims(chapter: str):
    """The ``claims`` module of ``chapter`` (``lengthgen.chapters.chN.claims``)."""
    check_choice("chapter", chapter, CHAPTERS)
    mod = importlib.import_module(f"lengthgen.chapters.{chapter}.claims")
    if twice := sorted(i for i, n in Counter(c.id for c in mod.CLAIMS).items() if n > 1):
        raise ConfigError(f"{chapter}: repeated claim ids {twice}")
    for c in mod.CLAIMS:
        if not c.id.startswith(chapter + "."):
            raise ConfigError(f"claim id {c.id!r} must start with '{chapter}.'")
        if isinstance(c, Claim) and c.deviation is not None and c.deviation.cause not in mod.CAUSES:
            raise ConfigError(
                f"claim {c.id}: cause {c.deviation.cause!r} is not one of {chapter}'s CAUSES: "
                f"{', '.join(mod.CAUSES)}"
            )
    return mod


class StoredResults:
    """A chapter's stored full-scale cells for ``measure`` functions, read lazily by ``cell(name)``
    (the chapter's ``experiments.load_stored_cell``, else checked by ``experiments.schema``)."""

    def __init__(self, chapter: str, folder: str | Path | None = None):
        self.chapter = check_choice("chapter", chapter, CHAPTERS)
        self.folder = cells_dir(chapter, folder)
        self._cache: dict[str, Any] = {}

    def cell(self, name: str):
        if name not in self._cache:
            mod = importlib.import_module(f"lengthgen.chapters.{self.chapter}.experiments")
            if hasattr(mod, "load_stored_cell"):  # the chapter's own checked reader
                obj = mod.load_stored_cell(name, folder=self.folder)
            else:
                schema = mod.schema(name, "full")
                obj = load_stored(self.chapter, name, schema=schema, folder=self.folder)
            self._cache[name] = obj["data"]
        return self._cache[name]


# --------------------------------------------------------------------------- the notebook's ledger
class Ledger:
    """The claims of one page of a chapter while its notebook executes: :meth:`show` (stored
    claims), :meth:`record` (live ones), :meth:`save` (refuses while a live claim is missing)."""

    def __init__(self, chapter: str, scale=None, results=None, page: str = "main"):
        self.module = chapter_claims(chapter)
        self.chapter = chapter
        self.page = check_choice("page", page, PAGES)
        self.scale = get_scale(scale)
        self.results = results or StoredResults(chapter)
        self.by_id = {c.id: c for c in self.module.CLAIMS}
        self._records: dict[str, dict] = {}

    def _mine(self):
        return [c for c in self.module.CLAIMS if page_of(self.module, c.id) == self.page]

    def _claim(self, id: str, source: str | None = None):
        if id not in self.by_id:
            raise ConfigError(
                f"unknown claim {id!r} of {self.chapter}; declared: {', '.join(self.by_id)}"
            )
        if (other := page_of(self.module, id)) != self.page:
            raise ConfigError(
                f"claim {id} is shown on the {other} page of {self.chapter}, not the "
                f"{self.page} page (DETAILS in lengthgen.chapters.{self.chapter}.claims)"
            )
        c = self.by_id[id]
        if source is not None and (not isinstance(c, Claim) or c.source != source):
            raise ConfigError(f"claim {id} is not a {source} claim")
        return c

    def _keep(self, rec: dict) -> "ClaimRows":
        self._records[rec["id"]] = rec
        return ClaimRows([rec])

    def show(self, id: str) -> "ClaimRows":
        """Evaluate stored claim ``id`` (or show an unchecked one); returns its table row."""
        c = self._claim(id)
        c = c if isinstance(c, Unchecked) else self._claim(id, "stored")
        return self._keep(stored_record(c, self.results, self.chapter))

    def record(self, id: str, ours) -> "ClaimRows":
        """Record live claim ``id`` with our value ``ours``; returns its table row."""
        c = self._claim(id, "live")
        return self._keep(evaluate(c, ours, chapter=self.chapter, scale=self.scale))

    def claims(self, *items) -> "ClaimRows":
        """Several claims as one table: stored claim ids and live ``(id, ours)`` pairs."""
        recs = []
        for it in items:
            if isinstance(it, tuple) and len(it) == 2:
                recs += self.record(*it).records
            elif isinstance(it, str):
                recs += self.show(it).records
            else:
                raise ConfigError(f"each item must be a claim id or an (id, ours) pair, got {it!r}")
        return ClaimRows(recs)

    def held(self, id: str) -> bool:
        """Whether stored claim ``id`` holds (is ``reproduced``), for generated prose."""
        if isinstance(self._claim(id), Unchecked):
            raise ConfigError(f"claim {id} is not checked, so it neither holds nor fails")
        return self.show(id).records[0]["status"] == "reproduced"

    def outcome(self, *ids: str) -> str:
        """The verdict of claims ``ids`` in words: "all 3 held", "2 of 3 held", "it failed"…"""
        if not ids:
            raise ConfigError("outcome needs at least one claim id")
        n, k = len(ids), sum(self.held(i) for i in ids)
        if n == 1:
            return "it held" if k else "it failed"
        return f"all {n} held" if k == n else f"none of {n} held" if k == 0 else f"{k} of {n} held"

    def records(self) -> list[dict]:
        """This page's records in declaration order (stored ones evaluated if not shown)."""
        live = [c.id for c in self._mine() if getattr(c, "source", None) == "live"]
        if missing := [i for i in live if i not in self._records]:
            raise ConfigError(f"{self.chapter}: live claims never recorded: {', '.join(missing)}")
        return [
            self._records.get(c.id) or stored_record(c, self.results, self.chapter)
            for c in self._mine()
        ]

    def save(self, folder: str | Path | None = None) -> Path:
        """Write this page's part of the ledger atomically; a value that differs from the written
        one only by rounding keeps the written value (:func:`keep_within_rounding`)."""
        recs, path = self.records(), ledger_path(self.chapter, self.page, folder)
        digits = {c.id: getattr(c, "digits", 4) for c in self._mine()}
        return atomic_write_json(path, keep_within_rounding(recs, path, digits))

    def unshown(self) -> list[str]:
        """This page's declared claims not displayed yet."""
        return [c.id for c in self._mine() if c.id not in self._records]


# --------------------------------------------------------------------------- reading and checking
def ledger_path(chapter: str, page: str = "main", folder: str | Path | None = None):
    """``results/claims/chN.json`` (chapter page) or ``chN.details.json`` (details page)."""
    check_choice("chapter", chapter, CHAPTERS)
    check_choice("page", page, PAGES)
    name = chapter if page == "main" else f"{chapter}.{page}"
    return Path(folder or results_dir() / "claims") / f"{name}.json"


def load_ledger(chapter: str, folder: str | Path | None = None) -> list[dict]:
    """One chapter's committed ledger: the chapter page's records, then the details page's."""
    rows, seen = [], {}
    for page in PAGES:
        path = ledger_path(chapter, page, folder)
        if not path.exists():
            continue
        part = read_json(path)
        if not isinstance(part, list) or any(
            not isinstance(r, dict) or "id" not in r or "status" not in r for r in part
        ):
            raise ResultFileError(f"corrupt claims file {path}: expected a list of claim records")
        for r in part:
            if r["id"] in seen:
                raise ResultFileError(f"claim {r['id']} is in both {seen[r['id']]} and {path}")
            seen[r["id"]] = path
        rows += part
    return rows


def load_all(folder: str | Path | None = None) -> list[dict]:
    """All chapters' ledgers, in chapter order."""
    return [r for ch in CHAPTERS for r in load_ledger(ch, folder)]


#: record fields fixed by a claim's declaration: a change means the committed ledger is stale
DECLARED_FIELDS = tuple(
    "statement location paper_value check tolerance interval protocol protocol_note group "
    "cause".split()
)


def _changed(old: dict, new: dict, digits: int = 4) -> str | None:
    """Why ``new`` differs from the committed ``old`` record beyond rounding (None if not)."""
    if stale := [k for k in DECLARED_FIELDS if _clean(old.get(k)) != _clean(new.get(k))]:
        return f"declaration changed ({', '.join(stale)}) since the ledger was written; re-run the chapter"
    if old.get("status") != new["status"]:
        return f"status {old.get('status')} → {new['status']}"
    a, b = old.get("our_value"), new["our_value"]
    return None if same_within_rounding(a, b, digits) else f"value {a!r} → {b!r}"


def check_ledgers(chapters=CHAPTERS, results_root: str | Path | None = None) -> list[dict]:
    """Re-evaluate every stored-result claim and compare with the committed ledgers: one row
    ``{chapter, id, problem}`` per changed status or value, undeclared failure, claim on one side
    only or on the wrong page, or declared deviation that now holds."""
    root = Path(results_root) if results_root is not None else results_dir()
    problems = [(ch, cid, why) for ch in chapters for cid, why in _chapter_problems(ch, root)]
    return [{"chapter": ch, "id": cid, "problem": why} for ch, cid, why in problems]


def _chapter_problems(ch: str, root: Path):
    mod = chapter_claims(ch)
    committed = {r["id"]: r for r in load_ledger(ch, root / "claims")}
    declared = {c.id for c in mod.CLAIMS}
    for page in PAGES:
        path = ledger_path(ch, page, root / "claims")
        for r in read_json(path) if path.exists() else []:
            want = page_of(mod, r["id"])
            if r["id"] in declared and want != page:
                yield r["id"], f"recorded in {path.name} but shown on the {want} page"
    for cid in sorted(set(committed) - declared):
        yield cid, "in the committed ledger but no longer declared"
    for cid in [c.id for c in mod.CLAIMS if c.id not in committed]:
        yield cid, "declared but missing from the committed ledger"
    results = StoredResults(ch, root / ch / "cells")
    for c in [c for c in mod.CLAIMS if isinstance(c, Claim) and c.source == "stored"]:
        try:
            new = stored_record(c, results, ch)
        except ClaimFailed as err:
            yield c.id, f"fails without a declared deviation: {err}"
            continue
        if new["declared_deviation_holds"]:
            yield c.id, f"declared deviation ({c.deviation.cause}) now holds"
        if c.id in committed and (why := _changed(committed[c.id], new, c.digits)):
            yield c.id, why


# --------------------------------------------------------------------------- display
def protocol_label(rec: dict) -> str:
    """``paper``, ``reduced: …`` or ``differs: …`` for a ledger record."""
    kind = {"reduced": "reduced", "modified": "differs"}.get(rec.get("protocol"))
    return f"{kind}: {rec.get('protocol_note')}" if kind else rec.get("protocol") or "—"


class ClaimRows:
    """Claim records as the book's claims table; :mod:`lengthgen.pages` sets :attr:`html`."""

    html: Callable[[list[dict]], str] | None = None

    def __init__(self, records: list[dict]):
        self.records = list(records)

    def _repr_html_(self) -> str | None:
        return type(self).html(self.records) if type(self).html else None

    def __repr__(self) -> str:  # where no HTML shows: one line per claim
        return "\n".join(
            f"{category(r)}: {r['statement']} (paper {fmt_value(r['paper_value'])}, ours "
            f"{fmt_value(r['our_value'])}; {r['id']})"
            for r in self.records
        )


def counts_line(rows: list[dict], group: str = "paper") -> str:
    """``12 reproduced · 3 direction · …`` over the claims of ``group`` in ``rows``."""
    n = Counter(category(r) for r in rows if r.get("group", "paper") == group)
    words = OURS_WORDS if group == "ours" else {}
    return " · ".join(f"{n[k]} {words.get(k, k)}" for k in CATEGORIES if n[k]) or "none"


#: how a prediction of ours (chapter 5) reads
OURS_WORDS = {"reproduced": "held", "direction": "held in direction", "deviates": "failed"}

"""The claims ledger: check kinds, declared deviations, self-checks, the complete-ledger rule,
``claims --check`` against committed ledgers, and tamper tests on copies of the stored results."""

import json
import types

import pytest

from lengthgen import claims, pages
from lengthgen.claims import Claim, ClaimFailed, Deviation, Unchecked, evaluate, reduced
from lengthgen.config import ConfigError
from helpers import copy_results


def _c(**kw):
    base = dict(
        id="ch0.x",
        location="Fig. 1",
        statement="s",
        paper_value=0.5,
        check="value",
        tolerance=0.02,
        why="the paper's standard error",
        source="live",
    )
    base.update(kw)
    return Claim(**base)


def _eval(c, ours):
    return evaluate(c, ours, chapter="ch0", scale="smoke")


def test_value_interval_equal_checks():
    assert _eval(_c(), 0.51)["status"] == "reproduced"
    with pytest.raises(ClaimFailed, match="ch0.x failed"):
        _eval(_c(), 0.6)
    assert _eval(_c(paper_value=[1.0, 2.0]), [1.01, 1.99])["holds"]
    with pytest.raises(ClaimFailed):
        _eval(_c(paper_value=[1.0, 2.0]), [1.01, 2.5])
    iv = _c(check="interval", tolerance=None, interval=(0.4, 0.6), paper_value=0.5)
    assert _eval(iv, 0.45)["holds"] and _eval(iv, 0.45)["interval"] == [0.4, 0.6]
    with pytest.raises(ClaimFailed):
        _eval(iv, 0.61)
    eq = _c(check="equal", tolerance=None, paper_value=[1, 2, 3])
    assert _eval(eq, (1, 2, 3))["holds"]
    with pytest.raises(ClaimFailed):
        _eval(eq, [1, 2, 4])
    with pytest.raises(ClaimFailed):  # NaN never passes a value check
        _eval(_c(), float("nan"))


def test_a_claim_over_an_empty_population_is_refused_in_one_line():
    """Item 4 of issue 37: an empty population is not evaluable, whatever the check or group
    (a prediction of ours would otherwise be scored as failed); an equal check of an empty list
    of failures is a real result."""
    pred = dict(check="predicate", tolerance=None, holds=lambda v: bool(v))
    for kw, ours in (
        (pred, {}),
        ({**pred, "group": "ours"}, []),
        ({**pred, "check": "direction"}, ()),
        ({"paper_value": []}, []),  # a value check over nothing
    ):
        with pytest.raises(claims.EmptyPopulation) as err:
            _eval(_c(**kw), ours)
        assert "ch0.x" in str(err.value) and "\n" not in str(err.value)
        assert isinstance(err.value, ConfigError)
    eq = _c(check="equal", tolerance=None, paper_value=[])
    assert _eval(eq, [])["holds"]


def test_direction_is_its_own_category():
    d = _c(
        check="direction",
        tolerance=None,
        paper_value="+25.5 points",
        holds=lambda v: v > 0,
    )
    rec = _eval(d, 9.7)
    assert rec["status"] == "reproduced" and claims.category(rec) == "direction"
    assert claims.category(_eval(_c(), 0.5)) == "reproduced"


def test_declared_deviation_and_one_that_starts_to_hold():
    dev = Deviation("reduced-budget", "we train 2,000 updates instead of 300,000 epochs")
    c = _c(deviation=dev, protocol=reduced("2,000 updates"))
    rec = _eval(c, 0.9)
    assert rec["status"] == "deviates" and rec["cause"] == "reduced-budget"
    assert rec["explanation"].startswith("we train") and rec["protocol"] == "reduced"
    held = _eval(c, 0.5)
    assert held["status"] == "reproduced" and held["declared_deviation_holds"] is True
    assert held["protocol_note"] == "2,000 updates"  # the reduction stays visible
    mod = _eval(_c(protocol=claims.modified("our map differs")), 0.5)
    assert (
        mod["protocol"] == "modified" and claims.protocol_label(mod) == "differs: our map differs"
    )


def test_declarations_are_checked():
    for kw, match in [
        ({"check": "sign"}, "valid choices: value, interval"),
        ({"why": ""}, "why this comparison"),
        ({"tolerance": None}, "needs tolerance"),
        ({"check": "interval", "interval": (2, 1)}, "lo <= hi"),
        ({"check": "predicate"}, "needs holds"),
        ({"source": "stored"}, "needs measure"),
        ({"group": "mine"}, "valid choices: paper, self-check"),
        ({"deviation": "slow"}, "Deviation"),
    ]:
        with pytest.raises(ConfigError, match=match):
            _c(**kw)
    with pytest.raises(ConfigError, match="needs a reason"):
        Unchecked("ch0.u", "§5", "BLEU", 1.0, "not-reproducible", "")
    with pytest.raises(ConfigError, match="must say what differs"):
        claims.Protocol("reduced")


def test_rounding_keeps_ledgers_stable():
    assert claims.round_sig(0.6655000000000001) == 0.6655
    assert claims.round_sig({"a": [1.23456789e-7, 3]}, 3) == {"a": [1.23e-7, 3]}


def _fake_chapter(monkeypatch, claims_list, causes=None):
    mod = types.SimpleNamespace(CLAIMS=claims_list, CAUSES=causes or {"run-to-run variance": "x"})
    real = claims.importlib.import_module

    def fake(name):
        if name == "lengthgen.chapters.ch0.claims":
            return mod
        return real(name)

    monkeypatch.setattr(claims.importlib, "import_module", fake)
    return mod


def test_save_keeps_a_written_value_that_differs_only_by_rounding(monkeypatch, tmp_path):
    """Another CPU may round a value one unit apart in its last kept digit: the committed value
    stays; a value further off, a changed field or an unreadable file is written."""
    b = _c(id="ch0.b", digits=3, tolerance=0.0195, group="ours")
    _fake_chapter(monkeypatch, [_c(id="ch0.a"), b])

    def save(a, b):
        led = claims.Ledger("ch0", scale="smoke")
        led.record("ch0.a", a)
        led.record("ch0.b", b)
        return {r["id"]: r["our_value"] for r in json.loads(led.save(tmp_path).read_text())}

    assert save(0.5001, 0.501) == {"ch0.a": 0.5001, "ch0.b": 0.501}
    # one unit in the 4th (a) and 3rd (b) significant digit: kept
    assert save(0.5002, 0.502) == {"ch0.a": 0.5001, "ch0.b": 0.501}
    # two units: written
    assert save(0.5003, 0.503) == {"ch0.a": 0.5003, "ch0.b": 0.503}
    # one unit, but b's status changes (0.519 holds, 0.520 is outside 0.0195): written
    assert save(0.5003, 0.519)["ch0.b"] == 0.519
    assert save(0.5003, 0.520)["ch0.b"] == 0.52
    (tmp_path / "ch0.json").write_text("{not json")
    assert save(0.5004, 0.521) == {"ch0.a": 0.5004, "ch0.b": 0.521}


def test_ledger_refuses_to_save_with_missing_claims(monkeypatch, tmp_path):
    _fake_chapter(
        monkeypatch,
        [
            _c(id="ch0.a"),
            _c(id="ch0.b"),
            Unchecked(
                "ch0.u",
                "§7",
                "BLEU on long sentences",
                12.4,
                "not-reproducible",
                "no translation data here",
            ),
        ],
    )
    led = claims.Ledger("ch0", scale="smoke")
    led.record("ch0.a", 0.5)
    with pytest.raises(ConfigError, match="live claims never recorded: ch0.b"):
        led.save(tmp_path)
    assert not (tmp_path / "ch0.json").exists()
    led.record("ch0.b", 0.49)
    rows = json.loads(led.save(tmp_path).read_text())
    assert [r["id"] for r in rows] == ["ch0.a", "ch0.b", "ch0.u"]
    assert (
        rows[2]["status"] == "not-reproducible"
        and rows[2]["explanation"] == "no translation data here"
    )
    with pytest.raises(ConfigError, match="unknown claim 'ch0.zz'"):
        led.record("ch0.zz", 1)


def test_undeclared_cause_is_refused(monkeypatch):
    _fake_chapter(monkeypatch, [_c(id="ch0.a", deviation=Deviation("luck", "because"))])
    with pytest.raises(ConfigError, match="cause 'luck' is not one of ch0's CAUSES"):
        claims.chapter_claims("ch0")


# ------------------------------------------------------------------ claims --check on the real book
def _reproduced_stored_claims(chapter):
    mod = claims.chapter_claims(chapter)
    committed = {r["id"]: r for r in claims.load_ledger(chapter)}
    return [
        c
        for c in mod.CLAIMS
        if isinstance(c, Claim)
        and c.source == "stored"
        and committed.get(c.id, {}).get("status") == "reproduced"
        and c.group == "paper"
    ]


def test_tamper_ch0_stored_grid_is_caught(tmp_path, monkeypatch):
    """Corrupting the stored number behind a ch0 claim makes ``claims --check`` fail and name it."""
    root = copy_results(tmp_path)
    path = root / "ch0" / "cells" / "dilution_grid.json"
    obj = json.loads(path.read_text())
    obj["data"]["value"]["max_abs_error"] = 1e-9  # beyond the rounding bound
    path.write_text(json.dumps(obj))
    problems = claims.check_ledgers(["ch0"], results_root=root)
    assert [p["id"] for p in problems] == ["ch0.eq1.closed_form"]
    assert "fails without a declared deviation" in problems[0]["problem"]
    obj["data"]["value"]["max_abs_error"] = 1e-11  # moved, but within the claim's tolerance
    path.write_text(json.dumps(obj))
    assert claims.check_ledgers(["ch0"], results_root=root) == []


def test_check_reports_missing_file_and_changed_ledger(tmp_path):
    root = copy_results(tmp_path)
    led = root / "claims" / "ch0.json"
    rows = json.loads(led.read_text())
    led.write_text(json.dumps(rows[1:]))  # a claim disappeared from the ledger
    problems = claims.check_ledgers(["ch0"], results_root=root)
    assert any(
        p["id"] == rows[0]["id"] and "missing from the committed ledger" in p["problem"]
        for p in problems
    )
    (root / "ch0" / "cells" / "dilution_grid.json").unlink()
    from lengthgen.store import ResultFileError

    with pytest.raises(ResultFileError, match="dilution_grid.json"):
        claims.check_ledgers(["ch0"], results_root=root)


def test_claims_html_shows_statements_badges_and_formatted_numbers():
    rec = _eval(
        _c(
            statement="Mean accuracy at N = 11",
            deviation=Deviation("reduced-budget", "fewer updates"),
            protocol=reduced("2,000 updates"),
        ),
        0.6655000000000001,
    )
    html = pages.claims_html([rec])
    assert (
        "Mean accuracy at N = 11" in html and "deviates" in html and "<span>0.6655</span>" in html
    )
    assert "0.6655000000000001" not in html and "reduced: 2,000 updates" in html
    assert "fewer updates" in html and "ch0.x" in html


def test_a_claim_is_one_row_that_opens_to_its_details():
    """statement | paper | ours | status in the row; check, protocol, justification and cause
    only in the collapsed part, which spans the row; the data-* attributes the scorecard filters
    on; a permalink."""
    rec = _eval(
        _c(
            statement="Mean accuracy at N = 11",
            deviation=Deviation("reduced-budget", "fewer updates"),
            protocol=reduced("2,000 updates"),
        ),
        0.6655,
    )
    html = pages.claims_html([rec], css=False)
    row = html.split('<details class="lg-claim"')[1]
    summary, more = row.split("</summary>")
    assert summary.count("<span>") == 4 and "Mean accuracy" in summary
    for hidden in ("reduced: 2,000 updates", "fewer updates", "reduced-budget"):
        assert hidden not in summary and hidden in more
    assert 'data-status="deviates"' in row and 'data-chapter="ch0"' in row
    assert 'data-protocol="reduced"' in row and 'data-check="value"' in row
    assert 'id="claim-ch0.x"' in row and 'href="#claim-ch0.x"' in row
    assert "open" not in row.split(">")[0]  # collapsed
    assert claims.fmt_value({"mean": 81.0, "lo": 79.5, "hi": 82.25}) == "81 (79.5 to 82.25)"


def test_every_chapter_has_a_headline_naming_its_claims():
    from lengthgen.config import CHAPTERS

    for ch in CHAPTERS:
        mod = claims.chapter_claims(ch)
        head = mod.HEADLINE
        ids = {c.id for c in mod.CLAIMS}
        assert head["finding"] and head["deviation"]
        for cid in head["finding_ids"] + head["deviation_ids"]:
            assert cid in ids, f"{ch} HEADLINE names unknown claim {cid}"


def _ledger_values(ch):
    from lengthgen.store import results_dir

    return {r["id"]: r["our_value"] for r in claims.load_ledger(ch, results_dir() / "claims")}


def test_headline_numbers_follow_the_ledger():
    """The counts typed into the chapters' headlines (book intro, scorecard) are the committed
    ledger's: a re-run that moves them makes this test fail until the headline is rewritten."""
    v1, h1 = _ledger_values("ch1"), claims.chapter_claims("ch1").HEADLINE
    n = {
        k: v1[f"ch1.first_rates.{k}"]["perfect"]
        for k in (
            "scaled_n10",
            "scaled_n300",
            "scaled_n30",
            "scaled_n100",
            "authors_placement_n10",
            "authors_placement_n300",
        )
    }
    assert all(v1[f"ch1.first_rates.{k}"]["runs"] == 100 for k in n)
    assert f"succeeds in {n['scaled_n10']} and {n['scaled_n300']} of 100 runs" in h1["deviation"]
    assert (
        f"placement of the factor: {n['authors_placement_n10']} and {n['authors_placement_n300']})"
        in h1["deviation"]
    )
    assert (
        n["scaled_n30"] == n["scaled_n100"]
        and f"it succeeds in {n['scaled_n30']} of 100" in h1["deviation"]
    )
    assert (
        v1["ch1.first_train.scaled_perfect_n30"] == v1["ch1.first_train.scaled_perfect_n100"] == 20
    )
    assert "20 of 20 runs perfect" in h1["finding"]
    v3, h3 = _ledger_values("ch3"), claims.chapter_claims("ch3").HEADLINE
    assert (
        f"(AUC {v3['ch3.study.auc']:g}, same {v3['ch3.study.n_generalizing']} of 35 cells)"
        in h3["finding"]
    )


# ------------------------------------------------------------------ portable ledger: residues and rounding
def test_residues_are_recorded_as_their_bound_not_raw_rounding():
    """A residue check (value of zero, tolerance at rounding scale) records '≤ tolerance', so the
    committed ledger does not change between CPUs whose rounding differs (3e-13 here, 0 there)."""
    c = _c(paper_value=0.0, tolerance=1e-10, check="value")
    assert claims.residue_of(c) == 1e-10
    for raw in (0.0, 3e-13, -1e-14):
        assert _eval(c, ours=raw)["our_value"] == "≤ 1e-10"
    big = _c(paper_value=0.0, tolerance=0.3, check="value")  # a slope of zero: not a residue
    assert claims.residue_of(big) is None and _eval(big, ours=0.07413)["our_value"] == 0.07413
    listed = _c(paper_value=[0.0, 0.0], tolerance=1e-12, check="value")
    assert _eval(listed, ours=[0.0, 3.5e-18])["our_value"] == ["≤ 1e-12", "≤ 1e-12"]
    explicit = _c(
        check="predicate",
        holds=lambda v: v["err"] < 1e-6,
        residue=1e-9,
        paper_value="small",
    )
    assert _eval(explicit, ours={"err": 2e-12, "n": 5})["our_value"] == {
        "err": "≤ 1e-09",
        "n": 5,
    }
    with pytest.raises(ConfigError, match="residue"):
        _c(residue=-1.0)


def test_same_within_rounding_allows_one_unit_of_the_last_digit_only():
    assert claims.same_within_rounding(0.6655, 0.6656) and claims.same_within_rounding(
        0.6655, 0.6654
    )
    assert not claims.same_within_rounding(0.6655, 0.6657)
    assert claims.same_within_rounding({"a": [1.0, "x"]}, {"a": [1.0, "x"]})
    assert not claims.same_within_rounding(
        {"a": 1.0}, {"b": 1.0}
    ) and not claims.same_within_rounding([1.0], [1.0, 2.0])
    assert not claims.same_within_rounding("≤ 1e-10", 1e-11) and not claims.same_within_rounding(
        True, 1
    )


@pytest.mark.parametrize("factor", [1.5, 3.0])
def test_tamper_ch2_window_width_is_caught_whatever_the_paper_tolerance(tmp_path, factor):
    """Stored results do not change: a stored window width × 1.5 or × 3 moves its slope by less
    than the paper's tolerance (0.3) but beyond the ledger's rounding, and ``claims --check`` fails."""
    root = copy_results(tmp_path, ["ch2"])
    path = root / "ch2" / "cells" / "volume_scans.json"
    obj = json.loads(path.read_text())
    curve = obj["data"]["value"]["widths"]["pos/index/chi"]
    for key in ("width", "finite_width"):
        curve[key][-1] *= factor  # the widest length's width
    path.write_text(json.dumps(obj))
    named = {p["id"]: p["problem"] for p in claims.check_ledgers(["ch2"], results_root=root)}
    assert list(named) == ["ch2.volume.pos_index_chi"], named
    assert named["ch2.volume.pos_index_chi"].startswith(("value", "status")), named


def test_one_unit_is_the_finer_of_the_two_values():
    assert not claims.same_within_rounding(1.0, 0.9995)  # one test string lost of 2,000
    assert claims.same_within_rounding(1.0, 0.9999)  # 0.99995 rounded either way


def test_a_chapter_ledger_in_two_pages(tmp_path, monkeypatch):
    """DETAILS sends claims to the details page: each page's Ledger shows and saves only its own
    claims, load_ledger joins the two parts, and a claim in both parts or in the wrong part is
    reported."""
    import shutil

    from lengthgen.store import ResultFileError, results_dir

    mod = claims.chapter_claims("ch0")
    monkeypatch.setattr(mod, "DETAILS", ("ch0.eq1.", "ch0.stored."), raising=False)
    main, det = claims.Ledger("ch0"), claims.Ledger("ch0", page="details")
    with pytest.raises(ConfigError, match="details page"):
        main.show("ch0.eq1.closed_form")
    with pytest.raises(ConfigError, match="main page"):
        det.record("ch0.margin.grows_logN", 1.0)
    with pytest.raises(ConfigError, match="page"):
        claims.Ledger("ch0", page="appendix")
    det.show("ch0.eq1.closed_form")
    assert det.unshown() == ["ch0.stored.regression"]
    det._records["ch0.stored.regression"] = {
        "id": "ch0.stored.regression",
        "status": "reproduced",
    }
    for c in main._mine():  # stand-ins for the values the notebook measures
        main._records[c.id] = {"id": c.id, "status": "reproduced"}
    root = tmp_path / "results"
    shutil.copytree(results_dir() / "ch0", root / "ch0")
    main.save(root / "claims")
    det.save(root / "claims")
    assert (root / "claims" / "ch0.details.json").exists()
    ids = [r["id"] for r in claims.load_ledger("ch0", root / "claims")]
    assert sorted(ids) == sorted(c.id for c in mod.CLAIMS) and len(set(ids)) == len(ids)
    assert ids[-2:] == ["ch0.eq1.closed_form", "ch0.stored.regression"]
    # a claim moved back to the chapter page without re-saving: reported
    monkeypatch.setattr(mod, "DETAILS", ("ch0.stored.",))
    probs = claims.check_ledgers(["ch0"], results_root=root)
    assert any(
        p["id"] == "ch0.eq1.closed_form" and "ch0.details.json" in p["problem"] for p in probs
    )
    # the same claim in both parts: a corrupt ledger, named
    main_part = json.loads((root / "claims" / "ch0.json").read_text())
    det_part = json.loads((root / "claims" / "ch0.details.json").read_text())
    (root / "claims" / "ch0.json").write_text(json.dumps(main_part + det_part[:1]))
    with pytest.raises(ResultFileError, match="both"):
        claims.load_ledger("ch0", root / "claims")


def test_results_box_shows_the_headline_claims_from_the_ledger():
    from lengthgen.config import CHAPTERS

    for ch in CHAPTERS:
        rows = claims.load_ledger(ch)
        box = pages.results_box(ch).html
        items = pages.headline_claims(ch)
        assert 3 <= len(items) <= 5, ch
        by_id = {r["id"]: r for r in rows}
        for it in items:
            r = by_id[it["id"]]
            assert f"scorecard.html#claim-{it['id']}" in box
            assert pages._esc(it["claim"]) in box
            assert pages._label(r) in box
        assert pages._esc(claims.counts_line(rows)) in box or not any(
            r.get("group", "paper") == "paper" for r in rows
        )
        assert 'id="results-box"' in box and "Cost." in box
        words = len(" ".join(it["claim"] for it in items).split())
        assert words <= 20 * len(items), f"{ch}: headline claims are not short"


def test_outcome_words_follow_the_evaluated_claims():
    """Ledger.held / Ledger.outcome: prose verdicts come from the claims' evaluation."""
    from lengthgen.chapters.ch5 import claims as c5

    led = claims.Ledger("ch5")
    ok = "ch5.parity.summing_exact"
    bad = "ch5.volume.train_index_norm"
    # the stored results: the summing construction holds, the A_norm Index prediction failed
    assert led.held(ok) is True and led.held(bad) is False
    assert led.outcome(ok, bad) == "1 of 2 held"
    assert led.outcome(ok, ok) == "all 2 held" and led.outcome(bad, bad) == "none of 2 held"
    assert led.outcome(ok) == "it held" and led.outcome(bad) == "it failed"
    with pytest.raises(ConfigError, match="at least one"):
        led.outcome()
    with pytest.raises(ConfigError, match="unknown claim"):
        led.outcome("ch5.nope")
    unchecked = [c.id for c in c5.CLAIMS if isinstance(c, claims.Unchecked)]
    assert "ch5.mass.alibi_keeps_mass" in unchecked  # not evaluable: an empty population
    for cid in unchecked:  # an unchecked claim has no verdict
        with pytest.raises(ConfigError, match="not checked"):
            led.held(cid)


def test_a_scorecard_row_names_where_its_claim_is_declared_and_what_measures_it():
    """The row panel points into the code, found when the page is built: the line holding the
    claim's literal id, and for a stored claim its measuring function with file and line."""
    rec = next(r for r in claims.load_ledger("ch1") if r["id"] == "ch1.exact.parity")
    where = pages.declared_at()["ch1.exact.parity"]
    path, line = where.rsplit(":", 1)
    assert path.startswith("src/lengthgen/chapters/ch1/")
    src = (claims.results_dir().parent / path).read_text().splitlines()
    assert '"ch1.exact.parity"' in src[int(line) - 1]
    row = pages.claims_html([rec], origin=True)
    assert f"<b>declared at:</b> <code>{where}</code>" in row
    stored = next(r for r in claims.load_ledger("ch2") if r["source"] == "stored")
    fn = pages.measured_by("ch2", stored["id"])
    assert fn.startswith("lengthgen.chapters.ch2.") and " at src/lengthgen/" in fn
    assert "measured by:" in pages.claims_html([stored], origin=True)
    assert pages.measured_by("ch1", "ch1.exact.parity") is None  # a live claim


def test_claim_rows_draw_as_the_page_code_draws_them():
    rec = _eval(_c(), 0.5)
    assert claims.ClaimRows([rec])._repr_html_() == pages.claims_html([rec])

"""Chapter 4's claims ledger: the committed ledger re-checks from results/, tampering with a stored
number behind a claim is caught and named, and the declarations follow the chapter's rules
(reduced protocols stay visible, deviations carry a declared cause and never quote our value)."""

import math

import pytest

from lengthgen import claims
from lengthgen.chapters.ch4 import claims as C4
from lengthgen.chapters.ch4 import measures as M4
from lengthgen.claims import Claim, Unchecked
from lengthgen.store import max_difference
from helpers import copy_results, edit_cell


@pytest.fixture
def results_copy(tmp_path):
    return copy_results(tmp_path, chapters=["ch4"])


def _committed():
    return {r["id"]: r for r in claims.load_ledger("ch4")}


def test_ch4_ledger_rechecks_clean():
    assert claims.check_ledgers(["ch4"]) == []


def test_tamper_headline_length_generalization_is_caught(results_copy):
    """The biased sine MLP's length-811 accuracy (a reproduced paper claim) corrupted in the stored cell."""
    assert _committed()["ch4.fig5.paper_lr_60k.bias_far"]["status"] == "reproduced"

    def corrupt(v):
        for row in v["rows"]:
            row["811"] = 0.5

    edit_cell(results_copy, "ch4", "lengthgen_paper_lr_60k_sine_bias", corrupt)
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.fig5.paper_lr_60k.bias_far"]
    assert "fails without a declared deviation" in problems[0]["problem"]


def test_tamper_paper_scale_gpu_run_is_caught(results_copy):
    """The p = 53 GPU run: the bias-free sine MLP's length-811 accuracy set to chance in the stored
    cell falsifies the reproduced Fig. 4 claim and moves the bias comparison's recorded value."""
    assert _committed()["ch4.fig4.p53.sine_far"]["status"] == "reproduced"

    def corrupt(v):
        for i, m in enumerate(v["members"]):
            if m["activation"] == "sine" and not m["bias"]:
                v["final"]["acc"]["811"][i] = 0.02

    edit_cell(results_copy, "ch4", "paper_p53", corrupt)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch4"], results_root=results_copy)
    }
    assert "fails without a declared deviation" in problems["ch4.fig4.p53.sine_far"]
    assert set(problems) <= {"ch4.fig4.p53.sine_far", "ch4.fig5.p53.bias_robust"}


def test_paper_scale_cell_is_loaded_at_its_own_scale(results_copy):
    from lengthgen.chapters.ch4.experiments import load_stored_cell
    from lengthgen.store import ResultFileError

    rec = load_stored_cell("paper_p53", folder=results_copy / "ch4" / "cells")
    assert rec["provenance"]["device_name"] == "NVIDIA H200" and rec["data"]["partial"] is True
    edit_cell(results_copy, "ch4", "paper_p53", lambda v: v["final"]["acc"]["811"].pop())
    with pytest.raises(ResultFileError, match="paper_p53"):
        load_stored_cell("paper_p53", folder=results_copy / "ch4" / "cells")


def test_tamper_theorem_accuracy_is_caught(results_copy):
    """One error of the Thm 4.1 network at p = 97 falsifies the exact claim."""
    edit_cell(results_copy, "ch4", "automaton", lambda v: v["thm41@97"].update(min_acc=0.9999))
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.thm41.long"]


def test_tamper_that_moves_a_reported_value_is_caught_and_one_that_does_not_is_not(
    results_copy,
):
    """ReLU's chance-level claim reads the highest far-length accuracy: raising it within the chance band
    changes the recorded value (reported); lowering a non-maximal entry changes nothing."""
    committed = _committed()["ch4.fig4.paper_lr.relu_chance"]

    def lower(v):
        for row in v["rows"]:
            row["401"] = min(row["401"], 0.05)

    edit_cell(results_copy, "ch4", "lengthgen_long_relu_nobias", lower)
    assert claims.check_ledgers(["ch4"], results_root=results_copy) == []

    def raise_far(v):
        for row in v["rows"]:
            row["512"] = committed["our_value"] + 0.02

    edit_cell(results_copy, "ch4", "lengthgen_long_relu_nobias", raise_far)
    problems = claims.check_ledgers(["ch4"], results_root=results_copy)
    assert [p["id"] for p in problems] == ["ch4.fig4.paper_lr.relu_chance"]
    assert problems[0]["problem"].startswith("value")


def test_declared_deviation_that_starts_to_hold_is_reported(results_copy):
    """If the bias-free sine MLP became perfect at every length, its declared deviations would be flagged."""

    def perfect(v):
        for row in v["rows"]:
            for key in row:
                if key.isdigit() or key == "train":
                    row[key] = 1.0

    edit_cell(results_copy, "ch4", "lengthgen_long_sine_nobias", perfect)
    problems = {}
    for p in claims.check_ledgers(["ch4"], results_root=results_copy):
        problems.setdefault(p["id"], []).append(p["problem"])
    assert "declared deviation (reduced budget) now holds" in problems["ch4.fig4.paper_lr.sine_far"]
    assert "status deviates → reproduced" in problems["ch4.fig4.paper_lr.sine_far"]
    assert "ch4.fig4.paper_lr.sine_seen" in problems


# ------------------------------------------------------------------ the declarations follow the rules
def test_every_training_claim_names_its_reduced_protocol():
    for c in C4.CLAIMS:
        if isinstance(c, Claim) and c.group == "paper" and c.id.startswith(("ch4.fig", "ch4.sec")):
            assert c.protocol.kind == "reduced" and "(paper: " in c.protocol.reduced, c.id
    lr60 = next(c for c in C4.CLAIMS if c.id == "ch4.fig5.paper_lr_60k.bias_far")
    assert "data-richer" in lr60.protocol.reduced and "1 seed" in lr60.protocol.reduced


@pytest.mark.parametrize(
    "p, n, m, held, total",
    [
        (17, 2000, 2, 132, 153),
        (97, 2000, 2, 277, 4753),
        (17, 8000, 2, 153, 153),
        (17, 8000, 3, 650, 969),
        (97, 8000, 2, 1006, 4753),
        (97, 8000, 3, 1142, 156849),
    ],
)
def test_data_richness_quoted_in_the_protocols(p, n, m, held, total):
    """The count-vector coverage the length-generalization protocols quote (seed 1337's training sets)."""
    from lengthgen.chapters.ch4.data import train_set
    from lengthgen.chapters.ch4.paper import TRAIN_LENGTHS

    d = train_set(1337, p, TRAIN_LENGTHS, n)
    assert (
        len({tuple(r) for r in d.x[d.m == m].long().tolist()}) == held
        and math.comb(m + p - 1, p - 1) == total
    )
    text = C4.MAIN.reduced if n == 2000 else C4.PAPER_LR_60K.reduced
    quoted = f"every one of the {total:,}" if held == total else f"{held:,} of "
    assert quoted in text and f"{total:,}" in text


def test_deviations_never_quote_our_value_and_causes_are_declared():
    committed = _committed()
    for c in C4.CLAIMS:
        if isinstance(c, Claim) and c.deviation is not None:
            assert c.deviation.cause in C4.CAUSES
            ours = committed[c.id]["our_value"]
            numbers = [ours] if isinstance(ours, (int, float)) else []
            for x in numbers:
                assert f"{x:.3g}" not in c.deviation.explanation, c.id
            assert committed[c.id]["status"] == "deviates", c.id  # declared only where it deviates


def test_self_checks_and_unchecked_coverage():
    by = {c.id: c for c in C4.CLAIMS}
    for cid in (
        "ch4.thm44.rays",
        "ch4.thm43.training",
        "ch4.thm42.nobias_ties",
        "ch4.constructions.live",
    ):
        assert by[cid].group == "self-check"
    for cid in ("ch4.thm43", "ch4.thm44"):
        assert isinstance(by[cid], Unchecked) and by[cid].status == "not-reproducible"
    # every claim of the paper is attempted but Thm 6.2's bound (its constants are not in our text)
    assert {
        c.id for c in C4.CLAIMS if isinstance(c, Unchecked) and c.status == "not-attempted"
    } == {"ch4.thm62"}
    # the paper's values live in paper.py, one entry per paper claim (with its location)
    from lengthgen.chapters.ch4.paper import PAPER_VALUES

    for c in C4.CLAIMS:
        if c.group == "paper":
            assert any(
                v[1] == c.paper_value
                or c.paper_value in (M4.NOBIAS_EXHAUSTIVE_PAPER, M4.NOBIAS_LONG_PAPER)
                # the proposition's and Thm 6.3's words as the numbers our check compares
                or c.id in ("ch4.prop_vc", "ch4.thm63")
                for v in PAPER_VALUES.values()
            ), c.id


def test_direction_claims_are_not_counted_as_reproductions():
    rows = claims.load_ledger("ch4")
    cats = {r["id"]: claims.category(r) for r in rows}
    assert cats["ch4.fig1.width"] == "direction"
    assert cats["ch4.fig6.transformer"] == "deviates"
    assert all(cats[r["id"]] != "reproduced" for r in rows if r["check"] == "direction")


# ------------------------------------------------------------------ the helpers behind the rules
def test_tolerance_of_the_sampled_bias_free_accuracy_is_three_binomial_se():
    n = 811 * 10_000
    q = 1 - 1 / 53
    assert C4.NOBIAS_LONG_TOL == pytest.approx(3 * math.sqrt(q * (1 - q) / n))


def test_spearman_trend_permutation_p_and_seed_se():
    t = M4.spearman_trend([0, 1, 2, 3, 4], [1, 2, 3, 4, 5])
    assert t["rho"] == pytest.approx(1.0) and t["p"] == pytest.approx(1 / 120)
    assert M4.spearman_trend([0, 1, 2], [1, 1, 1])["p"] == 1.0
    mean, se = M4.seed_mean([1.0, 1.0], 10_000)
    assert mean == 1.0 and se == 0.0
    mean, se = M4.seed_mean([0.5], 10_000)
    assert se == pytest.approx(0.005)
    assert M4.ahead(0.6, 0.01, 0.5, 0.01) and not M4.ahead(0.52, 0.01, 0.5, 0.01)


def test_max_difference():
    assert max_difference({"a": [1.0, 2]}, {"a": [1.0, 2]}) == 0.0
    assert max_difference({"a": [1.0, 2]}, {"a": [1.5, 2]}) == 0.5
    assert max_difference({"a": 1}, {"b": 1}) == math.inf
    assert max_difference([1, None], [1, None]) == 0.0
    assert max_difference([1], [1, 2]) == math.inf


def _pages() -> str:
    """The text of the chapter's page and of its details page (prose moves between them)."""
    from pathlib import Path

    nb = Path(__file__).parents[1] / "notebooks"
    return "\n".join((nb / f"04_sine_modular_addition{s}.md").read_text() for s in ("", "_details"))


def test_update_count_quoted_in_text_follows_the_stored_gpu_run():
    """The paper-scale cell can be resumed: the update count typed into the protocol, the abstract
    and the caption must follow its stored progress (a resumed run makes this test fail)."""
    from pathlib import Path

    from lengthgen.chapters.ch4.experiments import load_stored_cell

    done = load_stored_cell("paper_p53")["data"]["progress"]["done"]
    assert f"{done:,}" in C4.P53.reduced
    page = _pages()
    # typed in the abstract and the figure caption; the GPU section's prose is generated
    main = " ".join(
        (Path(__file__).parents[1] / "notebooks" / "04_sine_modular_addition.md")
        .read_text()
        .split()
    )
    assert f"({done:,} updates — 5 % of the paper's)" in main.split("**Abstract.**")[1]
    assert f"(stored run, {done:,} updates)" in main
    gains = _committed()["ch4.fig5.p53.bias_robust"]["our_value"]  # quoted in the prose, rounded
    assert f"by {gains['8000']['gain']:.3f} at $n = 8000$ and {gains['2000']['gain']:.3f}" in page


def test_gpu_section_ranges_and_arrivals_follow_the_stored_run():
    """The accuracy ranges and the update counts typed into the GPU section are those of the stored
    run (``paper_scale_ranges``, ``paper_scale_arrivals``): a changed run makes this test fail."""

    from lengthgen.chapters.ch4.experiments import (
        paper_scale_arrivals,
        paper_scale_ranges,
        stored_paper_scale,
    )

    value = stored_paper_scale()["data"]["paper"]
    page = _pages()
    text = " ".join(page.split())
    low = lambda r: f"at least {math.floor(100 * r[0])} %"  # noqa: E731  (the lowest length, rounded down)
    rng = paper_scale_ranges(value, 8000)
    assert f"at decay 0.03 is right on {low(rng[('sine', 0.03)])} of the inputs" in text
    assert f"(at decay 0.1 on {low(rng[('sine', 0.1)])})" in text
    assert f"the biased one, at decay 0.3, on {low(rng[('sine+bias', 0.3)])}" in text
    hits = [s for s in paper_scale_arrivals(value, 8000).values() if s is not None]
    assert f"between {min(hits):,} and {max(hits):,} updates here" in text


# ------------------------------------------------------------------ issue 25: windows, noise, spreads
def test_window_claim_expects_our_derived_window_for_odd_p():
    from lengthgen.chapters.ch4 import constructions as C
    from lengthgen.chapters.ch4 import paper

    claim = next(c for c in C4.CLAIMS if c.id == "ch4.thm41.window")
    assert claim.group == "self-check" and claim.check == "equal"
    assert all(p % 2 == 1 for p, _ in paper.WINDOW_CASES)
    for p, m in paper.WINDOW_CASES:
        span = paper.WINDOW_SPAN * m
        want = [
            L
            for L in range(1, span + 1)
            if any(abs(L - m - 4 * m * k) * p < 2 * m for k in range(-2, 3))
        ]
        assert claim.paper_value[f"p = {p}, m = {m}"] == want
        assert C.fixed_length_window(m, p, span) == want
        assert f"({p}, {m})" in claim.statement
    # the page's examples
    assert claim.paper_value["p = 13, m = 9"] == [8, 9, 10, 44, 45, 46]
    assert all(C.fixed_length_window(m, 97, 4 * m) == [m] for m in range(1, 49))
    assert C.fixed_length_window(49, 97, 4 * 49) == [48, 49, 50]


def test_p53_chance_band_is_three_binomial_se_of_one_evaluation():
    import json
    from pathlib import Path

    from lengthgen.chapters.ch4 import paper

    n_eval = paper.PAPER_RUN["n_eval"]
    stored = json.loads(
        (Path(__file__).parents[1] / "results/ch4/cells/paper_p53.json").read_text()
    )
    assert stored["data"]["kwargs"]["n_eval"] == n_eval
    q = 1 / 53
    se = math.sqrt(q * (1 - q) / n_eval)
    assert M4.CHANCE_P53 == pytest.approx((q - 3 * se, q + 3 * se))
    rec = _committed()["ch4.fig4.p53.relu_chance"]
    assert rec["interval"] == pytest.approx(list(M4.CHANCE_P53))
    assert "3 binomial SE" in rec["why"] and "21 such values" in rec["why"]


def test_accuracy_trend_rise_and_its_binomial_se_from_the_stored_sweep():
    import json
    from pathlib import Path

    stored = json.loads(
        (Path(__file__).parents[1] / "results/ch4/cells/overparam.json").read_text()
    )["data"]
    n = stored["kwargs"]["n_test"]
    assert n == M4.FULL["overparam"]["n_test"]
    for act in ("sine", "relu"):
        rows = {r["wd"]: r["test_acc"] for r in stored["value"]["rows"] if r["activation"] == act}
        a0, a1 = rows[0.0], rows[M4.MODERATE_WD]
        v = M4.accuracy_trend(claims.StoredResults("ch4"), act)
        se = math.hypot(math.sqrt(a0 * (1 - a0) / n), math.sqrt(a1 * (1 - a1) / n))
        assert v["rise"] == pytest.approx(a1 - a0)
        assert v["SE of the rise"] == pytest.approx(se)
    # a significant rank trend whose rise is inside 2 SE does not count
    assert not M4.significant_rise_beyond_se(
        {"rho": 1.0, "p": 0.01, "rise": 0.01, "SE of the rise": 0.006}
    )
    assert M4.significant_rise_beyond_se(
        {"rho": 1.0, "p": 0.01, "rise": 0.02, "SE of the rise": 0.006}
    )


def test_p53_history_ends_at_the_ledgers_evaluation():
    hist = C4.p53_history(claims.StoredResults("ch4"))
    committed = _committed()
    ids = [c.id for c in C4.CLAIMS if ".p53." in c.id]
    assert [h["id"] for h in hist] == ids
    for h in hist:
        assert len(h["steps"]) == C4.P53_LAST_EVALS == len(h["values"])
        assert h["steps"] == sorted(h["steps"])
        rec = committed[h["id"]]
        assert h["holds"][-1] == rec["holds"]
        last = claims.round_sig(claims._clean(h["values"][-1]), 4)
        assert last == rec["our_value"], h["id"]


def test_page_generates_its_timings_and_cites_only_stored_runs():

    page = _pages()
    text = " ".join(page.split())
    for gone in ("pilot", "earlier stored run", "first attempt", "0.2 s", "4 s per"):
        assert gone not in text, gone
    # the step-size argument's numbers: π√p / lr at lr = 1e-3
    for p, quoted in ((17, "1.3"), (53, "2.3")):
        assert f"{math.pi * math.sqrt(p) / 1e-3 / 1e4:.1f}" == quoted
        assert f"${quoted}\\cdot10^4$ at $p = {p}$" in text

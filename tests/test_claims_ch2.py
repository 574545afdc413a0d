"""Chapter 2's claims ledger: the declarations, the committed ledger, and tamper tests on copies of
the stored results (``claims --check`` must fail and name the claim whose stored number was corrupted)."""

import pytest

from lengthgen import claims
from lengthgen.chapters.ch2 import claims as ch2_claims
from lengthgen.chapters.ch2 import paper
from lengthgen.claims import Claim, Unchecked
from helpers import copy_results, edit_cell


def _declared():
    return {c.id: c for c in claims.chapter_claims("ch2").CLAIMS}


def test_declarations():
    decl = _declared()
    checked = [c for c in decl.values() if isinstance(c, Claim)]
    # every cell of Tables 2 and 3 is its own claim; the ceiling cells compare counts of perfect seeds
    for (task, model), cells in paper.PAPER_T2.items():
        for N, (m, lo, hi) in cells.items():
            c = decl[f"ch2.train.table2.{task}_{model}_N{N}"]
            if m == 100.0:
                assert c.check == "equal" and c.paper_value == len(paper.SEEDS)
            else:
                assert c.check == "interval" and tuple(c.interval) == (lo, hi)
    for model, cells in paper.PAPER_T3.items():
        for N, (m, lo, hi) in cells.items():
            assert tuple(decl[f"ch2.train.table3.{model}_N{N}"].interval) == (lo, hi)
    # deviations name a declared cause, and the explanation is text of ours, not a formatted number
    for c in checked:
        if c.deviation:
            assert c.deviation.cause in ch2_claims.CAUSES
            assert c.deviation.explanation and "{" not in c.deviation.explanation
    # direction claims are separate from the value claims that check the size
    assert (
        decl["ch2.train.norm_vs_pos"].check == "direction"
        and decl["ch2.train.norm_vs_pos_size"].check == "value"
    )
    assert decl["ch2.train.coef_direction"].check == "direction"
    assert (
        decl["ch2.train.coef_chi"].check
        == decl["ch2.train.coef_ell"].check
        == "interval"
    )
    # true by construction: the D.7 equivalence (fixed token k = 0) is a self-check
    assert decl["ch2.train.d7.majority_equivalent"].group == "self-check"
    # the misread A_norm map is ours: no cause or explanation calls it the paper's
    for c in checked:
        if c.deviation:
            text = (c.deviation.cause + " " + c.deviation.explanation).lower()
            assert "as printed" not in text and "printed map" not in text
    assert any(isinstance(c, Unchecked) for c in decl.values())


def test_tolerance_rules_come_from_the_paper():
    # rule 3: the median of the paper's own 95 % half-widths (Tables 2–3), whole points
    assert ch2_claims.T1_TOLERANCE == 3.0
    lo, hi = ch2_claims.fisher_interval(-0.655, 100)
    assert lo < -0.655 < hi and hi - lo < 0.25
    assert (
        ch2_claims.run_of("index", "norm", 51) == "index_posnorm"
    )  # paired with A_pos, the paper's map
    assert ch2_claims.run_of("index", "pos", 21) == "index_posnorm_small"
    assert ch2_claims.protocol_of([("index", "pos", 51)]).kind == "paper"
    assert ch2_claims.protocol_of([("index", "norm", 31)]).kind == "paper"
    assert "12,000" in ch2_claims.protocol_of([("index", "norm", 11)]).reduced
    # every A_norm run the claims read uses the paper's map; the misread map is the ablation only
    from lengthgen.chapters.ch2.experiments import EXPERIMENTS

    assert {n for n, e in EXPERIMENTS.items() if e.norm_map != "sqrt"} == {
        "index_norm_misread"
    }
    for c in _declared().values():
        if isinstance(c, Claim):
            assert ch2_claims.MISREAD_MAP not in (c.protocol.reduced or "")
    with pytest.raises(KeyError, match="no stored experiment"):
        ch2_claims.run_of("parity", "gen", 51)


def test_committed_ledger_is_complete_and_current():
    rows = claims.load_ledger("ch2")
    assert [r["id"] for r in rows] == [
        c.id for c in claims.chapter_claims("ch2").CLAIMS
    ]
    assert claims.check_ledgers(["ch2"]) == []
    status = {r["id"]: claims.category(r) for r in rows}
    assert status["ch2.train.norm_vs_pos"] == "direction"
    # with the paper's A_norm map (re-run): inside the paper's interval at N = 21 … 51, just below at N = 11
    assert [status[f"ch2.train.table2.index_norm_N{N}"] for N in paper.NS] == [
        "deviates"
    ] + ["reproduced"] * 4
    assert status["ch2.volume.norm_index_chi_fixed_ell_hat"] == "reproduced"
    assert status["ch2.train.table1.majority_posnorm"] == "reproduced"


def test_tamper_halved_accuracies_are_caught(tmp_path):
    """Halving the stored test accuracies of the Majority A_pos/A_norm run breaks the Table 1 claim
    that reads it (and the D.7 self-check is untouched: both variants are halved alike)."""
    root = copy_results(tmp_path)

    def edit(v):
        for m in v["members"]:
            m["test"] = {L: a / 2 for L, a in m["test"].items()}

    edit_cell(root, "ch2", "majority_posnorm", edit)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch2"], results_root=root)
    }
    assert set(problems) == {"ch2.train.table1.majority_posnorm"}
    assert (
        "fails without a declared deviation"
        in problems["ch2.train.table1.majority_posnorm"]
    )


def test_tamper_one_seed_off_the_ceiling_is_caught(tmp_path):
    """One First/A_pos seed at N = 51 loses one test string at L = 511: 20/20 perfect becomes 19."""
    root = copy_results(tmp_path)

    def edit(v):
        m = next(
            m
            for m in v["members"]
            if m["variant"] == "pos" and m["seed"] == paper.SEEDS[7]
        )
        m["test"]["511"] = 0.999

    edit_cell(root, "ch2", "first_posnorm", edit)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch2"], results_root=root)
    }
    # the ceiling claim fails; the order claim reads the same mean, which moved by 0.005 points only
    assert "ch2.train.table2.first_pos_N51" in problems
    assert (
        "fails without a declared deviation"
        in problems["ch2.train.table2.first_pos_N51"]
    )
    assert set(problems) <= {"ch2.train.table2.first_pos_N51", "ch2.train.volume_order"}


def test_tamper_volume_scan_is_caught(tmp_path):
    """A stored χ window of Index under A_pos that stops shrinking at n = 512 moves the slope."""
    root = copy_results(tmp_path)

    def edit(v):
        for key in ("width", "finite_width"):
            w = v["widths"]["pos/index/chi"][key]
            w[-1] = w[-2] * 4  # the window grows at the longest length

    edit_cell(root, "ch2", "volume_scans", edit)
    problems = {
        p["id"]: p["problem"] for p in claims.check_ledgers(["ch2"], results_root=root)
    }
    assert set(problems) == {"ch2.volume.pos_index_chi"}

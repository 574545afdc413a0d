"""Values as a reader sees them (issue 36): one formatter, :func:`lengthgen.claims.fmt_value`,
draws every value of the claim rows, the results boxes and the scorecard; never a Python repr,
an internal key or an empty cell. Each case below is one the proofreading found on a page."""

import pytest

from lengthgen.claims import fmt_value
from lengthgen.pages import cell_values, short_value

REPR = ("[[", "{", "}", "'", "None", "nan", "_")


@pytest.mark.parametrize(
    "value, shown",
    [
        (None, "—"),
        (True, "yes"),
        (17665, "17 665"),
        (-2.04, "−2.04"),
        (0.36552928931500245, "0.3655"),
        (1.6e27, "1.6 × 10²⁷"),
        (1e-9, "10⁻⁹"),
        ("≤ 1e-09", "≤ 10⁻⁹"),
        ([], "none"),
        ({}, "none"),
        ([0.8, 0.4, 0.2], "0.8, 0.4, 0.2"),
        ([100.0, 85.53, 54.83], "100, 85.53, 54.83"),
        ([True, False, False], "1 of 3 yes"),
        ([20, 20, 20, 20], "20 for all 4 values"),
        ({"mean": 81.0, "lo": 79.5, "hi": 82.25}, "81 (79.5 to 82.25)"),
        (
            {"slope": -2.04, "lo": -2.108, "hi": -1.971},
            "slope −2.04 [−2.108, −1.971]",
        ),
        (
            {"perfect": 84, "runs": 100, "rate": 0.84},
            "84 of 100 runs perfect",
        ),
        (
            {"ce_bits_at_n_max": [1.0, 0.999], "min_acc": 1.0},
            "cross-entropy at the longest n (bits): (1, 0.999); min accuracy: 1",
        ),
        ({"6": 32, "12": None}, "6: 32; 12: none"),
    ],
)
def test_values_read_as_words_and_numbers(value, shown):
    assert fmt_value(value) == shown


@pytest.mark.parametrize(
    "value",
    [
        [
            [2.096, 1.0],
            [2.109, 1.0],
            [2.134, 1.0],
            [2.2, 1.0],
        ],  # "[[2.1, 1], [2.11, 1], …"
        {"slope": -2.04, "lo": -2.108, "hi": -1.971, "lengths": 5, "min_hits": 758},
        {
            "0.5": {"precision": 0.9613, "rows": 155},
            "0.7": {"precision": 0.96, "rows": 1},
        },
        {
            "B": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
            "n": [10000, 10**6, 10**9, 10000, 10**6, 10**9],
        },
        {"d": 1.539, "e": float("nan"), "f": None},
        [1, [3]],
        ["≤ 1e-12"] * 4,
    ],
)
def test_no_value_reads_as_python(value):
    for text in (fmt_value(value), short_value(value), short_value(value, 26)):
        assert not any(s in text for s in REPR), text


def test_a_long_list_shows_its_range_not_its_ends():
    """Chapter 0 showed "1 … 1 (7 values)" where the minimum 0.8 is the point."""
    ours = [1.0, 0.8, 0.917431, 0.990197, 0.999002, 0.9999, 0.99999]
    assert short_value(ours) == "min 0.8, max 1 over 7 values"
    assert fmt_value(ours, items=3, of="lengths") == "min 0.8, max 1 over 7 lengths"


def test_equal_looking_cells_of_a_deviation_show_the_entry_that_differs():
    """Chapter 3 showed paper "1 … 0 (10 values)", ours the same, status deviates."""
    paper = [1.0, 1.0, 0.0, 1.0, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0]
    ours = [1.0, 1.0, 0.0, 1.0, 0.175, 1.0, 0.0, 0.0, 0.0, 0.0]
    rec = {"paper_value": paper, "our_value": ours, "status": "deviates"}
    assert cell_values(rec) == ("entry 5 of 10: 0.25", "entry 5 of 10: 0.175")
    same = dict(rec, status="reproduced", our_value=paper)
    assert cell_values(same) == ("min 0, max 1 over 10 values",) * 2


def test_an_unchecked_claim_says_so_and_a_long_text_is_cut_at_a_word():
    rec = {"paper_value": "plotted only", "our_value": None, "status": "not-attempted"}
    assert cell_values(rec) == ("plotted only", "not checked")
    text = "sine consistently outperforms ReLU in test accuracy across widths"
    cut = short_value(text, 26)
    assert cut.endswith(" …") and text.startswith(cut[:-2]) and " " in cut

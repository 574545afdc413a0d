"""``lengthgen.verify``: re-runs judged against the stored cells, claim by claim (same / within
noise / borderline / changed), on copies of the stored results (no training here)."""

import json

import pytest

from lengthgen import verify as vf
from lengthgen.config import ConfigError
from helpers import copy_results


def _edit(root, chapter, name, fn):
    path = root / chapter / "cells" / f"{name}.json"
    obj = json.loads(path.read_text())
    fn(obj["data"]["value"])
    path.write_text(json.dumps(obj))


def test_residues_compare_as_their_bound(tmp_path):
    """Rounding residues differ between machines (1e-12 there, 1.8e-13 here): not a change."""
    stored, rerun = (
        copy_results(tmp_path / "a", ["ch0"]),
        copy_results(tmp_path / "b", ["ch0"]),
    )
    _edit(rerun, "ch0", "dilution_grid", lambda v: v.update(max_abs_error=1e-12))
    rows = {r["id"]: r for r in vf.compare_claims("ch0", stored, rerun, {"dilution_grid": False})}
    assert rows["ch0.eq1.closed_form"]["verdict"] == "same"


def test_unchanged_rerun_is_same_everywhere(tmp_path):
    stored, rerun = (
        copy_results(tmp_path / "a", ["ch4"]),
        copy_results(tmp_path / "b", ["ch4"]),
    )
    rows = vf.compare_claims("ch4", stored, rerun, {"lengthgen_sine_nobias": True})
    assert rows and {r["verdict"] for r in rows} == {"same"}


@pytest.mark.parametrize("shift, verdict", [(0.01, "within noise"), (0.3, "changed")])
def test_a_trained_rerun_is_judged_against_its_band(tmp_path, shift, verdict):
    stored, rerun = (
        copy_results(tmp_path / "a", ["ch4"]),
        copy_results(tmp_path / "b", ["ch4"]),
    )

    def move(v):
        for row in v["rows"]:
            for k in list(row):
                if k.isdigit() and isinstance(row[k], float) and row["activation"] == "sine":
                    row[k] = min(1.0, row[k] + shift)

    _edit(rerun, "ch4", "lengthgen_sine_nobias", move)
    rows = {
        r["id"]: r for r in vf.compare_claims("ch4", stored, rerun, {"lengthgen_sine_nobias": True})
    }
    moved = [r for r in rows.values() if r["verdict"] != "same"]
    assert moved, "the edit must move some claim"
    far = rows["ch4.fig4.main.sine_far"]
    assert far["band"] == 0.05 and far["verdict"] in (verdict, "borderline")
    # a shift inside every band exits 0; one beyond the accuracy band exits 1
    assert vf.exit_code({"claims": list(rows.values())}) == int(verdict == "changed")


def test_a_moved_claim_of_deterministic_cells_is_changed_whatever_the_bands(tmp_path):
    stored, rerun = (
        copy_results(tmp_path / "a", ["ch2"]),
        copy_results(tmp_path / "b", ["ch2"]),
    )

    def widen(v):
        c = v["widths"]["pos/index/chi"]
        c["width"][-1] *= 1.5
        c["finite_width"][-1] *= 1.5

    _edit(rerun, "ch2", "volume_scans", widen)
    rows = {r["id"]: r for r in vf.compare_claims("ch2", stored, rerun, {"volume_scans": False})}
    assert rows["ch2.volume.pos_index_chi"]["verdict"] == "changed"
    assert rows["ch2.volume.pos_index_chi"]["band"] is None
    assert vf.exit_code({"claims": list(rows.values())}) == 1


def test_verify_reruns_a_cheap_cell_without_touching_the_store(tmp_path):
    root = copy_results(tmp_path / "results", ["ch0"])
    before = (root / "ch0" / "cells" / "dilution_grid.json").read_bytes()
    res = vf.verify("ch0", out=tmp_path / "out", results=root, progress=False)
    assert [c["cell"] for c in res["cells"]] == ["dilution_grid"]
    assert res["cells"][0]["difference"] <= 1e-12  # float64 closed forms: rounding only
    assert {r["verdict"] for r in res["claims"]} == {"same"} and vf.exit_code(res) == 0
    assert (root / "ch0" / "cells" / "dilution_grid.json").read_bytes() == before
    assert (tmp_path / "out" / "cells" / "dilution_grid.json").exists()
    text = vf.verify_text(res)
    assert "dilution_grid" in text and "3 same, 0 within noise, 0 borderline, 0 changed" in text


def test_verify_bad_input(tmp_path):
    root = copy_results(tmp_path / "results", ["ch0"])
    with pytest.raises(ConfigError, match="chapter"):
        vf.verify("ch9", results=root)
    with pytest.raises(ConfigError, match="the store itself"):
        vf.verify("ch0", out=root / "ch0", results=root, progress=False)
    with pytest.raises(ConfigError, match="the store itself"):
        vf.verify("ch0", out=root / "ch0" / "cells" / "x", results=root, progress=False)
    with pytest.raises(ConfigError, match="no stored results"):
        vf.verify("ch1", results=root)
    with pytest.raises(ConfigError, match="matches no cell"):
        vf.verify("ch0", only=["nope*"], results=root)


def test_cli_verify_exit_codes(tmp_path, monkeypatch, capsys):
    from lengthgen import cli

    root = copy_results(tmp_path, ["ch0"])
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    assert cli.main(["verify", "ch0", "--out", str(tmp_path / "v1")]) == 0
    assert "3 same" in capsys.readouterr().out

    # a stored deterministic result that no longer matches what the code computes: changed, exit 1
    def tamper(v):
        for row in v["rows"]:
            if row["c"] == 4.0 and row["N"] == 100_000 and not row["log_scaled"]:
                row["softmax"] = 0.02  # the unscaled weight at N = 10^5 (ours: 5.5e-4)

    _edit(root, "ch0", "dilution_grid", tamper)
    assert cli.main(["verify", "ch0", "--out", str(tmp_path / "v2"), "--all"]) == 1
    out = capsys.readouterr().out
    assert "ch0.dilution.unscaled" in out and "changed (fails → reproduced)" in out
    assert cli.main(["verify", "ch0", "--only", "zz"]) == 2
    assert "matches no cell" in capsys.readouterr().err

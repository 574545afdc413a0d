import json
import os

import pytest
import torch

from lengthgen import store
from lengthgen.config import ConfigError
from lengthgen.store import ResultFileError, validate


def _prov(**kw):
    return store.provenance(scale="smoke", device="cpu", seeds=[1, 2], **kw)


def test_provenance_fields():
    p = _prov(extra={"command": "python -m lengthgen reproduce ch0", "wall_time_s": 1.23456})
    for key in (
        "command",
        "git_commit",
        "git_dirty",
        "device",
        "torch_version",
        "scale",
        "seeds",
        "wall_time_s",
        "date",
    ):
        assert key in p
    assert p["seeds"] == [1, 2] and p["command"].endswith("ch0")
    assert p["wall_time_s"] == 1.235  # extra's floats are rounded to 3 decimals


def test_save_and_load(tmp_path):
    import numpy as np

    path = store.save_result(
        tmp_path / "a" / "r.json", {"x": np.arange(3), "y": np.float64(0.5)}, _prov()
    )
    obj = store.load_result(path)
    assert obj["data"] == {"x": [0, 1, 2], "y": 0.5}
    assert obj["provenance"]["scale"] == "smoke"
    assert "stored smoke run" in store.stored_label(obj)
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_failed_write_keeps_old_file(tmp_path):
    path = store.save_result(tmp_path / "r.json", {"v": 1}, _prov())

    class Boom:
        def tolist(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.save_result(path, {"v": Boom()}, _prov())
    assert store.load_result(path)["data"] == {"v": 1}
    with pytest.raises(TypeError):
        store.save_result(path, {"v": object()}, _prov())
    assert store.load_result(path)["data"] == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_corrupt_file_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"provenance": ')
    with pytest.raises(ResultFileError, match="bad.json"):
        store.load_result(bad)
    bad.write_text(json.dumps({"data": 1}))
    with pytest.raises(ResultFileError, match="bad.json"):
        store.load_result(bad)
    with pytest.raises(ResultFileError, match="missing.json"):
        store.load_result(tmp_path / "missing.json")


def test_provenance_required(tmp_path):
    with pytest.raises(ValueError, match="provenance"):
        store.save_result(tmp_path / "r.json", {}, {"scale": "smoke"})


SCHEMA = "seeds members.*.seed members.*.test.*:p members=seeds"


def _toy():
    return {
        "seeds": [1, 2],
        "members": [
            {"seed": 1, "test": {"10": 0.5, "20": 1.0}},
            {"seed": 2, "test": {"10": 0.0, "20": 0.75}},
        ],
    }


def test_schema_accepts_valid_data():
    assert validate(_toy(), SCHEMA, "r.json") == _toy()


@pytest.mark.parametrize(
    "tamper, match",
    [
        (
            lambda d: d["members"][1]["test"].__setitem__("20", 7.0),
            r"invalid result r\.json: field 'members\.1\.test\.20' must be a probability in \[0, 1\], got 7\.0",
        ),
        (
            lambda d: d["members"][0]["test"].__setitem__("10", "0.5"),
            r"'members\.0\.test\.10' must be a probability",
        ),
        (
            lambda d: d["members"][0]["test"].__setitem__("10", True),
            r"'members\.0\.test\.10' must be a probability",
        ),
        (
            lambda d: d["members"].pop(),
            r"field 'members' has 1 entries, but the declared protocol needs 2",
        ),
        (lambda d: d["members"][0].pop("seed"), r"field 'members\.0\.seed' is missing"),
        (lambda d: d.pop("seeds"), r"field 'seeds' is missing"),
        (lambda d: d.__setitem__("members", 3), r"field 'members\.\*' is missing"),
    ],
)
def test_schema_names_file_and_field(tamper, match):
    d = _toy()
    tamper(d)
    with pytest.raises(ResultFileError, match=match):
        validate(d, SCHEMA, "r.json")


def test_load_stored_validates_and_files_are_world_readable(tmp_path):
    from lengthgen.engine.runs import Cell

    cell = Cell("toy", _toy, {"seeds": [1, 2]})
    path = store.write_cell(tmp_path, cell, "smoke", _toy(), _prov())
    assert os.stat(path).st_mode & 0o644 == 0o644

    def load():
        return store.load_stored("ch1", "toy", schema=SCHEMA, folder=tmp_path, scale="smoke")

    assert load()["data"] == _toy()
    bad = _toy()
    bad["members"][0]["test"]["10"] = 7.0
    store.write_cell(tmp_path, cell, "smoke", bad, _prov())
    with pytest.raises(ResultFileError, match=r"toy\.json: field 'members\.0\.test\.10'"):
        load()


def test_git_state_and_versions_in_provenance():
    p = _prov()
    st = store.git_state()
    assert set(st) == {"commit", "dirty"}
    for key in ("numpy_version", "lengthgen_version", "threads", "python_version"):
        assert key in p


def test_repo_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    assert store.results_dir() == tmp_path / "results"


def test_schema_counts_top_level_and_bad_protocol():
    validate([1, 2], "=2", "t.json")
    with pytest.raises(ResultFileError, match=r"t\.json: field '<top level>' has 3 entries"):
        validate([1, 2, 3], "=2", "t.json")
    with pytest.raises(
        ResultFileError,
        match=r"field 'members' cannot be counted against the declared protocol",
    ):
        validate({"seeds": [1], "members": []}, "members=runs*seeds", "t.json")
    with pytest.raises(ConfigError, match="must be a str"):
        validate([], ("seeds",), "t.json")


def test_description_alternatives_and_cell_arguments():
    """``(a|b)`` expands to each alternative, ``($k)`` to each item of the cell's argument ``k``;
    a count's factors are numbers or sizes of the value's paths, else of the cell's arguments."""
    d = {"rows": [{"3": 0.5, "7": 1.0, "n": 2}], "protocol": {"runs": 1}}
    spec = "rows.*.($lengths|n) rows.*.($lengths):p rows=protocol.runs*seeds"
    assert validate(d, spec, "t.json", {"lengths": [3, 7], "seeds": [0]}) == d
    with pytest.raises(ResultFileError, match=r"'rows\.0\.9' is missing"):
        validate(d, spec, "t.json", {"lengths": [3, 9], "seeds": [0]})
    with pytest.raises(ResultFileError, match=r"'rows' has 1 entries.*needs 2"):
        validate(d, spec, "t.json", {"lengths": [3], "seeds": [0, 1]})
    with pytest.raises(ResultFileError, match=r"cannot be expanded.*'lengths'"):
        validate(d, spec, "t.json", {"seeds": [0]})


def test_provenance_names_the_machine():
    """CPU model, the instruction set torch dispatches to, BLAS/LAPACK, torch build and threads."""
    from lengthgen import store

    prov = store.provenance(scale="smoke", device="cpu", git={"commit": "x", "dirty": False})
    m = prov["machine"]
    for key in (
        "cpu_model",
        "arch",
        "cpu_capability",
        "blas",
        "lapack",
        "torch_build",
        "threads",
        "interop_threads",
    ):
        assert key in m and m[key] not in (None, ""), key
    assert (
        m["threads"] == torch.get_num_threads()
        and m["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    )
    label = store.machine_label(prov)
    assert m["cpu_model"] in label and m["cpu_capability"] in label and m["blas"] in label
    assert (
        store.machine_label({"device_name": "x86_64"}) == "—" and store.machine_label(None) == "—"
    )


def test_machine_records_the_kernel_settings_of_the_environment(monkeypatch):
    from lengthgen import store

    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "SSE4_2")
    assert store.machine()["mkl_enable_instructions"] == "SSE4_2"


def test_every_stored_cell_holds_what_its_chapter_describes():
    """Every stored cell (``results/*/cells``) passes the generic check against its chapter's
    ``schema(name, scale)`` and the arguments it was computed with."""
    from lengthgen.chapters import chapter_module

    n = 0
    for folder in sorted(store.results_dir().glob("ch*/cells")):
        mod = chapter_module(folder.parent.name)
        for path in sorted(folder.glob("*.json")):
            data = store.read_json(path)["data"]
            spec = mod.schema(path.stem, data["scale"])
            assert spec is not None, path
            validate(data["value"], spec, path, data["kwargs"])
            n += 1
    assert n >= 254

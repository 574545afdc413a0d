import json
import os

import pytest

from lengthgen import store
from lengthgen.store import ResultFileError, ResultStore


def _prov(**kw):
    return store.provenance(scale="smoke", device="cpu", seeds=[1, 2], wall_time_s=1.5, **kw)


def test_provenance_fields():
    p = _prov(command="python -m lengthgen reproduce ch0")
    for key in ("command", "git_commit", "git_dirty", "device", "torch_version", "scale", "seeds", "wall_time_s", "date"):
        assert key in p
    assert p["seeds"] == [1, 2] and p["command"].endswith("ch0")


def test_save_and_load(tmp_path):
    import numpy as np

    path = store.save_result(tmp_path / "a" / "r.json", {"x": np.arange(3), "y": np.float64(0.5)}, _prov())
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


def test_result_store(tmp_path):
    rs = ResultStore(tmp_path / "sweep")
    assert not rs.has("N=11/seed=3")
    rs.put("N=11/seed=3", {"acc": 1.0}, _prov())
    assert rs.has("N=11/seed=3") and rs.get("N=11/seed=3") == {"acc": 1.0}
    assert rs.keys() == ["N=11/seed=3"]


def test_repo_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LENGTHGEN_ROOT", str(tmp_path))
    assert store.results_dir() == tmp_path / "results"

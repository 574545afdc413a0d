"""Chapter 4's paper-scale run made ready for later devices (issue 29), tested on the CPU: the
checkpoint in parts with a manifest (a missing or corrupt part named), and a run split across two
processes, its parts copied to a new folder in between, equal bit for bit to the uninterrupted run."""

import json
import shutil
import subprocess
import sys

import pytest
import torch

from lengthgen.chapters.ch4 import paper_scale as ps
from lengthgen.chapters.ch4.data import train_set
from lengthgen.config import ConfigError
from lengthgen.engine import parts
from lengthgen.store import ResultFileError

from test_ch4_paper_scale import TINY as _PAPER_TINY  # noqa: E402

TINY = {
    **_PAPER_TINY,
    "wds": (0.1, 0.03),
}  # two weight decays: a decay mask to exercise


def _sampler():
    members = ps.members_of(TINY["variants"], TINY["budgets"], TINY["wds"], TINY["seeds"])
    sets = [train_set(m["seed"], 5, (2, 3, 4), m["n"]) for m in members]
    return ps.DeviceLengthSampler(sets, 5, 16, "cpu", seed=1)


def _unequal(a, b, where="") -> list[str]:
    """The places where two checkpoints' values differ (tensors compared bit for bit)."""
    if isinstance(a, torch.Tensor):
        return [] if torch.equal(a, b) else [where]
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [where]
        return [w for k in a for w in _unequal(a[k], b[k], f"{where}.{k}")]
    return [] if a == b else [where]


# --------------------------------------------------------------------------- checkpoint in parts
def test_parts_round_trip_and_name_a_missing_or_corrupt_part(tmp_path):
    obj = {"a": torch.arange(5000, dtype=torch.float32), "b": [1, 2, {"c": "x"}]}
    man = parts.save_parts(tmp_path / "ck", obj, part_bytes=4096, meta={"step": 3})
    names = sorted(p.name for p in (tmp_path / "ck").glob("part-*.bin"))
    assert names == [p["name"] for p in man["parts"]] and len(names) >= 5
    assert all((tmp_path / "ck" / n).stat().st_size <= 4096 for n in names)
    assert (
        man["meta"] == {"step": 3} and sum(p["bytes"] for p in man["parts"]) == man["total_bytes"]
    )
    back = parts.load_parts(tmp_path / "ck")
    assert torch.equal(back["a"], obj["a"]) and back["b"] == obj["b"]
    assert (
        parts.parts_size(tmp_path / "ck")
        == man["total_bytes"] + (tmp_path / "ck" / "manifest.json").stat().st_size
    )
    assert parts.load_parts(tmp_path / "nothing") is None
    # a second save replaces the first set of parts once its manifest is in place
    parts.save_parts(tmp_path / "ck", {"a": obj["a"] + 1}, part_bytes=4096)
    assert not set(names) & {p.name for p in (tmp_path / "ck").glob("part-*.bin")}
    man = parts.read_manifest(tmp_path / "ck")
    third = tmp_path / "ck" / man["parts"][2]["name"]
    data = third.read_bytes()
    third.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one flipped bit
    with pytest.raises(
        ResultFileError,
        match=rf"^checkpoint part .*{third.name} is corrupt: its SHA-256",
    ):
        parts.load_parts(tmp_path / "ck")
    third.write_bytes(data[:100])
    with pytest.raises(
        ResultFileError, match=rf"{third.name} is corrupt: 100 bytes, the manifest says"
    ):
        parts.verify_parts(tmp_path / "ck")
    third.unlink()
    with pytest.raises(ResultFileError) as err:
        parts.load_parts(tmp_path / "ck")
    msg = str(err.value)
    assert "\n" not in msg and third.name in msg and "is missing" in msg
    (tmp_path / "ck" / "manifest.json").write_text("{not json")
    with pytest.raises(ResultFileError, match="corrupt checkpoint manifest"):
        parts.load_parts(tmp_path / "ck")
    with pytest.raises(ResultFileError, match="manifest.json is missing"):
        parts.verify_parts(tmp_path / "empty")
    with pytest.raises(ConfigError, match="part_bytes must be an integer >= 1, got 0"):
        parts.save_parts(tmp_path / "x", obj, part_bytes=0)


def test_stored_checkpoint_keeps_only_the_latest(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    parts.save_parts(a, {"x": 1}, meta={"key": "k", "step": 10})
    r = ps.store_checkpoint(a, "paper_p53", dest_root=tmp_path / "store")
    assert r["result"] == "copied" and r["step"] == 10 and r["parts"] == 1
    assert r["bytes"] == parts.parts_size(tmp_path / "store" / "paper_p53")
    parts.save_parts(b, {"x": 0}, meta={"key": "k", "step": 5})  # a run that got less far
    r = ps.store_checkpoint(b, "paper_p53", dest_root=tmp_path / "store")
    assert r["result"].startswith("kept:") and r["step"] == 10
    parts.save_parts(b, {"x": 2}, meta={"key": "other", "step": 50})
    assert (
        "another configuration" in ps.store_checkpoint(b, "paper_p53", tmp_path / "store")["result"]
    )
    parts.save_parts(b, {"x": 3}, meta={"key": "k", "step": 20})
    assert ps.store_checkpoint(b, "paper_p53", tmp_path / "store")["step"] == 20
    assert len(list((tmp_path / "store" / "paper_p53").glob("part-*.bin"))) == 1
    assert parts.load_parts(tmp_path / "store" / "paper_p53") == {"x": 3}
    with pytest.raises(ConfigError, match="plain folder name"):
        ps.store_checkpoint(b, "../x", tmp_path / "store")


_RUN = """
import json, sys
from lengthgen.chapters.ch4.paper_scale import train_paper_scale
kw = json.loads(sys.argv[1])
r = train_paper_scale(**kw)
print("RESULT", json.dumps({k: r[k] for k in ("partial", "progress", "resumed_at", "history")}))
"""


def _run_process(kw: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(kw)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


def test_a_run_split_across_two_processes_and_a_copy_equals_the_uninterrupted_run(tmp_path, capsys):
    whole = ps.train_paper_scale(**TINY, workdir=str(tmp_path / "whole"), checkpoint_parts=True)
    assert not (tmp_path / "whole" / "checkpoint.pt").exists()
    first = _run_process(
        {
            **TINY,
            "workdir": str(tmp_path / "m1"),
            "checkpoint_parts": True,
            "_stop_at": 20,  # at an evaluation: the split history is the whole one
        }
    )
    assert first["partial"] and first["progress"]["done"] == 20
    # "a new machine": only the parts travel, to a folder the first process never saw; the
    # second half runs in this process (another process than the first half's, one import less)
    shutil.copytree(tmp_path / "m1" / "checkpoint", tmp_path / "m2" / "checkpoint")
    second = ps.train_paper_scale(**TINY, workdir=str(tmp_path / "m2"), checkpoint_parts=True)
    log = capsys.readouterr().out
    assert f"resumed from {tmp_path / 'm2' / 'checkpoint'} at update 20" in log
    assert not second["partial"] and second["resumed_at"] == [20]
    a = parts.load_parts(tmp_path / "whole" / "checkpoint")
    b = parts.load_parts(tmp_path / "m2" / "checkpoint")
    # parameters, optimizer state and count, sampler permutations and RNG state, losses
    keys = ("params", "opt", "sampler", "loss_sum")
    assert _unequal({k: a[k] for k in keys}, {k: b[k] for k in keys}) == []
    assert a["loss_n"] == b["loss_n"] and a["step"] == b["step"] == 40
    strip = lambda h: [{k: v for k, v in e.items() if k != "wall_s"} for e in h]  # noqa: E731
    assert strip(second["history"]) == strip(whole["history"]) == strip(b["history"])
    assert [h["step"] for h in b["history"]] == [20, 40]
    man = parts.read_manifest(tmp_path / "m2" / "checkpoint")
    assert man["meta"]["step"] == 40 and man["meta"]["key"] == a["key"]
    assert all(p["bytes"] <= parts.PART_BYTES for p in man["parts"])


def test_a_run_resumes_from_the_checkpoint_further_along_and_names_a_bad_part(tmp_path, capsys):
    ps.train_paper_scale(**TINY, workdir=str(tmp_path), _stop_at=10)  # checkpoint.pt at 10
    ps.train_paper_scale(
        **{**TINY, "steps": 40},
        workdir=str(tmp_path / "p"),
        checkpoint_parts=True,
        _stop_at=20,
    )
    shutil.copytree(tmp_path / "p" / "checkpoint", tmp_path / "checkpoint")
    capsys.readouterr()
    r = ps.train_paper_scale(**TINY, workdir=str(tmp_path), checkpoint_parts=True, _stop_at=30)
    assert r["resumed_at"] == [20]  # the parts (20) over checkpoint.pt (10)
    man = parts.read_manifest(tmp_path / "checkpoint")
    (tmp_path / "checkpoint" / man["parts"][0]["name"]).unlink()
    with pytest.raises(ResultFileError, match=r"^checkpoint part .*part-.*-000\.bin is missing"):
        ps.train_paper_scale(**TINY, workdir=str(tmp_path), checkpoint_parts=True)


def test_module_command_line(tmp_path, capsys):
    """``python -m lengthgen.chapters.ch4.paper_scale`` (its ``main``, called in this process)."""
    assert ps.main(["store-checkpoint", str(tmp_path / "nowhere"), "paper_p53"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "manifest.json is missing" in err
    parts.save_parts(tmp_path / "ck", {"x": 1}, meta={"key": "k", "step": 7})
    monkey = tmp_path / "results"
    assert ps.store_checkpoint(tmp_path / "ck", "paper_p53", monkey)["result"] == "copied"


def test_bad_switches_and_a_checkpoint_of_another_device_type_are_refused(monkeypatch):
    monkeypatch.setenv(ps.PARTS_ENV, "yes")  # the environment switch of gpu_ch4.sh
    with pytest.raises(ConfigError, match=r"LENGTHGEN_CH4_PARTS must be 0 or 1, got 'yes'"):
        ps.train_paper_scale(**TINY)
    with pytest.raises(ConfigError, match="checkpoint_parts must be"):
        ps.train_paper_scale(**TINY, checkpoint_parts=1)
    s = _sampler()
    st = dict(s.state(), gen=torch.zeros(16, dtype=torch.uint8))  # a CUDA (Philox) state
    with pytest.raises(ConfigError, match=r"RNG state \(16 bytes\) is not one of a cpu generator"):
        s.load(st)

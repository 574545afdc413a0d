"""Chapter 4's paper-scale run made ready for later devices (issue 29), tested on the CPU: the
captured-step path (skipped off CUDA with a one-line reason, the eager results unchanged; the step
function pure with respect to its buffers; the capturable optimizer equal to the eager one), the
checkpoint in parts with a manifest (a missing or corrupt part named), and a run split across two
processes, its parts copied to a new folder in between, equal bit for bit to the uninterrupted run."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from lengthgen.chapters.ch4 import device_checks as dc
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
SKIP_LINE = (
    "captured step skipped: CUDA graphs need a CUDA device, this run is on cpu; "
    "running the eager step"
)


def _ck(folder: Path) -> dict:
    return torch.load(folder / "checkpoint.pt", map_location="cpu", weights_only=False)


def _stepper(seed_shift=0, capturable=False):
    members = ps.members_of(TINY["variants"], TINY["budgets"], TINY["wds"], TINY["seeds"])
    model = ps.VariantMLP(5, 16, members)
    sets = [train_set(m["seed"] + seed_shift, 5, (2, 3, 4), m["n"]) for m in members]
    sampler = ps.DeviceLengthSampler(sets, 5, 16, "cpu", seed=1 + seed_shift)
    params = model.init("cpu")
    if seed_shift:
        params = {k: v + 0.01 * seed_shift for k, v in params.items()}
    opt = model.optimizer(params, 3e-2, capturable=capturable)
    loss = torch.zeros(len(members), dtype=torch.float64)
    return ps.PaperStep(model, sampler, opt, params, loss)


# --------------------------------------------------------------------------- the captured step
def test_graph_on_cpu_is_skipped_with_one_line_and_the_eager_path_is_unchanged(
    tmp_path, capsys, monkeypatch
):
    eager = ps.train_paper_scale(**TINY, workdir=str(tmp_path / "e"))
    assert "captured step skipped" not in capsys.readouterr().out
    assert "captured_step" not in eager  # today's result, key for key
    asked = ps.train_paper_scale(**TINY, workdir=str(tmp_path / "g"), graph=True)
    out = capsys.readouterr().out
    assert out.count(SKIP_LINE + "\n") == 1
    assert asked["captured_step"] == {
        "requested": True,
        "used": False,
        "skipped_because": "CUDA graphs need a CUDA device, this run is on cpu",
        "capture_s": None,
        "paths": [[0, "eager"]],
    }
    assert asked["history"] == [
        {**h, "wall_s": g["wall_s"]} for h, g in zip(eager["history"], asked["history"])
    ]
    assert dc.compare_states(_ck(tmp_path / "e"), _ck(tmp_path / "g"))["bitwise"]
    monkeypatch.setenv(ps.GRAPH_ENV, "1")  # the environment switch of gpu_ch4.sh
    ps.train_paper_scale(**{**TINY, "steps": 2}, workdir=str(tmp_path / "v"))
    assert SKIP_LINE in capsys.readouterr().out
    monkeypatch.setenv(ps.GRAPH_ENV, "yes")
    with pytest.raises(ConfigError, match=r"LENGTHGEN_CH4_GRAPH must be 0 or 1, got 'yes'"):
        ps.train_paper_scale(**TINY)
    monkeypatch.delenv(ps.GRAPH_ENV)
    with pytest.raises(ConfigError, match=r"graph must be True, False or None, got 'on'"):
        ps.train_paper_scale(**TINY, graph="on")
    with pytest.raises(ConfigError, match="checkpoint_parts must be"):
        ps.train_paper_scale(**TINY, checkpoint_parts=1)


def test_capture_refuses_cleanly_without_cuda():
    assert ps.graph_unavailable_reason("cpu") == (
        "CUDA graphs need a CUDA device, this run is on cpu"
    )
    if not torch.cuda.is_available():
        assert ps.graph_unavailable_reason("cuda") == (
            "CUDA graphs need a CUDA device, and torch sees none"
        )
    with pytest.raises(ConfigError, match="^cannot capture the step: CUDA graphs need a CUDA"):
        ps.CapturedStep(_stepper(capturable=True))
    with pytest.raises(ConfigError, match="CapturableOptimizer"):
        ps.CapturedStep(_stepper(capturable=False))
    with pytest.raises(ConfigError, match="needs a PaperStep"):
        ps.CapturedStep(lambda: None)
    with pytest.raises(ConfigError, match="capturable must be True or False"):
        _stepper().model.optimizer({}, 0.1, capturable="yes")
    rep = dc.compare_step_paths("cpu")
    assert rep == {
        "skipped": "CUDA graphs need a CUDA device, this run is on cpu",
        "passed": None,
        "device": "cpu",
    }


def test_the_step_is_pure_with_respect_to_its_buffers():
    """What a graph replay needs: after the first update (lazy optimizer state) the step keeps the
    same tensors (same storage) from update to update, and its result is a function of them alone:
    a second step whose buffers are overwritten with the first one's makes the identical update."""
    a, b = _stepper(capturable=True), _stepper(seed_shift=3, capturable=True)
    for s in (a, b):
        s.sampler.reshuffle(0)
        s()
    ptrs = {k: v.data_ptr() for k, v in a.buffers().items()}
    assert {
        "params.W",
        "opt.W.momentum_buffer",
        "opt.b.exp_avg",
        "opt.t",
        "sampler.perm",
    } <= set(ptrs)
    for step in range(1, 16):  # across both budgets' epoch restarts (7 and 14 updates)
        a.sampler.reshuffle(step)
        a()
        assert {k: v.data_ptr() for k, v in a.buffers().items()} == ptrs
    # b: other data, other weights; copy a's buffers (and the data and host count) into it
    with torch.no_grad():
        for k, v in a.buffers().items():
            b.buffers()[k].copy_(v)
    b.sampler.X.copy_(a.sampler.X)
    b.sampler.Y.copy_(a.sampler.Y)
    b.opt.t = a.opt.t
    a(), b()
    for k, v in a.buffers().items():
        assert torch.equal(v, b.buffers()[k]), k
    # a host-side replay stand-in: after_replay advances exactly the optimizer's host count
    t = a.opt.t
    a.after_replay()
    assert a.opt.t == t + 1
    with pytest.raises(RuntimeError, match="update count on the device is"):
        a.opt.check_counter()


def test_capturable_step_equals_the_eager_step_to_float32_tolerance(tmp_path):
    """The capturable optimizer (bias corrections from a device counter) against today's eager
    loop: within the float32 tolerance the device check applies (the two compute the update
    differently, so another CPU may round them apart; this one usually agrees bit for bit)."""
    ps.train_paper_scale(**TINY, workdir=str(tmp_path / "e"))
    r = ps.train_paper_scale(**TINY, workdir=str(tmp_path / "c"), _capturable_eager=True)
    assert r["captured_step"]["paths"] == [[0, "eager-capturable"]]
    rep = dc.compare_states(_ck(tmp_path / "e"), _ck(tmp_path / "c"))
    assert rep["within_float32_tolerance"] and rep["optimizer_count_equal"]
    assert len(_ck(tmp_path / "e")["history"]) == len(_ck(tmp_path / "c")["history"])
    assert rep["tolerance_ulps"] == dc.REL_TOL_ULPS
    # the comparison sees a one-ulp change, a large change, and a changed count
    a, b = _ck(tmp_path / "e"), _ck(tmp_path / "e")
    b["params"]["W"][0, 0, 0] = torch.nextafter(b["params"]["W"][0, 0, 0], torch.tensor(9.0))
    one = dc.compare_states(a, b)
    assert not one["bitwise"] and one["within_float32_tolerance"]
    assert 0 < one["tensors"]["params.W"]["ulps_of_max"] <= 1
    b["params"]["V"] += 1e-3
    assert not dc.compare_states(a, b)["within_float32_tolerance"]
    b = _ck(tmp_path / "e")
    b["opt"]["t"] += 1
    assert not dc.compare_states(a, b)["within_float32_tolerance"]


def test_step_rates_on_cpu_measure_eager_and_say_why_no_graph():
    r = dc.measure_step_rates({**TINY, "p": 5}, updates=3, device="cpu")
    assert r["eager_updates_per_s"] > 0 and r["members"] == 24
    assert r["graph_skipped"] == "CUDA graphs need a CUDA device, this run is on cpu"
    assert "speedup" not in r
    with pytest.raises(ConfigError, match="config must be a dict with keys"):
        dc.measure_step_rates({"p": 5})
    with pytest.raises(ConfigError, match="updates must be an integer >= 1, got 0"):
        dc.measure_step_rates(TINY, updates=0, device="cpu")


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
    r = dc.store_checkpoint(a, "paper_p53", dest_root=tmp_path / "store")
    assert r["result"] == "copied" and r["step"] == 10 and r["parts"] == 1
    assert r["bytes"] == parts.parts_size(tmp_path / "store" / "paper_p53")
    parts.save_parts(b, {"x": 0}, meta={"key": "k", "step": 5})  # a run that got less far
    r = dc.store_checkpoint(b, "paper_p53", dest_root=tmp_path / "store")
    assert r["result"].startswith("kept:") and r["step"] == 10
    parts.save_parts(b, {"x": 2}, meta={"key": "other", "step": 50})
    assert (
        "another configuration" in dc.store_checkpoint(b, "paper_p53", tmp_path / "store")["result"]
    )
    parts.save_parts(b, {"x": 3}, meta={"key": "k", "step": 20})
    assert dc.store_checkpoint(b, "paper_p53", tmp_path / "store")["step"] == 20
    assert len(list((tmp_path / "store" / "paper_p53").glob("part-*.bin"))) == 1
    assert parts.load_parts(tmp_path / "store" / "paper_p53") == {"x": 3}
    with pytest.raises(ConfigError, match="plain folder name"):
        dc.store_checkpoint(b, "../x", tmp_path / "store")


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
    # parameters, optimizer state and count, sampler permutations and RNG state, losses, history
    rep = dc.compare_states(a, b)
    assert rep["bitwise"], {k: v for k, v in rep["tensors"].items() if not v["bitwise"]}
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
    assert dc.main(["check-graph", "--device", "cpu", "--out", str(tmp_path / "g.json")]) == 0
    assert '"passed": null' in capsys.readouterr().out
    rep = json.loads((tmp_path / "g.json").read_text())
    assert rep["skipped"].startswith("CUDA graphs need a CUDA device")
    assert dc.main(["store-checkpoint", str(tmp_path / "nowhere"), "paper_p53"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "manifest.json is missing" in err
    parts.save_parts(tmp_path / "ck", {"x": 1}, meta={"key": "k", "step": 7})
    monkey = tmp_path / "results"
    assert dc.store_checkpoint(tmp_path / "ck", "paper_p53", monkey)["result"] == "copied"


def test_a_checkpoint_of_another_device_type_is_refused_in_one_line():
    s = _stepper().sampler
    st = dict(s.state(), gen=torch.zeros(16, dtype=torch.uint8))  # a CUDA (Philox) state
    with pytest.raises(ConfigError, match=r"RNG state \(16 bytes\) is not one of a cpu generator"):
        s.load(st)
    with pytest.raises(ConfigError, match="sampler checkpoint perm has shape"):
        s.load(dict(s.state(), perm=torch.zeros(2, 2, dtype=torch.long)))

"""The ensemble engine: equality with a Python loop, early stopping / selection, paired runs, bad input."""
import json
import math

import pytest
import torch
import torch.nn.functional as F

from lengthgen.engine.train import (OptimConfig, Validation, VariantModel, accuracy, classification_loss,
                             classification_metric, evaluate_ensemble, members_of, paired, seeded_generators,
                             select_members, train_ensemble, vmap_model)

D, H, B = 5, 6, 32


class MLP:
    """Hand-batched 2-layer tanh MLP with one binary logit."""

    def init(self, seeds, dtype=torch.float64, device=None):
        gens = seeded_generators(seeds)
        return {
            "W1": torch.stack([torch.randn(H, D, generator=g, dtype=dtype) / math.sqrt(D) for g in gens]),
            "b1": torch.stack([torch.randn(H, generator=g, dtype=dtype) * 0.1 for g in gens]),
            "W2": torch.stack([torch.randn(1, H, generator=g, dtype=dtype) / math.sqrt(H) for g in gens]),
            "b2": torch.zeros(len(seeds), 1, dtype=dtype),
        }

    def forward(self, p, x):
        h = torch.tanh(torch.einsum("ebd,ehd->ebh", x, p["W1"]) + p["b1"][:, None, :])
        return (torch.einsum("ebh,eoh->ebo", h, p["W2"]) + p["b2"][:, None, :]).squeeze(-1)


class MLPModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.W1 = torch.nn.Parameter(torch.randn(H, D) / math.sqrt(D))
        self.b1 = torch.nn.Parameter(torch.randn(H) * 0.1)
        self.W2 = torch.nn.Parameter(torch.randn(1, H) / math.sqrt(H))
        self.b2 = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        h = torch.tanh(x @ self.W1.T + self.b1)
        return (h @ self.W2.T + self.b2).squeeze(-1)


def sample(step, gens):
    x = torch.stack([torch.randn(B, D, generator=g, dtype=torch.float64) for g in gens])
    return x, (x[..., 0] + 0.5 * x[..., 1] > 0).long()


SEEDS = [11, 12, 13, 14]
DATA = [101, 102, 103, 104]


def loop_reference(params, name, lrs, wds, steps, clip=None, **kw):
    """Member by member: nn.Module + torch.optim, same initial tensors and data streams."""
    losses, finals = [], []
    for e in range(members_of(params)):
        mod = MLPModule().double()
        with torch.no_grad():
            for k, p in mod.named_parameters():
                p.copy_(params[k][e])
        cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}[name]
        opt = cls(mod.parameters(), lr=lrs[e], weight_decay=wds[e], **kw)
        gen = torch.Generator().manual_seed(DATA[e])
        curve = []
        for step in range(steps):
            x, y = sample(step, [gen])
            loss = F.binary_cross_entropy_with_logits(mod(x[0]), y[0].double())
            opt.zero_grad()
            loss.backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(mod.parameters(), clip)
            opt.step()
            curve.append(loss.item())
        losses.append(curve)
        finals.append({k: v.detach() for k, v in mod.named_parameters()})
    return torch.tensor(losses, dtype=torch.float64).T, finals


@pytest.mark.parametrize("name,kw,clip", [
    ("adam", {}, 0.3),
    ("adamw", {}, None),
    ("sgd", {"momentum": 0.9, "nesterov": True}, 0.5),
    ("sgd", {}, None),
])
def test_engine_equals_python_loop(name, kw, clip):
    model = MLP()
    params = model.init(SEEDS)
    lrs, wds = [0.05, 0.02, 0.01, 0.05], [0.0, 0.01, 0.1, 0.0]
    res = train_ensemble(model, params, sample=sample, optim=OptimConfig(name, lr=lrs, weight_decay=wds, clip=clip, **kw),
                         steps=25, data_seeds=DATA, progress=False)
    ref_loss, ref_params = loop_reference(params, name, lrs, wds, 25, clip=clip, **kw)
    assert res.history["loss"].shape == (25, 4)
    torch.testing.assert_close(res.history["loss"], ref_loss, rtol=0, atol=1e-12)
    for e in range(4):
        for k in params:
            torch.testing.assert_close(res.final_params[k][e], ref_params[e][k], rtol=0, atol=1e-12)
    # no validation: the selected parameters are the final ones
    assert all(torch.equal(res.params[k], res.final_params[k]) for k in params)
    assert res.stop_step.tolist() == [25] * 4 and res.steps_run == 25
    # params passed in are not modified
    assert torch.equal(params["W1"], model.init(SEEDS)["W1"])


def test_deterministic_and_member_independent():
    model = MLP()
    params = model.init(SEEDS)
    cfg = OptimConfig("adam", lr=0.01, clip=1.0)
    r1 = train_ensemble(model, params, sample=sample, optim=cfg, steps=10, data_seeds=DATA, progress=False)
    r2 = train_ensemble(model, params, sample=sample, optim=cfg, steps=10, data_seeds=DATA, progress=False)
    assert all(torch.equal(r1.final_params[k], r2.final_params[k]) for k in params)
    # member 2 trained alone reproduces its numbers inside the ensemble
    sub = select_members(params, [2])
    r3 = train_ensemble(model, sub, sample=sample, optim=cfg, steps=10, data_seeds=[DATA[2]], progress=False)
    for k in params:
        torch.testing.assert_close(r3.final_params[k][0], r1.final_params[k][2], rtol=0, atol=1e-13)


def test_vmap_model_matches_hand_batched():
    vm = vmap_model(MLPModule)
    vparams = vm.init(SEEDS, torch.float64)
    assert set(vparams) == {"W1", "b1", "W2", "b2"} and vparams["W1"].shape == (4, H, D)
    torch.manual_seed(SEEDS[1])
    ref = MLPModule().double()
    assert torch.equal(vparams["W1"][1], ref.W1.detach())
    x, _ = sample(0, seeded_generators(DATA))
    torch.testing.assert_close(vm.forward(vparams, x), MLP().forward(vparams, x), rtol=0, atol=1e-13)
    cfg = OptimConfig("adam", lr=0.01)
    r1 = train_ensemble(vm, vparams, sample=sample, optim=cfg, steps=5, data_seeds=DATA, progress=False)
    r2 = train_ensemble(MLP(), vparams, sample=sample, optim=cfg, steps=5, data_seeds=DATA, progress=False)
    torch.testing.assert_close(r1.history["loss"], r2.history["loss"], rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- early stopping / selection
EVERY = 2
# validation accuracy / loss per member and validation index (validation k happens after update EVERY*k)
ACC = torch.tensor([
    [0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],   # stops at validation 4 (3 perfect in a row)
    [1.0, 0.9, 1.0, 1.0, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0],   # streak broken twice, stops at validation 8
    [0.5, 0.7, 0.7, 0.6, 0.7, 0.2, 0.1, 0.1, 0.1, 0.1],   # never perfect: best 0.7, lowest loss
    [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],   # never 3 in a row: runs to the end
], dtype=torch.float64)
LOSS = torch.tensor([
    [0.9, 0.3, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2],   # best: val 3 (tie with val 4 -> earlier)
    [0.5, 0.5, 0.4, 0.4, 0.5, 0.3, 0.3, 0.3, 0.3, 0.3],   # best: val 6 (first of the 0.3 ties)
    [0.9, 0.5, 0.4, 0.1, 0.4, 0.1, 0.1, 0.1, 0.1, 0.1],   # best: val 3 (acc 0.7, loss 0.4 earliest)
    [0.5, 0.4, 0.0, 0.3, 0.4, 0.0, 0.2, 0.2, 0.0, 0.2],   # best: val 7 (acc 1, loss 0.2, earliest)
], dtype=torch.float64)


class Counter:
    """w grows by exactly 1 per update (SGD, lr 1, loss −w); w0 = 1000·member encodes who is who."""

    def forward(self, p, x):
        return p["w"][:, None].expand(-1, x.shape[1])


def counter_loss(out, y):
    return -out.mean(1)


def table_metric(out, y):
    w = out[:, 0].detach()
    member = torch.div(w, 1000, rounding_mode="floor").long()
    k = ((w - 1000 * member) / EVERY).round().long() - 1
    return ACC[member, k], LOSS[member, k]


def test_early_stopping_and_checkpoint_selection():
    E, steps = 4, EVERY * 10
    params = {"w": 1000.0 * torch.arange(E, dtype=torch.float64)}
    seen = []

    def smp(step, gens, members):
        seen.append(members.tolist())
        assert len(gens) == len(members)
        return torch.zeros(len(gens), 3), torch.zeros(len(gens), 3)

    bank = (torch.zeros(7), torch.zeros(7))
    res = train_ensemble(Counter(), params, sample=smp, loss=counter_loss, optim=OptimConfig("sgd", lr=1.0),
                         steps=steps, data_seeds=[1, 2, 3, 4],
                         validation=Validation(every=EVERY, bank=bank, patience=3, metric=table_metric), progress=False)
    assert res.stop_step.tolist() == [4 * EVERY, 8 * EVERY, steps, steps]
    assert res.best_step.tolist() == [3 * EVERY, 6 * EVERY, 3 * EVERY, 7 * EVERY]
    assert res.best_acc.tolist() == [1.0, 1.0, 0.7, 1.0]
    assert res.best_loss.tolist() == [0.1, 0.3, 0.4, 0.2]
    # selected / final parameters: w0 + number of updates at that point
    assert res.params["w"].tolist() == [1000 * e + s for e, s in enumerate(res.best_step.tolist())]
    assert res.final_params["w"].tolist() == [1000 * e + s for e, s in enumerate(res.stop_step.tolist())]
    # stopped members received no further batches
    assert seen[4 * EVERY - 1] == [0, 1, 2, 3] and seen[4 * EVERY] == [1, 2, 3]
    assert seen[8 * EVERY] == [2, 3] and len(seen) == steps
    # history: NaN once stopped
    assert res.history["val_step"].tolist() == [EVERY * (k + 1) for k in range(10)]
    assert torch.isnan(res.history["val_acc"][4:, 0]).all() and not torch.isnan(res.history["val_acc"][:4, 0]).any()
    assert torch.isnan(res.history["loss"][4 * EVERY:, 0]).all()
    summary = json.loads(json.dumps(res.summary()))
    assert summary["stop_step"] == res.stop_step.tolist() and not any(math.isnan(v) for v in summary["final_loss"])
    assert res.final_loss()[0] == res.history["loss"][4 * EVERY - 1, 0]


def test_all_members_stop_ends_the_loop():
    params = {"w": 1000.0 * torch.arange(2, dtype=torch.float64)}
    res = train_ensemble(Counter(), params, sample=lambda s, g: (torch.zeros(len(g), 3), None), loss=counter_loss,
                         optim=OptimConfig("sgd", lr=1.0), steps=1000, data_seeds=[1, 2],
                         validation=Validation(every=EVERY, bank=(torch.zeros(3), torch.zeros(3)), patience=3,
                                               metric=table_metric), progress=False)
    assert res.steps_run == 8 * EVERY and res.stop_step.tolist() == [4 * EVERY, 8 * EVERY]


def test_validation_at_end_and_default_metric():
    model = MLP()
    params = model.init(SEEDS)
    g = torch.Generator().manual_seed(5)
    bx = torch.randn(50, D, generator=g, dtype=torch.float64)
    by = (bx[:, 0] + 0.5 * bx[:, 1] > 0).long()
    res = train_ensemble(model, params, sample=sample, optim=OptimConfig("adam", lr=0.05), steps=7, data_seeds=DATA,
                         validation=Validation(every=3, bank=(bx, by), patience=None, batch_size=16), progress=False)
    assert res.history["val_step"].tolist() == [3, 6, 7]
    acc = evaluate_ensemble(model, res.params, {"bank": (bx, by)})["bank"]
    torch.testing.assert_close(acc, res.best_acc)
    best_k = [res.history["val_step"].tolist().index(s) for s in res.best_step.tolist()]
    assert all(res.history["val_acc"][k, e] == res.best_acc[e] for e, k in enumerate(best_k))


def test_evaluate_chunks_and_per_member_banks():
    model = MLP()
    params = model.init(SEEDS)
    x, y = sample(0, seeded_generators(DATA))
    full = evaluate_ensemble(model, params, {0: (x, y)}, per_member=True)[0]
    chunked = evaluate_ensemble(model, params, {0: (x, y)}, per_member=True, batch_size=5)[0]
    torch.testing.assert_close(full, chunked, rtol=0, atol=1e-15)
    torch.testing.assert_close(full, accuracy(model.forward(params, x), y))
    ce = evaluate_ensemble(model, params, {0: (x, y)}, metric="cross_entropy", per_member=True, batch_size=7)[0]
    torch.testing.assert_close(ce, classification_loss(model.forward(params, x), y), rtol=0, atol=1e-13)
    shared = evaluate_ensemble(model, params, {"a": (x[0], y[0]), "b": (x[1], y[1])})
    assert set(shared) == {"a", "b"} and shared["a"].shape == (4,)


def test_losses_and_metrics():
    out = torch.tensor([[[2.0, 0.0], [0.0, 1.0]]])
    y = torch.tensor([[0, 0]])
    assert accuracy(out, y).tolist() == [0.5]
    ref = F.cross_entropy(out[0], y[0])
    torch.testing.assert_close(classification_loss(out, y)[0], ref)
    logits = torch.tensor([[1.0, -2.0, 0.5]])
    yb = torch.tensor([[1, 1, 0]])
    assert accuracy(logits, yb).tolist() == [pytest.approx(1 / 3)]
    two_class = torch.stack([torch.zeros_like(logits), logits], -1)
    torch.testing.assert_close(classification_loss(logits, yb), classification_loss(two_class, yb))
    acc, ce = classification_metric(two_class, yb)
    assert acc.tolist() == [pytest.approx(1 / 3)] and ce.dtype == torch.float64
    with pytest.raises(ValueError, match="cannot match"):
        classification_loss(torch.zeros(2, 3, 4, 5), torch.zeros(2, 3))


# --------------------------------------------------------------------------- paired runs
class Scaled(MLP):
    def forward(self, p, x):
        return 2.0 * super().forward(p, x)


def test_paired_runs_share_initial_tensors_and_batches():
    model = MLP()
    params = model.init(SEEDS)
    pp, seeds = paired(params, DATA)
    assert seeds == DATA + DATA and pp["_variant"].tolist() == [0] * 4 + [1] * 4
    for k in params:
        assert torch.equal(pp[k][:4], params[k]) and torch.equal(pp[k][4:], params[k])
        assert pp[k].data_ptr() != params[k].data_ptr()
    batches = []

    def smp(step, gens):
        x, y = sample(step, gens)
        batches.append(x)
        return x, y

    res = train_ensemble(VariantModel(MLP(), MLP()), pp, sample=smp, optim=OptimConfig("adam", lr=0.01), steps=5,
                         data_seeds=seeds, progress=False)
    for x in batches:
        assert torch.equal(x[:4], x[4:])
    # identical variants -> identical copies; the constant is carried along untouched
    for k in params:
        assert torch.equal(res.final_params[k][:4], res.final_params[k][4:])
    assert res.final_params["_variant"].tolist() == pp["_variant"].tolist()
    # different variants: each copy is its own model, and equals that model trained alone
    r2 = train_ensemble(VariantModel(MLP(), Scaled()), pp, sample=sample, optim=OptimConfig("adam", lr=0.01), steps=5,
                        data_seeds=seeds, progress=False)
    alone = train_ensemble(Scaled(), params, sample=sample, optim=OptimConfig("adam", lr=0.01), steps=5,
                           data_seeds=DATA, progress=False)
    torch.testing.assert_close(r2.final_params["W1"][4:], alone.final_params["W1"], rtol=0, atol=1e-13)
    torch.testing.assert_close(r2.final_params["W1"][:4], res.final_params["W1"][:4], rtol=0, atol=1e-13)
    assert not torch.allclose(r2.final_params["W1"][4:], r2.final_params["W1"][:4])


# --------------------------------------------------------------------------- bad input
def _good():
    model = MLP()
    return dict(model=model, params=model.init(SEEDS), sample=sample, optim=OptimConfig(), steps=2, data_seeds=DATA,
                progress=False)


@pytest.mark.parametrize("change,match", [
    ({"steps": 0}, "steps must be an integer >= 1"),
    ({"steps": -3}, "steps must be an integer >= 1"),
    ({"steps": 2.5}, "steps must be an integer >= 1"),
    ({"data_seeds": [1, 2, 3]}, "data_seeds has 3 seeds but params have 4 members"),
    ({"data_seeds": 7}, "data_seeds must be a sequence"),
    ({"data_seeds": [1, 2, 3, -4]}, r"seeds\[3\] must be an integer >= 0"),
    ({"optim": OptimConfig("adam", lr=[0.1, 0.2])}, "lr has 2 values but the ensemble has 4 members"),
    ({"optim": OptimConfig("adamw", weight_decay=[0.1] * 5)}, "weight_decay has 5 values"),
    ({"optim": "adam"}, "optim must be an OptimConfig"),
    ({"sample": 3}, "sample must be a callable"),
    ({"loss": None}, "loss must be a callable"),
    ({"validation": 5}, "validation must be a Validation"),
    ({"record_every": 0}, "record_every must be an integer >= 1"),
    ({"device": "tpu"}, "unknown device"),
    ({"params": {"a": torch.zeros(4, 2), "b": torch.zeros(3, 2)}}, "disagree on the number of members"),
    ({"params": {}}, "non-empty dict"),
    ({"params": {"a": torch.zeros(4, dtype=torch.long)}}, "must be floating point"),
    ({"params": {"_c": torch.zeros(4)}}, "no trainable parameters"),
    ({"optim": OptimConfig("muon", muon_params=("b1",))}, "Muon needs a matrix per member"),
    ({"optim": OptimConfig("muon", muon_params=("nope",))}, "muon_params names unknown parameter 'nope'"),
    ({"optim": OptimConfig("adam", decay=("nope",))}, "decay names unknown parameter"),
])
def test_bad_arguments(change, match):
    kw = _good()
    kw.update(change)
    with pytest.raises((ValueError, TypeError), match=match):
        train_ensemble(kw.pop("model"), kw.pop("params"), **kw)


def test_bad_model_loss_and_validation():
    kw = _good()
    with pytest.raises(TypeError, match="forward"):
        train_ensemble(object(), kw["params"], sample=sample, steps=1, data_seeds=DATA, progress=False)
    with pytest.raises(ValueError, match="per-member tensor of shape"):
        train_ensemble(kw["model"], kw["params"], sample=sample, loss=lambda o, y: o.mean(), steps=1, data_seeds=DATA,
                       progress=False)
    for bad, match in [({"every": 0}, "every must be an integer >= 1"), ({"patience": 0}, "patience must be"),
                       ({"bank": torch.zeros(3)}, "bank must be a pair"), ({"metric": 4}, "metric must be callable"),
                       ({"batch_size": -1}, "batch_size must be")]:
        args = {"every": 1, "bank": (torch.zeros(3, D), torch.zeros(3)), **bad}
        with pytest.raises(ValueError, match=match):
            Validation(**args)
    with pytest.raises(ValueError, match="valid choices: accuracy, cross_entropy"):
        evaluate_ensemble(kw["model"], kw["params"], {1: (torch.zeros(3, D), torch.zeros(3))}, metric="f1")
    with pytest.raises(ValueError, match="non-empty dict"):
        evaluate_ensemble(kw["model"], kw["params"], {})
    with pytest.raises(ValueError, match="must be a pair"):
        evaluate_ensemble(kw["model"], kw["params"], {1: torch.zeros(3)})
    with pytest.raises(ValueError, match="per-member bank has leading dim"):
        evaluate_ensemble(kw["model"], kw["params"], {1: (torch.zeros(3, 5, D), torch.zeros(3, 5))}, per_member=True)
    with pytest.raises(ValueError, match="variants must be an integer >= 1"):
        paired(kw["params"], DATA, variants=0)
    with pytest.raises(ValueError, match="data_seeds has 2 seeds"):
        paired(kw["params"], DATA[:2])
    with pytest.raises(ValueError, match="_variant"):
        VariantModel(MLP()).forward(kw["params"], torch.zeros(4, 2, D))
    with pytest.raises(ValueError, match="member index"):
        select_members(kw["params"], [0, 9])
    with pytest.raises(ValueError, match="seeds must be a non-empty sequence"):
        vmap_model(MLPModule).init([])
    with pytest.raises(ValueError, match="module_factory must be a callable"):
        vmap_model(3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():  # pragma: no cover - runs on GPU machines only
    model = MLP()
    params = model.init(SEEDS)
    cfg = OptimConfig("adam", lr=0.01, clip=1.0)
    r_cpu = train_ensemble(model, params, sample=sample, optim=cfg, steps=10, data_seeds=DATA, progress=False)
    r_gpu = train_ensemble(model, params, sample=sample, optim=cfg, steps=10, data_seeds=DATA, progress=False,
                           device="cuda")
    assert r_gpu.device.startswith("cuda")
    for k in params:
        torch.testing.assert_close(r_gpu.final_params[k], r_cpu.final_params[k], rtol=1e-9, atol=1e-10)


def test_progress_bar_runs(capsys):
    model = MLP()
    res = train_ensemble(model, model.init(SEEDS), sample=sample, steps=3, data_seeds=DATA, progress=True, desc="toy")
    assert res.steps_run == 3


def test_float32_members_stay_float32():
    model = MLP()
    params = model.init(SEEDS, dtype=torch.float32)

    def sample32(step, gens):
        x, y = sample(step, gens)
        return x.float(), y

    res = train_ensemble(model, params, sample=sample32, optim=OptimConfig("adamw", lr=0.01, weight_decay=0.1, clip=1.0),
                         steps=4, data_seeds=DATA, progress=False)
    assert all(v.dtype == torch.float32 for v in res.final_params.values())
    assert res.history["loss"].dtype == torch.float64 and torch.isfinite(res.history["loss"]).all()


class WithBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(D, 1)
        self.register_buffer("offset", torch.randn(1))

    def forward(self, x):
        return (self.lin(x) + self.offset).squeeze(-1)


def test_vmap_model_buffers_are_constants():
    vm = vmap_model(WithBuffer)
    p = vm.init(SEEDS, torch.float64)
    assert set(p) == {"lin.weight", "lin.bias", "_buffer.offset"} and p["_buffer.offset"].shape == (4, 1)
    res = train_ensemble(vm, p, sample=sample, optim=OptimConfig("sgd", lr=0.1), steps=3, data_seeds=DATA,
                         progress=False)
    assert torch.equal(res.final_params["_buffer.offset"], p["_buffer.offset"])
    assert not torch.equal(res.final_params["lin.weight"], p["lin.weight"])
    with pytest.raises(RuntimeError, match="call init"):
        vmap_model(WithBuffer).forward(p, torch.zeros(4, 2, D))

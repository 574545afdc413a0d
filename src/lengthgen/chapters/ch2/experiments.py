"""Chapter 2's plan (``reproduce ch2``, :func:`cells`): one cell per experiment of
:data:`EXPERIMENTS` (:func:`train_experiment`), how it trains (App. D.2–D.3: test banks
:func:`test_bank`, batches :func:`make_sampler`, one ensemble :func:`run`), the volume scans,
and the readers of the stored cells, checked by :func:`schema` (they feed :mod:`.measures`)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import partial

import torch

from lengthgen.chapters.ch2 import paper, volume as vo
from lengthgen.chapters.ch2.paper import test_lengths
from lengthgen.chapters.ch2.single_layer import FAMILIES, FIXED_TOKEN, NORM_MAPS, PAD, VARIANTS
from lengthgen.chapters.ch2.single_layer import SingleLayer, check_beta, encode
from lengthgen.chapters.ch2.volume import parity_sign_changes, score_coefficients
from lengthgen.config import ConfigError, check_choice, check_positive_int
from lengthgen.config import get_device, get_scale, nonempty
from lengthgen.engine import train as engine  # its trainers looked up per call (tests spy on them)
from lengthgen.engine.runs import Cell
from lengthgen.engine.train import OptimConfig, Validation, select_members
from lengthgen.nn.tasks import TASKS, first_bank, index_bank, label, majority_bank, random_strings
from lengthgen.store import has_stored, load_stored

H = paper.H


@dataclass(frozen=True)
class Experiment:
    """One (task, model family) ensemble: ``variants`` train together (pos, norm: paired members);
    repeated trainings share a batch ``stream``; ``norm_map``: A_norm's map (:func:`.F_norm`)."""

    task: str
    variants: tuple[str, ...]
    stream: int
    norm_map: str = "sqrt"


#: experiment name → definition. Order = priority when the budget is short (the run order).
EXPERIMENTS = {
    "index_posnorm": Experiment("index", ("pos", "norm"), 1),
    "first_posnorm": Experiment("first", ("pos", "norm"), 2),
    "majority_gen": Experiment("majority", ("gen",), 3),
    "majority_sin": Experiment("majority", ("sin",), 4),
    "first_gen": Experiment("first", ("gen",), 5),
    "index_gen": Experiment("index", ("gen",), 6),
    "first_sin": Experiment("first", ("sin",), 7),
    "index_sin": Experiment("index", ("sin",), 8),
    "parity_gen": Experiment("parity", ("gen",), 9),
    "index_posnorm_small": Experiment("index", ("pos", "norm"), 1),  # index_posnorm at N = 11, 21
    "index_posnorm_mid": Experiment("index", ("pos", "norm"), 1),  # and at N = 31, 41
    # Tables 2–3 at N = 11 … 41
    "majority_gen_more": Experiment("majority", ("gen",), 3),
    "first_posnorm_more": Experiment("first", ("pos", "norm"), 2),
    "majority_sin_more": Experiment("majority", ("sin",), 4),
    "majority_posnorm": Experiment("majority", ("pos", "norm"), 16),  # Table 1: A_pos / A_norm
    # ablation: index_posnorm's A_norm (same draws) with our earlier misread map F(v) = v/(1+‖v‖²)
    "index_norm_misread": Experiment("index", ("norm",), 1, norm_map="misread"),
}

#: the full-scale protocol (D.2–D.3); caps and N: paper.STORED_STEP_CAPS / STORED_NS
FULL = dict(seeds=paper.SEEDS, every=paper.VALIDATE_EVERY, val_size=paper.VAL_SIZE)
FULL |= dict(test_size=paper.TEST_SIZE, batch=paper.BATCH)
#: the smoke protocol: two seeds at N = 11, a few hundred updates, small banks
SMOKE = dict(seeds=paper.SEEDS[:2], Ns=(11,), steps=300, every=100)
SMOKE |= dict(val_size=200, test_size=200, batch=64)
#: the experiments a smoke run trains (the full run trains all of EXPERIMENTS)
SMOKE_EXPERIMENTS = ("index_posnorm", "majority_gen")

#: the stored volume scans (section "Claim 2" and "Monte Carlo volume fractions")
VOLUME_NS = (8, 16, 32, 64, 128, 256, 512)
VOLUME_COMBOS = tuple(paper.PAPER_WINDOW_SLOPES)
VOLUME_MC_NS = {
    "pos/index": (4, 8, 16, 32, 64),
    "norm/index": (4, 8, 16, 32, 64, 128),
    "pos/first": (4, 16, 64, 256),
}
VOLUME_MC_SAMPLES, VOLUME_HALF_WIDTH, VOLUME_ETA = 20_000, 0.1, 1.0


# -------------------------------------------------------------------------- one experiment (a cell)
def _distinct(name, values, check) -> list:
    out = [check(v) for v in nonempty(name, values)]
    if len(set(out)) != len(out):
        raise ConfigError(f"{name} must not repeat values, got {list(values)!r}")
    return out


def _check_ints(name, values, minimum=1) -> list[int]:
    return _distinct(name, values, partial(check_positive_int, name, minimum=minimum))


#: the run sizes a cell chooses, each with the check :func:`train_experiment` applies; the rest
#: of its configuration is the experiment and the protocol (:func:`experiment_config`)
_CHECKS = {
    "seeds": lambda v: _check_ints("seeds", v, minimum=0),
    "Ns": lambda v: _check_ints("Ns", v),
    "steps": partial(check_positive_int, "steps"),
    "every": partial(check_positive_int, "validation every"),
    **{k: partial(check_positive_int, k) for k in ("val_size", "test_size", "batch")},
}
SIZES = tuple(_CHECKS)
#: the settings :func:`train_experiment` takes (as :func:`experiment_config` gives them)
SETTINGS = ("experiment", "task", "variants", "stream", "norm_map", "fixed_token", *SIZES)
SETTINGS += ("h", "lr", "betas", "eps", "clip", "patience")


# -------------------------------------------------------------------------- banks and batches (D.3)
def fixed_token(task: str, fixed):
    """The index token of a task without a query (``None``: :data:`FIXED_TOKEN`); Index has none."""
    if task == "index":
        if fixed is not None:
            raise ConfigError(f"Index reads its query from the index token; got fixed = {fixed!r}")
        return None
    fixed = FIXED_TOKEN[task] if fixed is None else fixed
    if isinstance(fixed, bool) or fixed not in (0, 1):
        raise ConfigError(f"fixed index token of {task} must be 0 or 1, got {fixed!r}")
    return int(fixed)


def _labelled(task: str, bits, k, fixed, pad_to=None):
    x = encode(bits, k, pad_to=pad_to, fixed=1 if fixed is None else fixed)
    return x, (label(task, bits, k) if task == "index" else label(task, bits))


def test_bank(task: str, L: int, size: int = 1000, seed: int = 0, fixed: int | None = None):
    """The saved test bank ``(x, y)`` at length L (D.3), shared by all seeds and variants."""
    check_choice("task", task, TASKS)
    fixed = fixed_token(task, fixed)
    seed = paper.TEST_SEED_STRIDE * (1 + seed) + paper.TEST_SEED_LENGTH_STRIDE * L
    g = torch.Generator().manual_seed(seed + paper.TEST_SEED_TASK[task])
    if task == "index":
        return _labelled(task, *index_bank(L, size, g), fixed)
    bank = {"first": first_bank, "majority": majority_bank}.get(task)
    return _labelled(task, bank(L, size, g) if bank else random_strings(size, L, g), None, fixed)


def _validation_bank(task: str, Ns_members, size: int, fixed: int | None, seed: int = 0):
    """Validation banks at each member's N (D.2), padded: x [E, S, max N + 1], y [E, S]."""
    Lmax, cache = max(Ns_members), {}
    for N in sorted(set(Ns_members)):
        g = torch.Generator().manual_seed(paper.VALIDATION_SEED_STRIDE * (1 + seed) + N)
        bits = random_strings(size, N, g)
        k = torch.randint(1, N + 1, (size,), generator=g) if task == "index" else None
        cache[N] = _labelled(task, bits, k, fixed, pad_to=Lmax)
    return tuple(torch.stack([cache[N][i] for N in Ns_members]) for i in (0, 1))


def make_sampler(task: str, Ns_members, streams, batch: int, base_seed: int = 0, fixed=None):
    """``sample(step, generators, members)`` for :func:`train_ensemble`: one data length per update
    from a uniform ``u`` shared by all members (member e: ``L_e = ⌈u N_e⌉``, padded to the longest);
    members of one (N, seed) ``stream`` (paired A_pos / A_norm, repeats) read the same batches."""
    check_choice("task", task, TASKS)
    fixed = fixed_token(task, fixed)
    streams = torch.as_tensor(streams, dtype=torch.long)
    U = int(streams.max()) + 1
    Ns_stream = torch.zeros(U, dtype=torch.long)
    Ns_stream[streams] = torch.as_tensor(Ns_members, dtype=torch.long)

    def sample(step, generators, members=None):
        g = torch.Generator().manual_seed(base_seed * paper.BATCH_STREAM_STRIDE + step)
        u = torch.rand((), generator=g, dtype=torch.float64)
        if task == "majority":
            L = 2 * torch.floor(u * ((Ns_stream + 1) // 2)).long() + 1
        else:
            L = torch.floor(u * Ns_stream).long() + 1
        Lmax = int(L.max())
        bits = torch.randint(0, 2, (U, batch, Lmax), generator=g, dtype=torch.float64)
        k = torch.floor(torch.rand(U, batch, generator=g, dtype=torch.float64) * L[:, None]) + 1
        valid = torch.arange(1, Lmax + 1)[None, :] <= L[:, None]  # [U, Lmax]
        data = bits.masked_fill(~valid[:, None, :], PAD)
        kk = k if task == "index" else torch.full_like(k, fixed)
        if task == "index":
            y = torch.gather(bits, -1, (k.long() - 1).unsqueeze(-1)).squeeze(-1).long()
        else:
            ones, half = (bits * valid[:, None, :]).sum(-1), (L[:, None] + 1) // 2
            y = {"first": bits[..., 0], "majority": ones >= half, "parity": ones % 2}[task].long()
        x = torch.cat([data, kk.unsqueeze(-1)], -1)
        sel = streams if members is None else streams[members]
        return x[sel], y[sel]

    return sample


# --------------------------------------------------------------------------- one experiment
def _model(c: dict, members: list, idx) -> SingleLayer:
    """The ensemble model of the members ``idx`` (one β per member unless all use log n)."""
    vs, Ns, betas = ([members[i][j] for i in idx] for j in (0, 1, 3))
    kw = dict(norm_map=c["norm_map"] or "sqrt", beta="log" if c["att_betas"] == ["log"] else betas)
    return SingleLayer(vs[0], c["h"], max_lengths=Ns, variants=vs, **kw)


def _train(c: dict, members: list, dev, progress: bool):
    """Train every member (variant, N, seed, β) as one ensemble: the engine's result."""
    task, Nm = c["task"], [m[1] for m in members]
    stream_ids = {}
    streams = [stream_ids.setdefault((N, s), len(stream_ids)) for (_, N, s, _) in members]
    model = _model(c, members, range(len(members)))
    params = model.init([m[2] for m in members], torch.float64, dev)
    bank = _validation_bank(task, Nm, c["val_size"], c["fixed"])
    return engine.train_ensemble(
        model,
        params,
        sample=make_sampler(task, Nm, streams, c["batch"], base_seed=c["stream"], fixed=c["fixed"]),
        optim=OptimConfig("adam", lr=c["lr"], betas=c["betas"], eps=c["eps"], clip=c["clip"]),
        steps=c["steps"],
        data_seeds=[s + paper.DATA_SEED_N_STRIDE * N for (_, N, s, _) in members],
        validation=Validation(c["every"], bank, c["patience"], per_member=True, batch_size=250),
        progress=progress,
        record_every=max(1, c["every"] // 5),
        device=dev.type,
        desc=c["experiment"],
    )


def _test(c: dict, members: list, params: dict, device: str) -> dict:
    """Each member's accuracy on the saved test banks at its N's six test lengths."""
    tests = {}
    for N in sorted({m[1] for m in members}):
        idx = [i for i, m in enumerate(members) if m[1] == N]
        Ls = test_lengths(N)
        banks = {L: test_bank(c["task"], L, c["test_size"], fixed=c["fixed"]) for L in Ls}
        bs = max(10, min(1000, 4_000_000 // (len(idx) * (10 * N + 2))))
        sub, model = select_members(params, idx), _model(c, members, idx)
        acc = engine.evaluate_ensemble(model, sub, banks, batch_size=bs, device=device)
        for j, i in enumerate(idx):
            tests[i] = {str(L): float(acc[L][j]) for L in banks}
    return tests


def _row(c: dict, res, i: int, member: tuple, test: dict, coef) -> dict:
    """Member ``i``'s stored row: its selection, its tests and, by model, what the chapter
    analyses (the drift coefficients; Parity's sign changes and kinks, App. A.4)."""
    v, N, s, b = member
    row = dict(variant=v, N=N, seed=s, best_step=int(res.best_step[i]))
    row |= dict(stop_step=int(res.stop_step[i]), best_val_acc=float(res.best_acc[i]))
    row |= dict(best_val_loss=float(res.best_loss[i]), test=test)
    if c["att_betas"] != ["log"]:
        row["beta"] = b
    if coef is not None:
        row.update({k: coef[k][i] for k in coef})
    if c["task"] == "parity" and v == "gen":
        point = {k: t[i] for k, t in res.params.items() if not k.startswith("_")}
        sc = parity_sign_changes(point, N, b)
        row |= {k: int(sc[k][0]) for k in ("sign_changes", "kinks")}
    return row


def run(c: dict, dev, progress: bool, keep_params: bool) -> dict:
    """Train and test the checked configuration ``c`` of one experiment (every (variant, N,
    seed, β) member in one ensemble on device ``dev``): the stored cell's value."""
    grid = itertools.product(c["att_betas"], c["variants"], c["Ns"], c["seeds"])
    members = [(v, N, s, b) for b, v, N, s in grid]
    t0 = time.perf_counter()
    res = _train(c, members, dev, progress)
    train_s = time.perf_counter() - t0
    tests = _test(c, members, res.params, dev.type)
    coef = None
    if FAMILIES[members[0][0]] == "positional":  # the drift coefficients χ, ℓ, χ̂, ℓ̂ (D.4)
        c9 = score_coefficients(res.params)
        coef = {k: c9[k].tolist() for k in ("chi", "ell", "chi_hat", "ell_hat")}
    rows = [_row(c, res, i, m, tests[i], coef) for i, m in enumerate(members)]
    out = {k: c[k] for k in ("experiment", "task")}
    out |= {"variants": list(c["variants"]), "steps_cap": c["steps"]}
    out |= {k: c[k] for k in ("every", "batch", "val_size", "test_size")}
    out |= {"train_wall_s": train_s, "steps_run": res.steps_run, "members": rows}
    return out | ({"params": res.params} if keep_params else {})


def _check_variants(variants, norm_map) -> list[str]:
    variants = [check_choice("variant", v, VARIANTS) for v in nonempty("variants", variants)]
    if "norm" in variants:
        check_choice("norm map", norm_map, NORM_MAPS)
    elif norm_map is not None:
        raise ConfigError(f"norm_map applies to A_norm only; variants {variants} need None")
    return variants


def train_experiment(*, device="cpu", progress=True, keep_params=False, beta="log", **settings):
    """Train and test one experiment (``seeds`` × ``Ns`` × ``variants``, one ensemble) by App.
    D.2–D.3 (chapter 2, "Claims 3–4: training"): a JSON-ready dict (with ``"params"`` if
    ``keep_params``). ``settings``: :data:`SETTINGS`; ``beta``: log, one or both (ch. 5)."""
    if sorted(settings) != sorted(SETTINGS):
        raise ConfigError(f"the settings are {', '.join(SETTINGS)}; got {', '.join(settings)}")
    c = settings | {k: check(settings[k]) for k, check in _CHECKS.items()}
    c["variants"] = _check_variants(settings["variants"], settings["norm_map"])
    check_choice("task", c["task"], TASKS)  # before fixed_token reads it
    check_positive_int("batch stream", c["stream"], minimum=0)
    att_betas = _distinct("beta", [beta] if isinstance(beta, str) else beta, check_beta)
    c |= {"fixed": fixed_token(c["task"], settings["fixed_token"]), "att_betas": att_betas}
    # "auto" resolved here; the trainer gets "cpu" or "cuda"
    return run(c, get_device(device), progress, keep_params)


def experiment_config(name: str, **sizes) -> dict:
    """The keyword arguments of :func:`train_experiment` for ``name`` at the run ``sizes``."""
    if sorted(sizes) != sorted(SIZES):
        raise ConfigError(f"the run sizes are {', '.join(SIZES)}; got {', '.join(sizes)}")
    check_choice("experiment", name, tuple(EXPERIMENTS))
    ex = EXPERIMENTS[name]
    cfg = dict(experiment=name, task=ex.task, variants=list(ex.variants), stream=ex.stream)
    cfg["norm_map"] = ex.norm_map if "norm" in ex.variants else None
    cfg["fixed_token"] = None if ex.task == "index" else FIXED_TOKEN[ex.task]
    cfg |= {k: list(sizes[k]) for k in SIZES[:2]} | {k: sizes[k] for k in SIZES[2:]}
    cfg |= dict(h=paper.H, lr=paper.LR, betas=list(paper.BETAS), eps=paper.EPS, clip=paper.CLIP)
    return cfg | {"patience": paper.PATIENCE}


def run_experiment(name: str, *, device="cpu", progress=True, keep_params=False, **sizes) -> dict:
    """What a cell does, for the notebook's live runs: experiment ``name`` at the run ``sizes``."""
    cfg = experiment_config(name, **sizes)
    return train_experiment(**cfg, device=device, progress=progress, keep_params=keep_params)


# --------------------------------------------------------------------------- volume scans (a cell)
def volume_scans(
    *,
    ns=VOLUME_NS,
    combos=VOLUME_COMBOS,
    mc_ns=None,
    mc_samples: int = VOLUME_MC_SAMPLES,
    h: int = H,
    eta: float = VOLUME_ETA,
    half_width: float = VOLUME_HALF_WIDTH,
    norm_map: str = "sqrt",
    beta: str = "log",
) -> dict:
    """Admissible widths around the η = ``eta`` centers at lengths ``ns`` (chapter 2, "Claim 2")
    and Monte Carlo exact fractions in a box of half-width ``half_width``; ``norm_map`` (``sqrt``
    only) keys the cell so a scan with another map is never reused; ``beta``: chapter 5's β_n."""
    ns, beta = _check_ints("ns", ns), check_beta(beta)
    check_choice("the volume scans' A_norm map", norm_map, ("sqrt",))
    out = {"widths": {}, "mc": {}}
    for v, task, coord in combos:
        c = vo.center(v, task, h, eta=eta)
        d = vo.direction(v, coord, c)
        res = [vo.admissible_width(c, d, v, task, n, beta=beta) for n in ns]
        # width: both sides, a side still exact at t_max counted as t_max; finite_width: the sides
        # that close before t_max (NaN if none does); capped: how many sides reached t_max
        widths = {f: [r[f] for r in res] for f in ("width", "finite_width")}
        capped = [int(r["plus_capped"]) + int(r["minus_capped"]) for r in res]
        out["widths"][f"{v}/{task}/{coord}"] = {"n": list(ns), **widths, "capped": capped}
    kw = dict(coords=("a", "b", "r", "s"), half_width=half_width, eta=eta, h=h, beta=beta)
    for key, nlist in (VOLUME_MC_NS if mc_ns is None else mc_ns).items():
        v, task = key.split("/")
        more = 4 if (v, task) == ("pos", "index") else 1  # 4× the samples from n = 32 on
        size = lambda n: mc_samples * (more if n >= 32 else 1)
        out["mc"][key] = [vo.mc_fraction(v, task, n, samples=size(n), seed=n, **kw) for n in nlist]
    return out


# --------------------------------------------------------------------------- the plan
def cells(scale: str) -> list[Cell]:
    """Chapter 2's plan at ``scale``: the :data:`SMOKE_EXPERIMENTS` at :data:`SMOKE` sizes, or
    every experiment with its stored cap and N, then ``volume_scans``."""
    smoke, out = get_scale(scale) == "smoke", []
    for name in SMOKE_EXPERIMENTS if smoke else EXPERIMENTS:
        stored = dict(Ns=paper.STORED_NS[name], steps=paper.STORED_STEP_CAPS[name])
        sizes = SMOKE if smoke else FULL | stored
        cfg = experiment_config(name, **sizes)
        out.append(Cell(name, train_experiment, cfg, seeds=tuple(sizes["seeds"])))
    if smoke:
        return out
    kw = dict(ns=list(VOLUME_NS), combos=[list(c) for c in VOLUME_COMBOS])
    kw |= dict(mc_ns={k: list(v) for k, v in VOLUME_MC_NS.items()}, mc_samples=VOLUME_MC_SAMPLES)
    kw |= dict(h=H, eta=VOLUME_ETA, half_width=VOLUME_HALF_WIDTH, norm_map="sqrt")
    return [*out, Cell("volume_scans", volume_scans, kw)]


# --------------------------------------------------------------------------- stored results
#: What a stored experiment holds (:func:`lengthgen.store.validate`): its summary fields, one
#: member per declared seed × N × variant, six test lengths per member, accuracies in [0, 1].
EXPERIMENT_SCHEMA = (
    "experiment task variants steps_cap steps_run every batch members.*.(variant|N|seed|best_step"
    "|stop_step|best_val_acc|best_val_loss|test) members.*.test.*:p members.*.best_val_acc:p"
    " members=seeds*Ns*variants members.*.test=6"
)
#: What the stored volume scans hold: every planned width curve and Monte Carlo row.
VOLUME_SCHEMA = (
    "widths.*.(n|width) mc.*.*.(n|samples|exact|undecided) mc.*.*.(fraction|lo|hi):p"
    " widths=combos widths.*.width=ns mc=mc_ns"
)


def schema(name: str, scale: str = "full") -> str | None:
    """What the stored cell ``name`` holds (``None``: no such cell)."""
    return EXPERIMENT_SCHEMA if name in EXPERIMENTS else {"volume_scans": VOLUME_SCHEMA}.get(name)


def load_experiment(name: str, folder=None, scale: str = "full") -> dict:
    """The stored cell ``{"provenance", "data", "path"}`` of ``name``, checked by the schema."""
    check_choice("experiment", name, tuple(EXPERIMENTS))
    return load_stored("ch2", name, folder=folder, scale=scale, schema=EXPERIMENT_SCHEMA)


def load_runs(folder=None, scale: str = "full") -> dict:
    """The stored experiments ``{name: (result, provenance)}``, in :data:`EXPERIMENTS` order."""
    got = [n for n in EXPERIMENTS if has_stored("ch2", n, folder=folder)]
    objs = {n: load_experiment(n, folder, scale) for n in got}
    return {n: (o["data"], o["provenance"]) for n, o in objs.items()}


def load_volume_scans(folder=None, scale: str = "full") -> dict | None:
    """The stored volume scans (as :func:`load_experiment`), or ``None`` when none is stored."""
    if not has_stored("ch2", "volume_scans", folder=folder):
        return None
    return load_stored("ch2", "volume_scans", folder=folder, scale=scale, schema=VOLUME_SCHEMA)

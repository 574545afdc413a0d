#!/usr/bin/env bash
# Chapter 4 at the paper's modulus on a GPU, from a bare machine (issue 18):
#
#   bash scripts/gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]
#
# 1. checks that python3 has torch (with CUDA when DEVICE is cuda) and makes the package importable
#    (pip install -e . without dependencies, falling back to PYTHONPATH=src: the machine may
#    have no network; on one with network, `pip install -r requirements-gpu.txt -e .` first);
# 2. runs the paper-scale code at a tiny size on DEVICE (a fast failure costs no budget);
# 3. runs `python -m lengthgen reproduce ch4 --scale paper --device DEVICE --out OUT_DIR
#    --budget-minutes BUDGET_MINUTES`: it stops cleanly before the budget ends, storing a partial
#    result and a checkpoint that a re-run resumes;
# 4. copies the stored cells to COPY_TO (if given), also when the run failed.
# Set LENGTHGEN_SOURCE_COMMIT to the commit the tree was copied from when it has no .git.
set -uo pipefail
OUT_DIR=${1:?usage: gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]}
BUDGET=${2:?usage: gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]}
DEVICE=${3:-cuda}
COPY_TO=${4:-}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
copy_back() { if [ -n "$COPY_TO" ] && [ -d "$OUT_DIR/cells" ]; then mkdir -p "$COPY_TO" && cp "$OUT_DIR"/cells/*.json "$COPY_TO"/ 2>/dev/null; fi; }
trap copy_back EXIT
"$PY" - "$DEVICE" <<'PYEOF' || exit 3
import sys, torch
dev = sys.argv[1]
print("torch", torch.__version__, "cuda available:", torch.cuda.is_available(), flush=True)
if dev == "cuda":
    assert torch.cuda.is_available(), "device cuda requested but torch sees no GPU"
    print("gpu:", torch.cuda.get_device_name(0), flush=True)
PYEOF
if ! "$PY" -c "import lengthgen" 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-build-isolation -e . 2>/dev/null || export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" - "$DEVICE" <<'PYEOF' || exit 4
import sys, time
from lengthgen.chapters.ch4.paper_scale import train_paper_scale
t = time.perf_counter()
r = train_paper_scale(p=5, width=16, budgets=(60, 200), wds=(0.1,), seeds=(1337,),
                      variants=(("sine", False), ("sine", True), ("relu", False)), lr=3e-2, steps=40,
                      eval_every=20, n_eval=40, eval_lengths=(2, 14), batch_size=16, device=sys.argv[1])
print(f"tiny run on {sys.argv[1]}: {r['progress']['done']} updates in {time.perf_counter() - t:.1f} s", flush=True)
PYEOF
"$PY" -m lengthgen reproduce ch4 --scale paper --device "$DEVICE" --out "$OUT_DIR" --budget-minutes "$BUDGET"

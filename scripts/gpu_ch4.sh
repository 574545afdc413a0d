#!/usr/bin/env bash
# Chapter 4 at the paper's modulus on a GPU, from a bare machine (issues 18, 29):
#
#   bash scripts/gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]
#
# 1. checks that python3 has torch (with CUDA when DEVICE is cuda) and makes the package importable
#    (pip install -e . without dependencies, falling back to PYTHONPATH=src: the machine may
#    have no network; on one with network, `pip install -r requirements-gpu.txt -e .` first);
# 2. runs the paper-scale code at a tiny size on DEVICE (a fast failure costs no budget);
# 3. resumes from stored checkpoints: every results/ch4/checkpoints/<cell>/ (parts + manifest, the
#    checkpoint a previous device session brought back) is copied to OUT_DIR/work/<cell>/checkpoint
#    unless that workdir already holds one;
# 4. runs `python -m lengthgen reproduce ch4 --scale paper --device DEVICE --out OUT_DIR
#    --budget-minutes BUDGET_MINUTES` with LENGTHGEN_CH4_PARTS=1 (checkpoint as parts of <= 15 MB
#    with a manifest): it stops cleanly before the budget ends, storing a partial result and a
#    checkpoint that a re-run resumes;
# 5. copies to COPY_TO (if given), also when the run failed: the stored cells, and each cell's
#    checkpoint parts and progress.json as COPY_TO/checkpoints/<cell>/
#    (then, on the machine that keeps the repository:
#    `python -m lengthgen.chapters.ch4.paper_scale store-checkpoint COPY_TO/checkpoints/<cell> <cell>`
#    keeps it under results/ch4/checkpoints/, only the latest).
# Set LENGTHGEN_SOURCE_COMMIT to the commit the tree was copied from when it has no .git.
set -uo pipefail
OUT_DIR=${1:?usage: gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]}
BUDGET=${2:?usage: gpu_ch4.sh OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]}
DEVICE=${3:-cuda}
COPY_TO=${4:-}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
copy_back() {
  [ -n "$COPY_TO" ] || return 0
  mkdir -p "$COPY_TO"
  if [ -d "$OUT_DIR/cells" ]; then cp "$OUT_DIR"/cells/*.json "$COPY_TO"/ 2>/dev/null; fi
  for ck in "$OUT_DIR"/work/*/checkpoint; do
    [ -f "$ck/manifest.json" ] || continue
    cell=$(basename "$(dirname "$ck")")
    mkdir -p "$COPY_TO/checkpoints/$cell"
    cp "$ck"/manifest.json "$ck"/part-*.bin "$COPY_TO/checkpoints/$cell"/ 2>/dev/null
    cp "$(dirname "$ck")/progress.json" "$COPY_TO/checkpoints/$cell"/ 2>/dev/null
  done
  return 0
}
trap copy_back EXIT
# shellcheck source=scripts/gpu_common.sh
. "$(dirname "$0")/gpu_common.sh"
gpu_torch_check "$PY" "$DEVICE" || exit 3
gpu_importable "$PY" pip
"$PY" - "$DEVICE" <<'PYEOF' || exit 4
import sys, time
from lengthgen.chapters.ch4.paper_scale import train_paper_scale
t = time.perf_counter()
r = train_paper_scale(p=5, width=16, budgets=(60, 200), wds=(0.1,), seeds=(1337,),
                      variants=(("sine", False), ("sine", True), ("relu", False)), lr=3e-2, steps=40,
                      eval_every=20, n_eval=40, eval_lengths=(2, 14), batch_size=16, device=sys.argv[1])
print(f"tiny run on {sys.argv[1]}: {r['progress']['done']} updates in {time.perf_counter() - t:.1f} s", flush=True)
PYEOF
mkdir -p "$OUT_DIR"
for stored in results/ch4/checkpoints/*/manifest.json; do
  [ -f "$stored" ] || continue
  src=$(dirname "$stored")
  cell=$(basename "$src")
  dest="$OUT_DIR/work/$cell/checkpoint"
  if [ -f "$dest/manifest.json" ] || [ -f "$OUT_DIR/work/$cell/checkpoint.pt" ]; then
    echo "resume: $OUT_DIR/work/$cell already holds a checkpoint; not copying $src"
  else
    mkdir -p "$dest" && cp "$src"/manifest.json "$src"/part-*.bin "$dest"/ && echo "resume: $cell from $src"
  fi
done
echo "paper-scale run: LENGTHGEN_CH4_PARTS=1"
LENGTHGEN_CH4_PARTS=1 \
  "$PY" -m lengthgen reproduce ch4 --scale paper --device "$DEVICE" --out "$OUT_DIR" --budget-minutes "$BUDGET"

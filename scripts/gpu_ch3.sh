#!/usr/bin/env bash
# Chapter 3's trained study (150 groups) on a GPU, from a bare machine (issue 28):
#
#   bash scripts/gpu_ch3.sh [--dry-run] OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]
#
# The study runs as 15 study-sized ensembles (every seed x task of a tier and encoding, main and pos
# groups together: 45 members each; lengthgen.chapters.ch3.ensembles), in float32 with TF32 OFF
# (torch.backends.cuda.matmul.allow_tf32 = cudnn.allow_tf32 = False, float32 matmul precision
# "highest": the paper's precision), recorded in every cell's provenance and in OUT_DIR/run.json.
#
# 1. checks DEVICE (cpu, cuda or auto; else exit 2) and that python3 has torch (with CUDA when DEVICE
#    is cuda; else exit 4) and makes the package importable without network (PYTHONPATH=src when
#    `import lengthgen` fails);
# 2. a tiny run on DEVICE first (seconds: the study-sized ensemble against the per-group path on the
#    same device, and against the CPU) -> OUT_DIR/tiny.json; a failure stops here (exit 3);
# 3. a profile of one ensemble per tier (time per update) and the estimate of the whole study
#    -> OUT_DIR/profile.json;
# 4. the full study under the budget: an ensemble starts only if its estimate ends 15 s before
#    BUDGET_MINUTES (counted from the start of step 2); each finished ensemble's cells are written
#    atomically to OUT_DIR/cells/ (one cell per group, the names and schema of results/ch3/cells);
#    a re-run resumes, skipping stored groups;
# 5. copies the cells (and tiny/profile/run.json) to COPY_TO (if given), also when the run failed,
#    leaving out any file over 15 MB (named on stderr).
#
# The default OUT_DIR of a device run must not be results/ch3 (the stored CPU study is refused):
# use e.g. results/ch3/device or $OUT/ch3. --dry-run: the whole script on the CPU in seconds, at the
# tiny DRY_RUN study (smoke scale) -- what tests/test_ch3_device.py runs.
# Set LENGTHGEN_SOURCE_COMMIT to the commit the tree was copied from when it has no .git;
# EXTRA_ARGS (e.g. "--allow-dirty") is passed to the study command.
set -uo pipefail
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
USAGE="usage: gpu_ch3.sh [--dry-run] OUT_DIR BUDGET_MINUTES [DEVICE] [COPY_TO]"
OUT_DIR=${1:?$USAGE}
BUDGET=${2:?$USAGE}
if [ "$DRY" = 1 ]; then DEVICE=${3:-cpu}; else DEVICE=${3:-cuda}; fi
COPY_TO=${4:-}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
LIMIT=$((15 * 1024 * 1024))

copy_back() {
  [ -n "$COPY_TO" ] || return 0
  mkdir -p "$COPY_TO/cells" || return 0
  local f size
  for f in "$OUT_DIR"/cells/*.json "$OUT_DIR"/tiny.json "$OUT_DIR"/profile.json "$OUT_DIR"/run.json; do
    [ -f "$f" ] || continue
    size=$(stat -c %s "$f" 2>/dev/null || wc -c <"$f")
    if [ "$size" -gt "$LIMIT" ]; then
      echo "not copied (over 15 MB): $f ($size bytes)" >&2
      continue
    fi
    case "$f" in
      "$OUT_DIR"/cells/*) cp "$f" "$COPY_TO/cells/" ;;
      *) cp "$f" "$COPY_TO/" ;;
    esac
  done
  echo "copied $(ls "$COPY_TO/cells" | wc -l) cells to $COPY_TO/cells"
}
trap copy_back EXIT

case "$DEVICE" in
  cpu | cuda | auto) ;;
  *) echo "error: DEVICE must be cpu, cuda or auto, got '$DEVICE'" >&2; exit 2 ;;
esac
# shellcheck source=scripts/gpu_common.sh
. "$(dirname "$0")/gpu_common.sh"
gpu_torch_check "$PY" "$DEVICE" || exit 4
gpu_importable "$PY"

if [ "$DRY" = 1 ]; then SCALE=(--scale smoke --dry-run); else SCALE=(--scale full); fi
# exit status: 0 done or stopped cleanly at the budget, 2 bad arguments, 3 failed tiny check, 1 a crash
# shellcheck disable=SC2086
"$PY" -m lengthgen.chapters.ch3.ensembles "${SCALE[@]}" --device "$DEVICE" --out "$OUT_DIR" \
  --budget-minutes "$BUDGET" ${EXTRA_ARGS:-}

# Shared steps of the device scripts (scripts/gpu_ch3.sh, scripts/gpu_ch4.sh); sourced, not run.

# gpu_torch_check PY DEVICE: print torch's version and whether it sees CUDA; fail (status 1) when
# DEVICE is cuda and torch sees no GPU.
gpu_torch_check() {
  "$1" - "$2" <<'PYEOF'
import sys, torch
dev = sys.argv[1]
print("torch", torch.__version__, "cuda available:", torch.cuda.is_available(), flush=True)
if dev == "cuda":
    assert torch.cuda.is_available(), "device cuda requested but torch sees no GPU"
    print("gpu:", torch.cuda.get_device_name(0), flush=True)
PYEOF
}

# gpu_importable PY [pip]: make the package importable if it is not: with "pip", first by
# `pip install -e .` without dependencies (the machine may have no network), else (and as the
# fallback) by putting src/ on PYTHONPATH.
gpu_importable() {
  "$1" -c "import lengthgen" 2>/dev/null && return 0
  if [ "${2:-}" = pip ] && "$1" -m pip install -q --no-deps --no-build-isolation -e . 2>/dev/null; then
    return 0
  fi
  export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
}

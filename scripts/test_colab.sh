#!/usr/bin/env bash
# `make test-colab`: every notebook as a Colab user runs it, on Colab's versions
# (ci/colab-versions.txt: Python 3.13, torch 2.11 from PyPI, whose CUDA build runs on the CPU,
# ipywidgets 7.7.1, matplotlib 3.10, ...) and under the kernel dispatch of an older CPU (torch's
# generic kernels, MKL limited to SSE4.2), so that this leg is also CI's second machine.
#   1. a venv with exactly those versions, which are pyproject.toml's lower bounds, and the other
#      dependencies at their lowest allowed versions (tqdm), so that this leg is also
#      `make test-min` (cached under ~/.cache/lengthgen, keyed by this script and both files);
#   2. a copy of the working tree as Colab's setup cell finds its clone; the package is not
#      installed, each notebook runs from its own setup cell with a stand-in google.colab
#      (scripts/colab_check.py: fails on any error output, a traceback a display formatter
#      printed, an explorer without a widget view, a changed nbval-checked output);
#   3. the explorers' unit tests on ipywidgets 7, and the ledger check, in that venv.
#   COLAB_PYTHON (default: pyenv's 3.13.0), COLAB_VENV, JOBS (notebooks at once, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSIONS=ci/colab-versions.txt
PY=${COLAB_PYTHON:-$HOME/.pyenv/versions/3.13.0/bin/python}
KEY=$(cat "$VERSIONS" pyproject.toml "$0" | sha256sum | cut -c1-12)
VENV=${COLAB_VENV:-$HOME/.cache/lengthgen/colab-$KEY}
export ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2
t0=$(date +%s)
if [ ! -f "$VENV/.installed" ]; then
    test -x "$PY" || { echo "test-colab: no Python 3.13 at $PY (set COLAB_PYTHON)"; exit 1; }
    rm -rf "$VENV" && mkdir -p "$(dirname "$VENV")"
    "$PY" -m venv "$VENV"
    grep -v '^#' "$VERSIONS" > "$VENV/colab-versions.txt"
    # Colab's versions exactly (uv: about a minute for the 5 GB, where pip takes about ten); the
    # tools that execute and test the notebooks must not move them
    "$VENV/bin/python" -m pip install -q uv
    UV=("$VENV/bin/uv" pip install -q --python "$VENV/bin/python")
    "${UV[@]}" -r "$VENV/colab-versions.txt"
    # the package's dependencies that Colab's list does not pin, at their lowest allowed versions
    "${UV[@]}" -c "$VENV/colab-versions.txt" --resolution lowest-direct -r pyproject.toml
    "$VENV/bin/uv" pip freeze --python "$VENV/bin/python" > "$VENV/installed.txt"
    "${UV[@]}" -c "$VENV/installed.txt" pyyaml pytest nbclient nbformat
    touch "$VENV/.installed"
fi
"$VENV/bin/python" -m pip list 2>/dev/null | grep -iE "^(torch|numpy|scipy|matplotlib|pandas|ipywidgets|ipython|ipykernel|tqdm) " \
    | tr -s ' ' | sed 's/^/  /'
"$VENV/bin/python" - "$VENV/colab-versions.txt" <<'PY'
import re, sys, tomllib
from importlib.metadata import version
want = dict(l.strip().split("==") for l in open(sys.argv[1]) if "==" in l)
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
want |= dict(re.match(r"([a-z-]+)>=([0-9.]+)", d).groups() for d in deps)  # the lower bounds
key = lambda v: [int(x) for x in v.split("+")[0].split(".")] + [0] * (3 - v.count("."))
bad = {k: version(k) for k, v in want.items() if key(version(k)) != key(v)}
sys.exit(f"test-colab: not Colab's versions and the lower bounds: {bad}" if bad else 0)
PY
echo "test-colab: venv ready ($(( $(date +%s) - t0 )) s)"
CLONE=$(mktemp -d)/lengthgen
trap 'rm -rf "$(dirname "$CLONE")"' EXIT
mkdir -p "$CLONE"
git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null \
    | tar -xf - -C "$CLONE"   # a deleted, still tracked file is left out
nice "$VENV/bin/python" scripts/colab_check.py --clone "$CLONE" --jobs "${JOBS:-2}" \
    $(cd "$CLONE" && ls notebooks/*.ipynb)
diff -rq results "$CLONE/results" || { echo "test-colab: a smoke run changed results/"; exit 1; }
PYTHONPATH=$CLONE/src "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_widgets.py
PYTHONPATH=$CLONE/src "$VENV/bin/python" -m lengthgen claims --check
echo "test-colab: passed ($(( $(date +%s) - t0 )) s)"

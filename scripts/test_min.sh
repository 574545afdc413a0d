#!/usr/bin/env bash
# `make test-min`: what users (a fresh pip install) may get. Installs, in .venv-min, the oldest
# versions of the package's dependencies that pyproject.toml allows (uv --resolution lowest-direct),
# with torch held at the local CPU wheel 2.13 (the only torch that installs here without several GB
# of CUDA wheels; torch's bound, 2.11, is tested by `make test-colab`), then runs, two at a time,
# the unit tests with two intra-op threads (CI's one threads pass: thread-dependent rounding) and
# every notebook under nbval.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV_MIN:-.venv-min}
PYTHON=${PYTHON:-python3}
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip uv
"$VENV/bin/python" -m pip install -q torch==2.13.0                 # the local CPU wheel
# the package at its lowest allowed dependencies (torch already satisfied, so never a CUDA build)
"$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --resolution lowest-direct \
    -e . "torch==2.13.0"
# the test tools (not the package's dependencies) at their current releases, without moving those
"$VENV/bin/uv" pip freeze --python "$VENV/bin/python" | grep -v "^-e" > "$VENV/constraints.txt"
"$VENV/bin/uv" pip install -q --python "$VENV/bin/python" -c "$VENV/constraints.txt" \
    pytest pytest-xdist nbval nbclient nbformat ipykernel "dask[distributed]"
echo "test-min: installed"
"$VENV/bin/uv" pip list --python "$VENV/bin/python" 2>/dev/null \
    | grep -iE "^(torch|numpy|scipy|matplotlib|ipywidgets|tqdm|pandas) " | tr -s ' ' | sed 's/^/  /'
t0=$(date +%s)
# one pytest session, two workers: the unit tests with two intra-op threads and every notebook
LENGTHGEN_TEST_THREADS=2 "$VENV/bin/python" -m pytest tests notebooks/*.ipynb \
    -m "not html and not slow" -n 2 --dist loadfile -q -p no:cacheprovider \
    --ignore=tests/test_build_book.py --ignore=tests/test_notebooks_meta.py \
    --nbval-lax --nbval-sanitize-with notebooks/nbval_sanitize.cfg
echo "test-min: unit tests and notebooks $(( $(date +%s) - t0 )) s"
git diff --exit-code -- results    # smoke runs write ledgers: they must not change

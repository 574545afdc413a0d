# The two commands of the README: `make book` and `make test`. Both set up .venv on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# APT=0: never install system packages (make test installs Debian's chromium for the HTML checks)
APT    ?= 1
NBVAL  := --nbval-lax -n 2 --dist loadfile --nbval-sanitize-with notebooks/nbval_sanitize.cfg

.PHONY: book test unit nbval execute html executed ledger pages sync-check format-check clean test-min \
	test-colab lock lock-drift

# installed with uv (the lock in about 15 s, where pip takes about 4 minutes); torch from the local
# CPU wheel under WHEELS where there is one (uv does not look on this disk by itself)
WHEELS ?= /opt/wheels
UV     = $(BIN)/uv pip install -q --python $(BIN)/python
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv
	$(UV) -r requirements.lock $(if $(wildcard $(WHEELS)),--find-links $(WHEELS))
	$(UV) --no-deps -e .
	touch $(STAMP)

## make book: execute every chapter at smoke scale (cached; two at a time, scripts/execute_parallel.py)
## and build the HTML book into _build/html;
## fails naming the chapter and cell if any chapter's execution fails, and generates the ledger pages
## (scorecard, results box, cost) from the ledgers this build's executions wrote (scripts/build_book.py)
book: $(STAMP)
	$(BIN)/python scripts/execute_parallel.py --jobs 2
	$(BIN)/python scripts/build_book.py

## the scorecard's tables and the intro's results box, generated from results/claims/
pages: $(STAMP)
	$(BIN)/python scripts/build_pages.py

## make test: unit tests, the strict book build (which executes every notebook once), the executed
## notebooks checked as nbval would (errors, nbval-checked outputs) and for the explorers' widget
## views, the HTML checks and the ledger check; it leaves `git status` clean (ledger values are
## rounded, smoke runs write under _build). `make nbval` runs the notebooks under nbval alone.
test: unit format-check html executed ledger

## the unit tests, two at a time, each with two intra-op threads (CI's one threads pass: the
## book's default is one thread, so thread-dependent rounding is exercised here). Idle OpenMP
## threads sleep instead of spinning: with four threads on two cores, spinning made a sample of
## the tests 2.3 times slower (103 s against 45 s at one thread; 53 s sleeping).
unit: $(STAMP)
	OMP_WAIT_POLICY=PASSIVE LENGTHGEN_TEST_THREADS=2 $(BIN)/python -m pytest tests -m "not html" -n 2 --durations=10

nbval: $(STAMP)
	$(BIN)/python -m pytest notebooks/*.ipynb $(NBVAL)

## every chapter executed into the book's cache, two at a time (a chapter already there is skipped)
execute: $(STAMP)
	$(BIN)/python scripts/execute_parallel.py --jobs 2

html: execute
	APT=$(APT) $(BIN)/python scripts/ensure_chromium.py
	$(BIN)/python scripts/build_book.py -W -n --keep-going
	$(BIN)/python -m pytest tests -m html

executed: html
	$(BIN)/python scripts/colab_check.py --executed _build/jupyter_execute/notebooks/*.ipynb

## every claim resting on a stored full-scale run re-checked against the committed ledger
ledger: $(STAMP)
	$(BIN)/python -m lengthgen claims --check
	git diff --exit-code -- results

## the package, tests, scripts and the notebooks' code are formatted and lint-clean (ruff; one line
## length, set in pyproject.toml): run `ruff format src tests scripts notebooks/*.ipynb`,
## `ruff check --fix src tests scripts`, then `jupytext --sync notebooks/*.ipynb` to fix
LINTED := src tests scripts
format-check: $(STAMP)
	$(BIN)/ruff format --check $(LINTED) notebooks/*.ipynb
	$(BIN)/ruff check $(LINTED)

## the jupytext pairs must be in sync: syncing leaves git clean
sync-check: $(STAMP)
	$(BIN)/jupytext --sync notebooks/*.md
	git diff --exit-code -- notebooks

## the oldest versions pyproject.toml allows are Colab's (its lower bounds), so the lowest-versions
## test is the Colab leg: every notebook at exactly those versions
test-min: test-colab

## Colab as a reader runs it, and CI's second machine: every notebook from its own setup cell on
## Colab's versions (ci/colab-versions.txt) under an older CPU's kernel dispatch (scripts/test_colab.sh)
test-colab:
	bash scripts/test_colab.sh

## requirements.lock: the exact versions the main leg tests, resolved from requirements.txt (torch:
## the local CPU wheel under WHEELS). `make lock` refreshes it on purpose (then run make test and
## commit it); `make lock-drift` lists what current releases would change, and never fails.
UV_COMPILE = $(BIN)/uv pip compile requirements.txt --python $(BIN)/python --no-annotate -q --custom-compile-command "make lock" \
	$(if $(wildcard $(WHEELS)),--find-links $(WHEELS))
lock: $(STAMP)
	$(UV_COMPILE) --upgrade -o requirements.lock
lock-drift: $(STAMP)
	mkdir -p _build && cp requirements.lock _build/requirements.current
	$(UV_COMPILE) --upgrade -o _build/requirements.current
	diff requirements.lock _build/requirements.current | grep '^[<>]' \
		&& echo "lock-drift: the lines above would change (make lock)" || echo "lock-drift: none"

clean:
	rm -rf _build

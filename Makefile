# The two commands of the README: `make book` and `make test`. Both set up .venv on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# APT=0: never install system packages (make test installs Debian's chromium for the HTML checks)
APT    ?= 1
NBVAL  := --nbval-lax -n 2 --dist loadfile --nbval-sanitize-with notebooks/nbval_sanitize.cfg

.PHONY: book test unit nbval html ledger pages sync-check format-check clean second-cpu unit-threads test-min

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps -e .
	touch $(STAMP)

## make book: execute every chapter at smoke scale (cached) and build the HTML book into _build/html;
## fails naming the chapter and cell if any chapter's execution fails, and generates the ledger pages
## (scorecard, results box, cost) from the ledgers this build's executions wrote (scripts/build_book.py)
book: $(STAMP)
	$(BIN)/python scripts/build_book.py

## the scorecard's tables and the intro's results box, generated from results/claims/
pages: $(STAMP)
	$(BIN)/python scripts/build_pages.py

## make test: unit tests, every notebook under nbval, the strict book build, the HTML checks and the
## ledger check; it leaves `git status` clean (ledger values are rounded, smoke runs write under _build)
test: unit format-check nbval html ledger

unit: $(STAMP)
	$(BIN)/python -m pytest tests -m "not html" -n 2

nbval: $(STAMP)
	$(BIN)/python -m pytest notebooks/*.ipynb $(NBVAL)

html: $(STAMP)
	APT=$(APT) $(BIN)/python scripts/ensure_chromium.py
	$(BIN)/python scripts/build_book.py -W -n --keep-going
	$(BIN)/python -m pytest tests -m html

## every claim resting on a stored full-scale run re-checked against the committed ledger
ledger: $(STAMP)
	$(BIN)/python -m lengthgen claims --check
	git diff --exit-code -- results

## the package, tests, scripts and the notebooks' code are formatted and lint-clean (ruff; one line
## length, set in pyproject.toml): run `ruff format src tests scripts benchmarks notebooks/*.ipynb`,
## `ruff check --fix src tests scripts benchmarks`, then `jupytext --sync notebooks/*.ipynb` to fix
LINTED := src tests scripts benchmarks
format-check: $(STAMP)
	$(BIN)/ruff format --check $(LINTED) notebooks/*.ipynb
	$(BIN)/ruff check $(LINTED)

## the jupytext pairs must be in sync: syncing leaves git clean
sync-check: $(STAMP)
	$(BIN)/jupytext --sync notebooks/*.md
	git diff --exit-code -- notebooks

## a second machine on this one: the unit tests, the notebooks and the ledger check under the kernel
## dispatch of an older CPU (torch's generic kernels, MKL limited to SSE4.2), which rounds differently
OLD_CPU := ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2
second-cpu: $(STAMP)
	$(OLD_CPU) $(MAKE) unit nbval ledger

## the unit tests with two intra-op threads (thread-dependent rounding), one process
unit-threads: $(STAMP)
	LENGTHGEN_TEST_THREADS=2 $(BIN)/python -m pytest tests -m "not html and not slow" -p no:xdist -q

## what users install: the oldest versions pyproject.toml allows (torch held at the local CPU wheel),
## in a venv of its own, running the unit tests and chapter 0 (scripts/test_min.sh)
test-min:
	bash scripts/test_min.sh

clean:
	rm -rf _build

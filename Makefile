# The two commands of the README:
#   make run   set up the environment and run the main job (default comparison)
#   make test  set up the environment and run the test suite on every core, the slow exhaustive checks left out
#              (kept within about 10 minutes on 2 cores; `make test-slow` runs those, and CI's .ci/run runs both)
#   make docs  build the documentation site (mkdocs.yml, the pages in docs/) into site/, strictly: a broken link fails
#   make docs-figures  rewrite the default study's tables and chart in README/docs from data/default-study.json,
#                      and the honest player's table and budget curve from data/honest-store and data/honest-curve.csv
#   make atlas-docs  rewrite docs/atlas.md's table, docs/atlas-winnability.png and the README's atlas list from
#                    studies/atlas/data/ (after the atlas changes)
# All are idempotent: the virtual environment is rebuilt only when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: run test test-slow docs atlas-docs docs-figures lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed, found " + sys.version'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/bakers-dozen demo

# -n auto: one pytest-xdist worker per core; --dist loadfile keeps a file's tests (and its shared fixtures) on one worker.
# --max-rss-gib 4: the run fails if any process (or a child it ran) peaked above 4 GiB resident, so the suite fits a
# laptop (tests/peak_memory.py; every run ends with each process's peak and the test that reached it).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not slow" --max-rss-gib 4

# The checks marked slow (exhaustive volumes, numba's bounds checking, the README's commands): CI runs them after `make test`.
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m slow

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

# The site, with the command-line reference generated from the commands' own help (mkdocs-click).
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict

# The atlas page's table and chart and the README's atlas list, made from studies/atlas/data/summary.csv once the atlas
# agrees with its deal files.
atlas-docs: $(STAMP)
	$(BIN)/python -m reports.atlas_page --readme README.md

# The README's and docs/reports.md's default-study table, the README's finding and docs/demo-win-rates.png, from the
# pinned run data/default-study.json (pin a new run first: python -m reports.study_figures --pin STORE).
docs-figures: $(STAMP)
	$(BIN)/python -m reports.study_figures
	$(BIN)/python -m reports.honest_figures

lint: $(STAMP)
	$(BIN)/ruff check sim strategies studies reports bakers_dozen tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache site

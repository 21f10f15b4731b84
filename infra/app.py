"""CDK app entry point: `python -m infra.app` synthesizes into cdk.out (offline).

Context comes from cdk.json (read here too, so a plain `python -m infra.app`
sees the same values as the CDK CLI), overridden by `-c key=value` when the
CLI runs the app. The stack is environment-agnostic: synth needs no AWS
credentials; the account and region come from the CLI's profile at deploy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.config import DeploymentConfig
from infra.nag import add_suppressions
from infra.stack import MemoryStack

REPO = Path(__file__).resolve().parents[1]


def cdk_json_context() -> dict[str, Any]:
    path = REPO / "cdk.json"
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text()).get("context", {}))


def build_app(
    context: dict[str, Any] | None = None, outdir: str | None = None
) -> tuple[cdk.App, MemoryStack]:
    """The app with its one stack, the stack's cdk-nag acknowledgments and cdk-nag attached (tests
    call this with their own context)."""
    merged = {**cdk_json_context(), **(context or {})}
    if outdir is None and "CDK_OUTDIR" not in os.environ:
        outdir = str(REPO / "cdk.out")
    app = cdk.App(context=merged, outdir=outdir)
    config = DeploymentConfig.from_node(app.node)
    stack = MemoryStack(
        app,
        f"AgentMemory-{config.environment_name}",
        config=config,
        description="Agent Memory Service: governed long-term memory for AI agents",
    )
    add_suppressions(stack)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()

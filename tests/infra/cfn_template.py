"""Small readers for the synthesized CloudFormation template."""

from __future__ import annotations

import json
from typing import Any


def refs_in(value: Any) -> set[str]:
    """Every logical id a value points at through Ref or Fn::GetAtt."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value and isinstance(value["Ref"], str):
            found.add(value["Ref"])
        if "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            found.add(target[0] if isinstance(target, list) else target.split(".")[0])
        for item in value.values():
            found |= refs_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= refs_in(item)
    return found


def joined_string(value: Any) -> str:
    """Flatten an Fn::Join (tokens become placeholders) into one string."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(joined_string(part) for part in parts)
    return "__TOKEN__"


def state_machine_definition(raw: dict[str, Any]) -> dict[str, Any]:
    machines = [r for r in raw["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    assert len(machines) == 1
    return json.loads(joined_string(machines[0]["Properties"]["DefinitionString"]))


def task_order(definition: dict[str, Any]) -> list[str]:
    """Task states' `step` payloads in execution order (depth first, Choice branches in order)."""
    states = definition["States"]
    seen: set[str] = set()
    order: list[str] = []

    def visit(name: str | None) -> None:
        if name is None or name in seen:
            return
        seen.add(name)
        state = states[name]
        if state["Type"] == "Task":
            order.append(state["Parameters"]["step"])  # payload_response_only: Parameters is the payload
        for choice in state.get("Choices", []):
            visit(choice["Next"])
        visit(state.get("Next"))
        visit(state.get("Default"))

    visit(definition["StartAt"])
    return order


def api_paths(raw: dict[str, Any]) -> dict[str, str]:
    """API Gateway resource logical id -> full path ('/v1/memories/{memory_id}')."""
    resources = {k: v for k, v in raw["Resources"].items() if v["Type"] == "AWS::ApiGateway::Resource"}
    paths: dict[str, str] = {}

    def path_of(logical_id: str) -> str:
        if logical_id not in paths:
            props = resources[logical_id]["Properties"]
            parent = props["ParentId"]
            parent_path = path_of(parent["Ref"]) if "Ref" in parent else ""
            paths[logical_id] = f"{parent_path}/{props['PathPart']}"
        return paths[logical_id]

    for logical_id in resources:
        path_of(logical_id)
    return paths

"""How a client model and a server schema from `/v1/openapi.json` disagree (shared by the
client's contract and drift tests)."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel


def resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """Through `$ref`, `anyOf [X, null]` and arrays' `items`, to the schema of one value."""
    while True:
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in schema:
            options = [s for s in schema["anyOf"] if s.get("type") != "null"]
            if len(options) != 1:
                return schema
            schema = options[0]
        elif schema.get("type") == "array" and "items" in schema:
            schema = schema["items"]
        else:
            return schema


def nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = nested_model(arg)
        if found is not None:
            return found
    return None


def drift(
    model: type[BaseModel], schema: dict[str, Any], components: dict[str, Any], where: str, *, request: bool
) -> list[str]:
    """How `model` and the server's object schema disagree (empty: they match)."""
    props: dict[str, Any] = schema.get("properties", {})
    server_required = set(schema.get("required", []))
    mine = {field.alias or name: field for name, field in model.model_fields.items()}
    problems = [
        f"{where}.{n}: the server has it, {model.__name__} does not"
        for n in sorted(props.keys() - mine.keys())
    ]
    if request or schema.get("additionalProperties") is not True:
        problems += [
            f"{where}.{n}: {model.__name__} has it, the server does not"
            for n in sorted(mine.keys() - props.keys())
        ]
    client_required = {n for n, f in mine.items() if f.is_required()}
    if request and client_required != server_required:
        problems.append(
            f"{where}: required {sorted(client_required)} here, {sorted(server_required)} on the server"
        )
    if not request:  # the client may default what the server always sends, never require what it may omit
        problems += [
            f"{where}.{n}: required here, optional on the server"
            for n in sorted(client_required & props.keys() - server_required)
        ]
    for name in sorted(mine.keys() & props.keys()):
        nested = nested_model(mine[name].annotation)
        sub = resolve(props[name], components)
        if nested is not None and "properties" in sub:
            problems += drift(nested, sub, components, f"{where}.{name}", request=request)
    return problems


def json_schema(holder: dict[str, Any]) -> dict[str, Any] | None:
    return (holder.get("content") or {}).get("application/json", {}).get("schema")


def success_schema(operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema of an operation's 2xx JSON answer (None: it answers no JSON body)."""
    answers = [json_schema(r) for code, r in sorted(operation["responses"].items()) if code.startswith("2")]
    return next((resolve(s, components) for s in answers if s), None)

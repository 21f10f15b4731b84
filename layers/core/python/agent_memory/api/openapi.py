"""One OpenAPI document for the whole API, merged from every HTTP function's
resolver, and a Swagger UI page that works offline (Powertools ships its assets)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from agent_memory import __version__
from agent_memory.functions_spec import FUNCTIONS, load_handler_module


@cache
def merged_openapi() -> dict[str, Any]:
    merged: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Agent Memory Service",
            "version": __version__,
            "description": "Governed long-term memory for customer-facing AI agents.",
        },
        "paths": {},
        "components": {
            "schemas": {},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        },
        "security": [{"bearer": []}],
    }
    for spec in FUNCTIONS:
        if spec.trigger != "api":
            continue
        app = load_handler_module(spec).app
        schema = json.loads(app.get_openapi_json_schema(title="Agent Memory Service", version=__version__))
        for path, ops in schema.get("paths", {}).items():
            merged["paths"].setdefault(path, {}).update(ops)
        merged["components"]["schemas"].update(schema.get("components", {}).get("schemas", {}))
    return merged


def swagger_html(spec_url: str) -> str:
    from importlib import resources

    assets = resources.files("aws_lambda_powertools.event_handler.openapi.swagger_ui")
    js = (assets / "swagger-ui-bundle.min.js").read_text()
    css = (assets / "swagger-ui.min.css").read_text()
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Agent Memory Service API</title><style>{css}</style></head>
<body><div id="swagger-ui"></div><script>{js}</script>
<script>SwaggerUIBundle({{url: {json.dumps(spec_url)}, dom_id: "#swagger-ui"}});</script></body></html>"""

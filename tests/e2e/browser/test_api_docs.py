"""The Swagger UI page (`/v1/docs`) in a real browser, under its own Content-Security-Policy: the
page renders the API from its inline assets and the OpenAPI document, and the browser reports no
blocked script, style, image or request."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.e2e


def test_the_swagger_page_renders_under_its_content_security_policy(console: Any, api: Any):
    # Given the docs page, served with a policy that allows only its own inline assets
    reply = api.get("/v1/docs")
    assert "default-src 'none'" in reply.headers["Content-Security-Policy"]
    console.driver.get("about:blank")
    console.driver.get_log("browser")  # start from an empty log
    # When the browser opens it
    console.driver.get(f"{console.base}/v1/docs")
    # Then Swagger UI renders the API's title and its routes from the OpenAPI document
    assert "Agent Memory Service" in console.text_of(".swagger-ui .info .title")
    console.wait_text(".opblock-summary-path", "/v1/retrieve")
    # And the browser blocked nothing the page needs (a violation is logged as an error)
    assert not [m for m in console.severe_logs() if "Content Security Policy" in m or "Refused" in m]

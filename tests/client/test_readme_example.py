"""The client README's example runs as written against the local front."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"


def test_the_readme_example_runs(api, local_aws):
    # Given the README's Python example, pointed at the local front, with an agent's token
    example = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    assert len([line for line in example.splitlines() if line.strip()]) <= 10
    source = example.replace("http://127.0.0.1:8080", api.base)
    token = api.token("readme", "agent-1", ["agent"], clearance="confidential")
    poller = QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")
    out = io.StringIO()
    # When it runs, with the extraction worker polling
    poller.start()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, str(README), "exec"), {"token": token})
    finally:
        poller.stop()
    # Then it printed the context envelope and the processed session
    printed = out.getvalue()
    assert '<retrieved_memory subject="ACC-CORP-4812">' in printed
    assert printed.strip().splitlines()[-1].startswith("processed ")

"""`memory serve` as a developer and as an operator run it: the console's development sign-in
(`/console/dev/token`, which signs a token for any roles) answers only with the development
secret the server generated into its data folder, never with an operator's MEMORY_JWT_SECRET."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from serve_process import memory_serve as serve_process

pytestmark = pytest.mark.e2e


@contextmanager
def memory_serve(data_dir: Path, **env: str) -> Iterator[str]:
    """`memory serve` on a free loopback port with its own data folder; yields its base URL."""
    with serve_process(data_dir, **env) as served:
        yield served.base


def dev_sign_in_status(base: str) -> int:
    try:
        with urllib.request.urlopen(f"{base}/console/dev/token", timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def test_the_development_sign_in_answers_only_with_the_generated_development_secret(tmp_path):
    # Given `memory serve` on loopback with the secret it generates, and one given the operator's
    # own MEMORY_JWT_SECRET
    with memory_serve(tmp_path / "dev") as developer:
        # When each is asked for the console's development sign-in, from this machine
        generated = dev_sign_in_status(developer)
    with memory_serve(tmp_path / "ops", MEMORY_JWT_SECRET="operator-secret-" + "o" * 32) as operator:
        configured = dev_sign_in_status(operator)
    # Then only the developer's server offers it; the operator's decides who gets tokens
    assert generated == 200
    assert configured == 404

"""The first minutes with the `memory` command: `memory token` signs with the secret the running
server checks, from any folder, and says on stderr which secret it used (never the secret
itself); `memory invoke` names the known functions instead of a usage error."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agent_memory import cli
from agent_memory.api.identity import local_secret, verify_token
from agent_memory.local.discovery import RunningServer, register, running_servers, unregister

ARGS = ["token", "--tenant", "acme", "--sub", "me", "--roles", "agent"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))  # this test's own registry
    for name in ("MEMORY_DATA_DIR", "MEMORY_JWT_SECRET", "MEMORY_JWT_JWKS_URL"):
        monkeypatch.delenv(name, raising=False)


def minted(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    out = capsys.readouterr()
    return out.out.strip(), out.err


def test_given_a_running_server_elsewhere_when_a_token_is_made_then_it_uses_that_servers_secret(
    tmp_path, monkeypatch, capsys
):
    # Given a server running with its data folder in another directory
    server_dir = tmp_path / "checkout" / ".memory-data"
    server_secret = local_secret(server_dir, None)
    record = register(
        RunningServer(pid=os.getpid(), port=8080, data_dir=str(server_dir), secret_source="data folder")
    )
    # When `memory token` runs in a folder without a data folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    try:
        assert cli.main(ARGS) == 0
    finally:
        unregister(record)
    token, err = minted(capsys)
    # Then the token verifies with the server's secret, stderr names the folder and the port, and
    # no data folder was created here
    assert verify_token(server_secret, token)["tenant_id"] == "acme"
    assert str(server_dir) in err and "port 8080" in err and server_secret not in err
    assert not (elsewhere / ".memory-data").exists()


def test_given_no_server_and_no_secret_when_a_token_is_made_then_it_refuses_with_the_command_to_run(
    tmp_path, monkeypatch, capsys
):
    # Given no running server and a folder where no server ever ran
    monkeypatch.chdir(tmp_path)
    # When `memory token` runs
    code = cli.main(ARGS)
    # Then it refuses in one line naming the command to start the server, and creates no secret
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "no running server found" in err and "`make serve`" in err and "MEMORY_DATA_DIR" in err
    assert not (tmp_path / ".memory-data").exists()


def test_given_a_stopped_servers_folder_when_a_token_is_made_then_its_secret_is_used_and_said(
    tmp_path, monkeypatch, capsys
):
    # Given no running server but the secret a server left in this folder's data folder
    monkeypatch.chdir(tmp_path)
    secret = local_secret(tmp_path / ".memory-data", None)
    # When `memory token` runs
    assert cli.main(ARGS) == 0
    token, err = minted(capsys)
    # Then the token verifies with that secret (the server uses it again when started), stderr says
    # no server is running and when the token expires
    assert verify_token(secret, token)["sub"] == "me"
    assert "no server is running" in err and secret not in err
    assert re.search(r"valid 12 h, until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", err)


def test_given_the_secret_in_the_environment_then_stderr_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMORY_JWT_SECRET", "e" * 40)
    assert cli.main(ARGS) == 0
    token, err = minted(capsys)
    assert verify_token("e" * 40, token) and "MEMORY_JWT_SECRET" in err and "e" * 40 not in err


def test_records_of_ended_servers_are_ignored(tmp_path):
    # Given a record left by a process that no longer exists
    register(RunningServer(pid=2**22 + 12345, port=9, data_dir=str(tmp_path), secret_source="data folder"))
    # Then it is not a running server
    assert running_servers() == []


def test_memory_invoke_with_an_unknown_function_lists_the_known_ones(capsys):
    # When `memory invoke` names no function of the table
    assert cli.main(["invoke", "no_such_function", "event.json"]) == 2
    err = capsys.readouterr().err
    # Then it says so and lists every known function, without a usage error or a traceback
    assert "no function 'no_such_function'" in err
    assert all(name in err for name in ("memories", "retrieve", "authorizer"))
    assert "usage:" not in err and "Traceback" not in err


def test_memory_invoke_without_an_event_points_to_a_sample(capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the repository, where events/ is
    assert cli.main(["invoke", "retrieve"]) == 2
    err = capsys.readouterr().err
    assert "name an event file, e.g. events/retrieve/" in err and "usage:" not in err


def test_print_config_points_at_the_running_server_and_signs_with_its_secret(tmp_path, monkeypatch, capsys):
    import json

    # Given a server running on port 8123 with its data folder elsewhere, and no MEMORY_URL here
    monkeypatch.delenv("MEMORY_URL", raising=False)
    server_dir = tmp_path / "checkout" / ".memory-data"
    server_secret = local_secret(server_dir, None)
    record = register(
        RunningServer(pid=os.getpid(), port=8123, data_dir=str(server_dir), secret_source="data folder")
    )
    monkeypatch.chdir(tmp_path)
    # When a desktop configuration is printed
    try:
        code = cli.main(["mcp", "--print-config", "cursor", "--tenant", "acme", "--subject", "ACC-1"])
    finally:
        unregister(record)
    out, err = capsys.readouterr()
    env = json.loads(out)["mcpServers"]["agent-memory"]["env"]
    # Then it names that server's URL and its token verifies with that server's secret, bound to
    # the one customer with the agent role; stderr names the host's file and the expiry
    assert code == 0
    assert env["MEMORY_URL"] == "http://127.0.0.1:8123"
    claims = verify_token(server_secret, env["MEMORY_TOKEN"])
    assert (claims["roles"], claims["subjects"], claims["tenant_id"]) == (["agent"], ["ACC-1"], "acme")
    assert ".cursor/mcp.json" in err and "valid 12 h, until" in err

"""Least privilege from the first command: the `memory serve` banner and the README's Try-it mint
the same tokens, an agent's bound to one customer and a reviewer's apart, and `memory token
--subjects` binds a token to the customers it names."""

from __future__ import annotations

import io
import shlex
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_memory import cli
from agent_memory.api.identity import local_secret, verify_token
from agent_memory.config import Settings
from agent_memory.local.serve_command import QUICKSTART_TOKENS, announce

REPO = Path(__file__).resolve().parents[2]


def try_it_block() -> str:
    readme = (REPO / "README.md").read_text()
    after = readme[readme.index("Try it") :]
    return after[after.index("```bash\n") : after.index("\n```", after.index("```bash"))]


def roles_of(command: str) -> list[str]:
    words = shlex.split(command)
    return words[words.index("--roles") + 1].split(",")


def test_the_banner_and_the_readme_mint_the_same_least_privilege_tokens(tmp_path):
    # Given the banner of a server with local tokens
    out = io.StringIO()
    with redirect_stdout(out):
        announce(Settings(data_dir=str(tmp_path)), SimpleNamespace(server_address=("127.0.0.1", 8080)))  # type: ignore[arg-type]
    banner, block = out.getvalue(), try_it_block()
    # Then every token it shows is in the README's Try-it, as written
    for _, command in QUICKSTART_TOKENS:
        assert f".venv/bin/{command}" in banner
        assert f".venv/bin/{command}" in block
    # And each token has one role; the agent's is bound to one customer, the reviewer's is another
    agent, reviewer = (command for _, command in QUICKSTART_TOKENS)
    assert roles_of(agent) == ["agent"] and roles_of(reviewer) == ["reviewer"]
    words = shlex.split(agent)
    assert len(words[words.index("--subjects") + 1].split(",")) == 1
    assert "integration" not in banner and "agent,reviewer" not in block


def test_memory_token_subjects_binds_the_token_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("MEMORY_DATA_DIR", str(tmp_path / "data"))
    for name in ("MEMORY_JWT_SECRET", "MEMORY_JWT_JWKS_URL"):
        monkeypatch.delenv(name, raising=False)
    # When a token is minted for two customers, for two hours
    args = ["token", "--tenant", "acme", "--sub", "copilot", "--roles", "agent"]
    assert cli.main([*args, "--subjects", "ACC-1, ACC-2", "--hours", "2"]) == 0
    out = capsys.readouterr()
    # Then it is bound to exactly those, and stderr says so with its lifetime
    claims = verify_token(local_secret(tmp_path / "data", None), out.out.strip())
    assert claims["subjects"] == ["ACC-1", "ACC-2"]
    assert claims["exp"] - claims["iat"] == pytest.approx(2 * 3600, abs=2)
    assert "bound to 2 subject(s); valid 2 h" in out.err

"""Shared fixtures: one embedded PostgreSQL per test session, a fresh database
per test module, the real offline embedder, and a local HTTP front.

`pytest --fast` (`make test-fast`) is the fast loop: the pure and fake-backed tests only. It
deselects the marked tests (integration, infra, e2e, process, bench), does not collect the
folders that hold nothing else, and draws fewer generated examples (FAST_EXAMPLES); a test that
reaches for the embedded PostgreSQL or moto there fails saying which marker it lacks. Every run checks that a test using those
fixtures carries one of those markers, so an unmarked one cannot slip into the fast loop."""

from __future__ import annotations

import ast
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from harness import ApiClient, create_database

os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

# `make test` (and CI) runs the generated-input tests on the same examples every time, so a
# failure is reproducible from its log; `HYPOTHESIS_PROFILE=explore make test` draws new ones.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
hypothesis_settings.register_profile("explore", print_blob=True)
# The fast loop draws fewer examples (the same ones every run); `make test` draws them all.
FAST_EXAMPLES = 5
hypothesis_settings.register_profile(
    "fast", derandomize=True, database=None, print_blob=True, max_examples=FAST_EXAMPLES
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[1]

# The markers of tests that need more than the Python process: a database, moto, a server, a synth.
HEAVY_MARKERS = ("integration", "infra", "e2e", "process", "bench")
# Folders whose every test carries one of them: the fast loop does not even import them.
HEAVY_FOLDERS = ("integration", "e2e", "infra")
# The fixtures that start those parts, and what each needs a test to be marked with.
HEAVY_FIXTURES = {
    "pg_server": "the embedded PostgreSQL",
    "local_aws": "moto (local S3 and SQS)",
    "synthesized": "the CDK synth",
    "browser": "a browser",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="the fast loop (make test-fast): pure and fake-backed tests only, no database, "
        "server process, CDK synth or browser",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("fast"):
        config.option.markexpr = " and ".join(f"not {m}" for m in HEAVY_MARKERS)
        hypothesis_settings.load_profile("fast")
        _refuse_embedded_postgres()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under --fast, the folders and test files whose every test is heavy are not even imported
    (their imports alone, langgraph's or the CDK's, cost seconds)."""
    if not config.getoption("fast"):
        return None
    if collection_path.parent == REPO / "tests" and collection_path.name in HEAVY_FOLDERS:
        return True
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return _marked_heavy_as_a_whole(collection_path) or None
    return None


def _marked_heavy_as_a_whole(path: Path) -> bool:
    """Whether a test file's module-level `pytestmark` names a heavy marker."""
    source = path.read_text(encoding="utf-8")
    if "pytestmark" not in source:
        return False
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            named = {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
            return bool(named & set(HEAVY_MARKERS))
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse the run when a test uses a heavy fixture without a heavy marker: unmarked, it would
    run in the fast loop (where the fixture fails) instead of only where the suite expects it."""
    unmarked = [
        f"{item.nodeid} uses {', '.join(sorted(heavy))}"
        for item in items
        if (heavy := set(getattr(item, "fixturenames", ())) & HEAVY_FIXTURES.keys())
        and not any(item.get_closest_marker(m) for m in HEAVY_MARKERS)
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests need a marker ("
            + ", ".join(HEAVY_MARKERS)
            + ") for what they start:\n  "
            + "\n  ".join(unmarked)
        )
    if config.getoption("fast"):
        for item in items:
            _fewer_examples(item)


def _fewer_examples(item: pytest.Item) -> None:
    """Under --fast, a property test that asks for more examples than the fast profile draws
    (`@settings(max_examples=300)`) draws the fast profile's number; its other settings stay."""
    test = getattr(item, "obj", None)
    chosen = getattr(test, "_hypothesis_internal_use_settings", None)
    if chosen is not None and chosen.max_examples > FAST_EXAMPLES:
        test._hypothesis_internal_use_settings = hypothesis_settings(chosen, max_examples=FAST_EXAMPLES)  # type: ignore[union-attr]


def refuse_in_fast_loop(request: pytest.FixtureRequest, fixture: str) -> None:
    """Fail the test asking for `fixture` under `--fast`, naming what it starts and the fix."""
    if request.config.getoption("fast"):
        pytest.fail(
            f"this test needs {HEAVY_FIXTURES[fixture]} (fixture `{fixture}`), which the fast loop "
            "does not start: mark it integration, e2e or infra",
            pytrace=False,
        )


def _refuse_embedded_postgres() -> None:
    """Under --fast, starting the embedded PostgreSQL by any route (not only the fixture) fails."""
    from agent_memory.local import embedded

    def refused(*args: Any, **kwargs: Any) -> Any:
        pytest.fail(
            "the fast loop starts no embedded PostgreSQL: mark this test integration or e2e",
            pytrace=False,
        )

    embedded.embedded_server = refused  # type: ignore[assignment]
    embedded.start_embedded_postgres = refused  # type: ignore[assignment]


@pytest.fixture(scope="session")
def pg_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    refuse_in_fast_loop(request, "pg_server")
    from agent_memory.local.embedded import embedded_server

    root = Path(tempfile.mkdtemp(prefix="memory-tests-"))
    server = embedded_server(root / "pg", cleanup_mode="delete")
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def embedder() -> Any:
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

    return MiniLMOnnxEmbedder()


@pytest.fixture(scope="module")
def database_url(pg_server: Any) -> str:
    return create_database(pg_server)


@pytest.fixture(scope="session")
def local_aws(request: pytest.FixtureRequest) -> Iterator[Any]:
    """moto in-process, with the queue, dead-letter queue and bucket the stack creates."""
    refuse_in_fast_loop(request, "local_aws")
    from agent_memory.local.aws import start_local_aws

    aws = start_local_aws(region="us-east-1", max_receive_count=3, visibility_timeout_s=0)
    yield aws
    aws.stop()


@pytest.fixture(scope="module")
def serve_container(
    database_url: str, embedder: Any, local_aws: Any, tmp_path_factory: pytest.TempPathFactory
) -> Callable[..., AbstractContextManager[Any]]:
    """Builds the module's container, the one the local front serves, with settings changed by
    keyword (`with serve_container(sor_url=...) as c`); `container` is it unchanged."""
    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.config import Settings

    @contextmanager
    def serve(**overrides: Any) -> Iterator[Any]:
        settings = Settings(
            **{
                "database_url": database_url,
                "data_dir": tmp_path_factory.mktemp("data"),
                "jwt_secret": "test-secret-" + "x" * 32,
                "pool_max_size": 12,
                "aws_endpoint_url": local_aws.endpoint_url,
                "extraction_queue_url": local_aws.queue_url,
                "transcripts_bucket": local_aws.bucket,
                **overrides,
            }
        )
        c = build_container(settings, embedder=embedder)
        set_container(c)
        try:
            yield c
        finally:
            set_container(None)
            c.close()

    return serve


@pytest.fixture(scope="module")
def container(serve_container: Callable[..., AbstractContextManager[Any]]) -> Iterator[Any]:
    with serve_container() as c:
        yield c


@pytest.fixture(scope="module")
def api(container: Any) -> Iterator[ApiClient]:
    from agent_memory.local.server import LocalApi, make_http_server, serve_in_thread

    secret = container.settings.jwt_secret.get_secret_value()
    # the test secret stands in for the development secret `memory serve` generates: the console's
    # development sign-in answers, as it does for a developer
    server = make_http_server(
        LocalApi(secret, container.settings.max_body_bytes), "127.0.0.1", 0, development_secret=True
    )
    serve_in_thread(server)
    host, port = server.server_address[:2]
    yield ApiClient(f"http://{host}:{port}", secret)
    server.shutdown()
    server.server_close()


@pytest.fixture
def emitted_metrics() -> Callable[[str], set[str]]:
    """Metric names in the CloudWatch embedded-metric-format lines a handler printed (metrics must
    be switched on: POWERTOOLS_METRICS_DISABLED=false)."""

    def names(captured: str) -> set[str]:
        found: set[str] = set()
        for line in captured.splitlines():
            if '"_aws"' in line:
                doc = json.loads(line)
                found |= {m["Name"] for d in doc["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
        return found

    return names

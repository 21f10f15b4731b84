"""The `memory` command: serve, token, migrate, invoke, verify-audit, policy, backup, restore."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import warnings
from pathlib import Path
from typing import Any

# Local runs: CloudWatch's metric lines are for Lambda (set POWERTOOLS_METRICS_DISABLED=false to
# see them here); a machine without XDG_RUNTIME_DIR is normal for a server, not worth a warning.
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

from agent_memory.config import Settings  # noqa: E402 (after the environment above)


def _settings() -> Settings:
    return Settings()


def with_local_aws(settings: Settings) -> tuple[Settings, object | None]:
    """Without AWS resources configured, start moto in-process with the stack's queue, DLQ and bucket."""
    if settings.extraction_queue_url or settings.environment == "aws":
        return settings, None
    from agent_memory.local.aws import start_local_aws

    aws = start_local_aws(region=settings.aws_region, max_receive_count=settings.max_receive_count)
    return settings.model_copy(
        update={
            "aws_endpoint_url": aws.endpoint_url,
            "extraction_queue_url": aws.queue_url,
            "transcripts_bucket": aws.bucket,
        }
    ), aws


def cmd_serve(args: argparse.Namespace) -> int:
    import threading

    from agent_memory.api.identity import local_secret
    from agent_memory.api.verifiers import token_verifier
    from agent_memory.bootstrap import build_container, replay_deletions, set_container
    from agent_memory.local.discovery import RunningServer, register, unregister
    from agent_memory.local.serve_command import announce, cannot_listen, start_local_workers
    from agent_memory.local.server import LocalApi, make_http_server

    settings = _settings()
    if args.port is not None:
        settings = settings.model_copy(update={"port": args.port})
    busy = cannot_listen(settings.host, settings.port)
    if busy:  # one line, before a secret, a database or moto is created
        print(f"memory serve: {busy}", file=sys.stderr)
        return 2
    # The secret first: a weak one refuses to start before anything else is brought up.
    secret = local_secret(
        settings.resolved_data_dir, settings.jwt_secret.get_secret_value() if settings.jwt_secret else None
    )
    verifier = token_verifier(settings, secret)  # a JWKS when MEMORY_JWT_JWKS_URL is set
    settings, aws = with_local_aws(settings)
    container = build_container(settings)
    # Before anything answers: erasures and deletions a restored database may not hold yet.
    replayed = replay_deletions(container)
    if replayed is not None and replayed.tenants:
        print(f"deletion registry replayed: {json.dumps(replayed.as_dict())}", file=sys.stderr, flush=True)
    set_container(container)
    api = LocalApi(secret, settings.max_body_bytes, verifier)
    server = make_http_server(api, settings.host, settings.port, development_secret=not settings.jwt_secret)
    stop = threading.Event()
    poller, relay = start_local_workers(settings, container, stop)
    port = announce(settings, server)
    record = register(
        RunningServer(
            pid=os.getpid(),
            port=port,
            data_dir=str(settings.resolved_data_dir),
            secret_source="MEMORY_JWT_SECRET" if settings.jwt_secret else "data folder",
        )
    )

    def stop_serving(*_: object) -> None:  # SIGTERM/SIGINT: leave serve_forever, then clean up below
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop_serving)
    signal.signal(signal.SIGINT, stop_serving)
    try:
        server.serve_forever()
        print("stopping", flush=True)
    finally:
        unregister(record)
        stop.set()
        relay.stop()
        poller.stop()
        server.server_close()
        container.access_log.seal_all()
        container.close()
        if aws is not None:
            aws.stop()  # type: ignore[attr-defined]
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """A token signed with the secret the running server checks; stderr says which one."""
    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    subjects = [s.strip() for s in args.subjects.split(",") if s.strip()] if args.subjects else None
    token, _ = _mint_token(
        _settings(),
        tenant=args.tenant,
        sub=args.sub,
        roles=roles,
        clearance=args.clearance,
        hours=args.hours,
        subjects=subjects,
        prog="memory token",
    )
    print(token)
    return 0


class NoServer(Exception):
    """No running server to sign for, and no secret a server would use: minting would create one
    that no running server checks."""


def _mint_token(
    settings: Settings,
    *,
    tenant: str,
    sub: str,
    roles: list[str],
    clearance: str,
    hours: float,
    subjects: list[str] | None,
    prog: str,
) -> tuple[str, int | None]:
    """A token signed with the secret the running server checks (stderr says which, whom it
    reaches and until when), and that server's port when one was found. Refuses (NoServer) rather
    than create a secret no running server checks."""
    from datetime import UTC, datetime, timedelta

    from agent_memory.api.identity import SECRET_FILE, issue_token, local_secret

    data_dir, note, port = _token_data_dir(settings)
    configured = settings.jwt_secret.get_secret_value() if settings.jwt_secret else None
    chosen_folder = "MEMORY_DATA_DIR" in os.environ  # named by the user: a server started with it uses it
    if not (configured or chosen_folder or port) and not (data_dir / SECRET_FILE).exists():
        raise NoServer(
            f"no running server found and {data_dir} holds no signing secret: start the server "
            "first (`make serve`, or `.venv/bin/memory serve` in another shell) and run this again; "
            "for a server started elsewhere, set MEMORY_DATA_DIR to its data folder"
        )
    secret = local_secret(data_dir, configured)
    ttl = timedelta(hours=hours)
    token = issue_token(
        secret, tenant_id=tenant, sub=sub, roles=roles, clearance=clearance, ttl=ttl, subjects=subjects
    )
    expires = (datetime.now(UTC) + ttl).strftime("%Y-%m-%dT%H:%M:%SZ")
    source = "MEMORY_JWT_SECRET" if configured else f"the secret in {data_dir}"
    print(f"{prog}: signed with {source}{note}", file=sys.stderr)
    bound = f"bound to {len(subjects)} subject(s)" if subjects else "not bound to subjects (any customer)"
    print(f"{prog}: {bound}; valid {hours:g} h, until {expires} (--hours to change)", file=sys.stderr)
    if settings.jwt_jwks_url:
        print(
            f"{prog}: MEMORY_JWT_JWKS_URL is set: a server with these settings accepts only its"
            " issuer's tokens, not this one",
            file=sys.stderr,
        )
    return token, port


def _token_data_dir(settings: Settings) -> tuple[Path, str, int | None]:
    """The data folder whose secret `memory token` signs with, a note on why, and the port of the
    server using it when one runs: MEMORY_DATA_DIR when set; else the folder of the running server
    (the default folder first when one of several); else the default folder, as `memory serve`
    started here would use."""
    from agent_memory.local.discovery import running_servers

    default = settings.resolved_data_dir
    servers = running_servers()
    if "MEMORY_DATA_DIR" in os.environ:
        same = next((s.port for s in servers if Path(s.data_dir) == default), None)
        return default, " (MEMORY_DATA_DIR)", same
    chosen = next((s for s in servers if Path(s.data_dir) == default), None)
    if chosen is None and len(servers) == 1:
        chosen = servers[0]
    if chosen is None:
        if servers:
            ports = ", ".join(str(s.port) for s in servers)
            note = f" (servers on ports {ports} use other folders: set MEMORY_DATA_DIR to pick one)"
            return default, note, None
        return default, " (no server is running; `memory serve` from this folder uses it)", None
    note = f" (the data folder of the server on port {chosen.port})"
    if chosen.secret_source == "MEMORY_JWT_SECRET" and not settings.jwt_secret:
        note += "; that server uses MEMORY_JWT_SECRET, which is not set here: it will refuse this token"
    return Path(chosen.data_dir), note, chosen.port


def cmd_migrate(args: argparse.Namespace) -> int:
    from agent_memory.adapters.postgres.database import migrate
    from agent_memory.bootstrap import database_url
    from agent_memory.progress import terminal_progress

    settings = _settings()
    applied = migrate(
        database_url(settings),
        embedding_dim=settings.embedding_dim,
        embedding_model=settings.embedder,
        progress=terminal_progress(args.progress),
    )
    print(json.dumps({"applied": applied}))
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from agent_memory.local.backup import backup

    size = backup(_settings(), Path(args.path))
    print(json.dumps({"backup": str(Path(args.path).expanduser().resolve()), "bytes": size}))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Replace the database with a backup, then replay the deletion registry into it: what was
    erased or deleted since the backup was taken is erased or deleted again."""
    from agent_memory.local.backup import RestoreRefused, restore

    settings = _settings()
    try:
        restore(settings, Path(args.path))
    except RestoreRefused as exc:
        print(f"memory restore: {exc}", file=sys.stderr)
        return 2
    print("replaying the deletion registry", file=sys.stderr, flush=True)
    return _replay(settings)


def cmd_replay_deletions(args: argparse.Namespace) -> int:
    return _replay(_settings())


def _replay(settings: Settings) -> int:
    """Migrate (an older backup's schema), replay the deletion registry, print its report."""
    from agent_memory.bootstrap import build_container, replay_deletions

    container = build_container(settings)
    try:
        report = replay_deletions(container)
    finally:
        container.close()
    print(json.dumps({"replay": report.as_dict() if report else None}))
    return 0


def cmd_invoke(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.functions_spec import FUNCTIONS, by_name, load_handler_module
    from agent_memory.local.lambda_context import LocalLambdaContext

    try:
        spec = by_name(args.function)
    except KeyError:
        known = ", ".join(f.name for f in FUNCTIONS)
        print(f"memory invoke: no function {args.function!r}; known functions: {known}", file=sys.stderr)
        return 2
    if args.event is None:
        samples = sorted(Path("events", spec.name).glob("*.json"))
        hint = f", e.g. {samples[0]}" if samples else " (samples: events/<function>/*.json)"
        print(f"memory invoke {spec.name}: name an event file{hint}", file=sys.stderr)
        return 2
    try:
        event = json.loads(Path(args.event).read_text())
    except OSError as exc:
        print(f"memory invoke: cannot read {args.event}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"memory invoke: {args.event} is not JSON ({exc})", file=sys.stderr)
        return 2
    settings, aws = with_local_aws(_settings())
    container = build_container(settings)
    set_container(container)
    try:
        result: Any = load_handler_module(spec).lambda_handler(
            event, LocalLambdaContext(function_name=spec.name)
        )
        print(json.dumps(result, indent=2, default=str))
    finally:
        container.close()
        if aws is not None:
            aws.stop()  # type: ignore[attr-defined]
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container
    from agent_memory.local.import_command import run

    container = build_container(_settings())
    try:
        print(json.dumps(run(args, container), indent=2))
    finally:
        container.close()
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container
    from agent_memory.progress import terminal_progress

    container = build_container(_settings())
    try:
        report = container.lifecycle.purge(
            dry_run=args.dry_run,
            consolidate=not args.no_consolidate,
            progress=terminal_progress(args.progress),
        )
        print(json.dumps(report.as_dict(), indent=2, default=str))
    finally:
        container.close()
    return 0


def cmd_sor_set(args: argparse.Namespace) -> int:
    from agent_memory.adapters.sor.local import LocalSystemOfRecord
    from agent_memory.bootstrap import build_container

    values: dict[str, Any] = {}
    for pair in args.pairs:
        if "=" not in pair:
            raise SystemExit(f"expected field=value, got {pair!r}")
        k, v = pair.split("=", 1)
        if not re.fullmatch(r"[a-z][a-z0-9_]*", k):
            raise SystemExit(f"field names look like plan_tier: got {k!r}")
        try:
            values[k] = json.loads(v)
        except ValueError:
            values[k] = v
        if values[k] is None or values[k] == "" or isinstance(values[k], dict | list):
            raise SystemExit(f"{k}: a live value is a string, number or boolean, not {v!r}")
    container = build_container(_settings())
    try:
        if not isinstance(container.system_of_record, LocalSystemOfRecord):
            raise SystemExit("MEMORY_SOR_URL is set: values live in that system, not in the local table")
        container.system_of_record.set_values(args.tenant, args.subject, values)
        print(json.dumps({"tenant": args.tenant, "subject": args.subject, "values": values}))
    finally:
        container.close()
    return 0


def cmd_verify_audit(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container

    container = build_container(_settings())
    tenants = [args.tenant] if args.tenant else list(container.store.tenants())
    reports = [container.reads.verify_audit(t) for t in tenants]
    print(json.dumps([r.__dict__ for r in reports], indent=2))
    container.close()
    return 0 if all(r.ok for r in reports) else 1


def cmd_stats(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime, timedelta

    from agent_memory.bootstrap import build_container
    from agent_memory.services.stats import format_table, tenant_stats

    if args.hours <= 0:
        print("memory stats: --hours must be positive", file=sys.stderr)
        return 2
    since = datetime.now(UTC) - timedelta(hours=args.hours)
    container = build_container(_settings())
    try:
        tenants = [args.tenant] if args.tenant else sorted(container.store.tenants())
        stats = [tenant_stats(container.store, t, since) for t in tenants]
    finally:
        container.close()
    if args.json:
        print(json.dumps({"since": since.isoformat(), "tenants": stats}, indent=2))
    elif not stats:
        print("no tenants yet")
    else:
        print(format_table(stats, since))
    return 0


def cmd_policy(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container

    container = build_container(_settings())
    overrides = json.loads(args.overrides) if args.overrides else {}
    resolved = container.policies.set(args.tenant, args.profile, overrides, actor="cli")
    print(json.dumps({"tenant": args.tenant, "profile": resolved.name}))
    container.close()
    return 0


BENCH_MISSING = (
    "memory bench: the benchmarks are a development package (benchmarks/memory_bench in the "
    "repository) and are not installed here; run it from a checkout after `make install` "
    "(which also installs them as `memory-bench`)"
)


def cmd_bench(args: argparse.Namespace) -> int:
    """The benchmarks live outside the product (benchmarks/, their own `memory-bench` command; not in
    the wheel or the Lambda layer): handed over to only where they are installed."""
    try:
        from memory_bench.cli import main as bench_main
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "memory_bench":
            raise
        print(BENCH_MISSING, file=sys.stderr)
        return 2
    return int(bench_main(args.bench_args) or 0)


MCP_MISSING = (
    "memory mcp: the MCP server is part of the Python client with its mcp extra, which is not "
    "installed in this environment: `make serve` (or `uv sync --extra local`) in the repository "
    "installs it; outside a uv environment, pip install './clients/python[mcp]'"
)


def cmd_mcp(args: argparse.Namespace) -> int:
    """The client's MCP server (`agent-memory-mcp`); it calls the API with the caller's token.
    `--print-config HOST` prints a desktop host's configuration that starts it instead."""
    if any(a == "--print-config" or a.startswith("--print-config=") for a in args.mcp_args):
        from agent_memory.api.identity import WeakSecret

        try:
            return cmd_mcp_print_config(mcp_config_parser().parse_args(args.mcp_args))
        except (NoServer, WeakSecret) as exc:
            print(f"memory mcp: {exc}", file=sys.stderr)
            return 2
    try:
        from agent_memory_client.mcp_server import main as mcp_main
    except ImportError as exc:
        print(f"{MCP_MISSING} ({exc})", file=sys.stderr)
        return 2
    return int(mcp_main(args.mcp_args, prog="memory mcp") or 0)


def mcp_config_parser() -> argparse.ArgumentParser:
    from agent_memory.local.mcp_config import HOSTS

    p = argparse.ArgumentParser(
        prog="memory mcp --print-config",
        description="print the JSON a desktop MCP host reads to start `memory mcp`, with an agent "
        "token bound to one customer (the token's lifetime is said on stderr)",
    )
    p.add_argument("--print-config", required=True, choices=sorted(HOSTS), metavar="|".join(sorted(HOSTS)))
    p.add_argument("--tenant", required=True)
    p.add_argument("--subject", required=True, help="the one customer the token may reach")
    p.add_argument(
        "--sub", default="mcp-agent", help="who the agent is in the audit trail (default mcp-agent)"
    )
    p.add_argument(
        "--clearance", default="internal", choices=["public", "internal", "confidential", "restricted"]
    )
    p.add_argument("--hours", type=float, default=12.0, help="the token's lifetime in hours (default 12)")
    p.add_argument("--url", help="the service's URL (default: $MEMORY_URL, else the running server's)")
    return p


def cmd_mcp_print_config(args: argparse.Namespace) -> int:
    from agent_memory.local.mcp_config import HOSTS, host_config, server_command

    settings = _settings()
    token, port = _mint_token(
        settings,
        tenant=args.tenant,
        sub=args.sub,
        roles=["agent"],
        clearance=args.clearance,
        hours=args.hours,
        subjects=[args.subject],
        prog="memory mcp",
    )
    url = args.url or os.environ.get("MEMORY_URL") or f"http://127.0.0.1:{port or settings.port}"
    command, command_args = server_command()
    env = {"MEMORY_URL": url, "MEMORY_TOKEN": token}
    print(f"# {HOSTS[args.print_config]}", file=sys.stderr)
    print(
        f"# role agent, customer {args.subject} only; the token expires in {args.hours:g} h: "
        "run this command again to rotate it",
        file=sys.stderr,
    )
    print(json.dumps(host_config(args.print_config, command, command_args, env), indent=2))
    return 0


def _functions() -> list[Any]:
    from agent_memory.functions_spec import FUNCTIONS

    return list(FUNCTIONS)


def _progress_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars with the time left on stderr (default: only when stderr is a terminal)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memory", description="Agent Memory Service")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve the API locally (embedded PostgreSQL unless DATABASE_URL)")
    s.add_argument("--port", type=int, default=None, help="overrides PORT")
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("token", help="print a locally signed JWT")
    s.add_argument("--tenant", required=True)
    s.add_argument("--sub", required=True)
    s.add_argument("--roles", required=True, help="comma-separated: agent,integration,reviewer,...")
    s.add_argument(
        "--clearance", default="internal", choices=["public", "internal", "confidential", "restricted"]
    )
    s.add_argument(
        "--subjects",
        help="comma-separated subject ids the token may reach (least privilege for an agent: the one "
        "customer of its conversation); unset, any subject of the tenant",
    )
    s.add_argument("--hours", type=float, default=12.0, help="lifetime in hours (default 12)")
    s.set_defaults(func=cmd_token)

    s = sub.add_parser("migrate", help="apply database migrations")
    _progress_option(s)
    s.set_defaults(func=cmd_migrate)

    s = sub.add_parser("invoke", help="run one handler on one event file")
    s.add_argument("function", help="one of: " + ", ".join(f.name for f in _functions()))
    s.add_argument("event", nargs="?", help="a JSON event file, such as a sample under events/<function>/")
    s.set_defaults(func=cmd_invoke)

    s = sub.add_parser("verify-audit", help="recompute every tenant's audit hash chain")
    s.add_argument("--tenant")
    s.set_defaults(func=cmd_verify_audit)

    s = sub.add_parser(
        "stats",
        help="the seeds' operating metrics per tenant: stale rate, contested, rejections, lifecycle lag, "
        "deletion time, denials, retrieval latency by stage, storage and cost drivers",
    )
    s.add_argument("--tenant", help="one tenant (default: every tenant)")
    s.add_argument("--hours", type=float, default=24.0, help="the window for rates and counts (default 24)")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.set_defaults(func=cmd_stats)
    _add_data_commands(sub)
    _add_tool_commands(sub)
    return p


def _add_data_commands(sub: Any) -> None:
    """The commands that change a tenant's data: import, purge, the local system of record."""
    s = sub.add_parser("import", help="import a JSONL file of memories or transcripts (resumable)")
    from agent_memory.local.import_command import add_arguments as import_arguments

    import_arguments(s)
    _progress_option(s)
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("purge", help="run the lifecycle purge now (expire, delete, consolidate)")
    s.add_argument("--dry-run", action="store_true", help="count what would change, change nothing")
    s.add_argument("--no-consolidate", action="store_true")
    _progress_option(s)
    s.set_defaults(func=cmd_purge)

    s = sub.add_parser("backup", help="back the database up into a pg_dump archive (progress on stderr)")
    s.add_argument("path", help="the archive to write")
    s.set_defaults(func=cmd_backup)
    s = sub.add_parser(
        "restore",
        help="replace the database with a backup (memory serve stopped), then replay the erasures and "
        "deletions made since",
    )
    s.add_argument("path", help="an archive written by `memory backup`")
    s.set_defaults(func=cmd_restore)
    s = sub.add_parser(
        "replay-deletions", help="replay the deletion registry into the database (what each start does)"
    )
    s.set_defaults(func=cmd_replay_deletions)

    sor = sub.add_parser("sor", help="the local system of record (development)")
    sor_sub = sor.add_subparsers(dest="sor_command", required=True)
    s = sor_sub.add_parser(
        "set", help="set live values: memory sor set --tenant T --subject S plan_tier=enterprise"
    )
    s.add_argument("--tenant", required=True)
    s.add_argument("--subject", required=True)
    s.add_argument("pairs", nargs="+", metavar="field=value")
    s.set_defaults(func=cmd_sor_set)


def _add_tool_commands(sub: Any) -> None:
    """Benchmarks, the MCP server for agents, a tenant's policy profile."""
    s = sub.add_parser(
        "bench",
        help="benchmarks (development checkout only): write, retrieve, lifecycle, soak, extraction, ...",
        add_help=False,
    )
    s.add_argument("bench_args", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser(
        "mcp",
        help="MCP server for agents (stdio, or --http [--port N]); MEMORY_URL, MEMORY_TOKEN (bound to the "
        "customer), MEMORY_SUBJECT; see docs/mcp.md",
        add_help=False,
    )
    s.add_argument("mcp_args", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_mcp)

    s = sub.add_parser("policy", help="set a tenant's policy profile")
    s.add_argument("--tenant", required=True)
    s.add_argument("--profile", required=True, choices=["crm", "support", "wealth", "benchmark"])
    s.add_argument("--overrides", help="JSON object of field overrides")
    s.set_defaults(func=cmd_policy)


def main(argv: list[str] | None = None) -> int:
    from agent_memory.api.identity import WeakSecret

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        # Handed over whole: argparse's REMAINDER drops a leading option such as --help.
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
        return cmd_bench(argparse.Namespace(bench_args=argv[1:]))
    if argv[:1] == ["mcp"]:
        # Handed over whole, like bench; stdout is the MCP stream, so nothing else may print there.
        return cmd_mcp(argparse.Namespace(mcp_args=argv[1:]))
    args = build_parser().parse_args(argv)
    if args.command != "serve":
        # one-shot commands print JSON; per-write INFO lines would drown it
        os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    try:
        return int(args.func(args) or 0)
    except (WeakSecret, NoServer) as exc:
        print(f"memory {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

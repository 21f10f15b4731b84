"""The `memory` command: serve, token, migrate, invoke, verify-audit, policy."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from agent_memory.config import Settings


def _settings() -> Settings:
    return Settings()


def cmd_serve(args: argparse.Namespace) -> int:
    from agent_memory.api.identity import local_secret
    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.local.server import LocalApi, make_http_server

    settings = _settings()
    if args.port is not None:
        settings = settings.model_copy(update={"port": args.port})
    container = build_container(settings)
    set_container(container)
    secret = local_secret(settings.resolved_data_dir, settings.jwt_secret.get_secret_value() if settings.jwt_secret else None)
    api = LocalApi(secret, settings.max_body_bytes)
    server = make_http_server(api, settings.host, settings.port)
    host, port = server.server_address[:2]
    print(f"Agent Memory Service on http://{host}:{port}/v1  (docs: http://{host}:{port}/v1/docs)", flush=True)
    print(f"  data folder: {settings.resolved_data_dir}   token: uv run memory token --tenant T --sub S --roles agent",
          flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopping", flush=True)
    finally:
        server.server_close()
        container.close()
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from agent_memory.api.identity import issue_token, local_secret

    settings = _settings()
    secret = local_secret(settings.resolved_data_dir, settings.jwt_secret.get_secret_value() if settings.jwt_secret else None)
    roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    from datetime import timedelta

    print(issue_token(secret, tenant_id=args.tenant, sub=args.sub, roles=roles, clearance=args.clearance,
                      ttl=timedelta(hours=args.hours)))
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from agent_memory.adapters.postgres.database import migrate
    from agent_memory.bootstrap import database_url

    settings = _settings()
    applied = migrate(database_url(settings), embedding_dim=settings.embedding_dim,
                      embedding_model=settings.embedder)
    print(json.dumps({"applied": applied}))
    return 0


def cmd_invoke(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.functions_spec import by_name, load_handler_module
    from agent_memory.local.lambda_context import LocalLambdaContext

    event = json.loads(Path(args.event).read_text())
    set_container(build_container(_settings()))
    spec = by_name(args.function)
    result: Any = load_handler_module(spec).lambda_handler(event, LocalLambdaContext(function_name=spec.name))
    print(json.dumps(result, indent=2, default=str))
    return 0


def cmd_verify_audit(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container

    container = build_container(_settings())
    tenants = [args.tenant] if args.tenant else list(container.store.tenants())
    reports = [container.reads.verify_audit(t) for t in tenants]
    print(json.dumps([r.__dict__ for r in reports], indent=2))
    container.close()
    return 0 if all(r.ok for r in reports) else 1


def cmd_policy(args: argparse.Namespace) -> int:
    from agent_memory.bootstrap import build_container

    container = build_container(_settings())
    overrides = json.loads(args.overrides) if args.overrides else {}
    resolved = container.policies.set(args.tenant, args.profile, overrides)
    print(json.dumps({"tenant": args.tenant, "profile": resolved.name}))
    container.close()
    return 0


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
    s.add_argument("--clearance", default="internal", choices=["public", "internal", "confidential", "restricted"])
    s.add_argument("--hours", type=float, default=12.0)
    s.set_defaults(func=cmd_token)

    s = sub.add_parser("migrate", help="apply database migrations")
    s.set_defaults(func=cmd_migrate)

    s = sub.add_parser("invoke", help="run one handler on one event file")
    s.add_argument("function")
    s.add_argument("event")
    s.set_defaults(func=cmd_invoke)

    s = sub.add_parser("verify-audit", help="recompute every tenant's audit hash chain")
    s.add_argument("--tenant")
    s.set_defaults(func=cmd_verify_audit)

    s = sub.add_parser("policy", help="set a tenant's policy profile")
    s.add_argument("--tenant", required=True)
    s.add_argument("--profile", required=True, choices=["crm", "support", "wealth", "benchmark"])
    s.add_argument("--overrides", help="JSON object of field overrides")
    s.set_defaults(func=cmd_policy)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

"""What `memory serve` runs beside its HTTP server, and the banner it prints."""

from __future__ import annotations

import errno
import socket
import sys
import threading
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING

from agent_memory.config import Settings
from agent_memory.local.worker import QueuePoller, ScheduledFunction

if TYPE_CHECKING:
    from agent_memory.bootstrap import Container


def cannot_listen(host: str, port: int) -> str | None:
    """Why `memory serve` cannot listen on host:port, checked before anything is created (secret,
    database, moto), the way the HTTP server binds (address reuse on); None when it can."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"host {host!r} (MEMORY_HOST) does not resolve ({exc.strerror or exc})"
    try:
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return (
                f"port {port} on {host} is in use ({exc.strerror}): stop what holds it, or "
                "choose another with --port N (or PORT=N)"
            )
        return f"cannot listen on {host}:{port} ({exc.strerror or exc}): check MEMORY_HOST and --port"
    return None


def start_local_workers(
    settings: Settings, container: Container, stop: threading.Event
) -> tuple[QueuePoller, ScheduledFunction]:
    """What AWS runs beside the API, started here: the extraction queue's poller, the outbox relay
    sweep and the access log's sealing; the sealer stops with `stop`. Returns (poller, relay)."""
    poller = QueuePoller(
        settings.extraction_queue_url or "",
        endpoint_url=settings.aws_endpoint_url,
        region=settings.aws_region,
    )
    poller.start()
    # The outbox relay sweep (a minute in AWS): pending extraction messages, stuck sessions.
    relay = ScheduledFunction("outbox_relay", interval_s=5.0, region=settings.aws_region)
    relay.start()

    def seal_access_events() -> None:  # the local stand-in for the scheduled sealing
        while not stop.wait(5.0):
            try:
                container.access_log.seal_all()
                for tenant in container.store.tenants():  # records written while the embedder was down
                    container.lifecycle.reindex_pending(tenant)
            except Exception as exc:
                print(f"background upkeep failed: {type(exc).__name__}", file=sys.stderr)

    threading.Thread(target=seal_access_events, name="memory-sealer", daemon=True).start()
    return poller, relay


# The tokens the banner and the README's Try-it mint: least privilege, an agent bound to the one
# customer of its conversation and a reviewer apart (never one token with every role).
QUICKSTART_TOKENS: tuple[tuple[str, str], ...] = (
    (
        "agent token:",
        "memory token --tenant acme --sub copilot --roles agent --subjects ACC-CORP-4812 --clearance confidential",
    ),
    ("reviewer:", "memory token --tenant acme --sub reviewer-1 --roles reviewer --clearance confidential"),
)


def announce(settings: Settings, server: ThreadingHTTPServer) -> int:
    """The banner: where the API, its docs and the console are, the data folder, how to get a token.
    Returns the port."""
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else host
    print(
        f"Agent Memory Service on http://{host}:{port}/v1  (docs: http://{host}:{port}/v1/docs)", flush=True
    )
    print(
        f"  console:     http://{host}:{port}/console/  (review queue, subjects, audit, privacy)", flush=True
    )
    print(f"  data folder: {settings.resolved_data_dir}", flush=True)
    if settings.jwt_jwks_url:
        algorithms = settings.jwt_algorithms.replace(",", "/")
        print(f"  tokens:      {algorithms} from {settings.jwt_issuer} (JWKS), no local tokens", flush=True)
    else:
        for label, command in QUICKSTART_TOKENS:
            print(f"  {label:<13}.venv/bin/{command}", flush=True)
    return int(port)

"""Two tenants at once through the local server: no request is ever served as another tenant.

The crossing was seen with one tenant writing large bodies while another listed its memories:
the writes were stored under the listing tenant. The server answers on threads; each request
must carry its own principal."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.e2e

PADDING = "Background notes for the renewal discussion. " * 2000  # ~90 KB of content per write


def test_writes_of_one_tenant_are_never_stored_under_another_listing_at_the_same_time(api, database_url):
    # Given tenant B writing large memories while tenant A lists its own memories in a loop
    writer = api.token("tenant-b", "agent-b", ["agent"])
    lister = api.token("tenant-a", "agent-a", ["agent"])
    stop = threading.Event()
    list_statuses: list[int] = []

    def keep_listing() -> None:
        while not stop.is_set() and len(list_statuses) < 2000:
            list_statuses.append(api.get("/v1/subjects/SUBJ-A/memories", token=lister).status)

    def write(i: int) -> tuple[int, str | None]:
        reply = api.post(
            "/v1/memories",
            {
                "subject_id": f"SUBJ-B-{i % 3}",
                "type": "episode",
                "content": f"tenantbmarker episode {i}: {PADDING}"[:1200],
                "source": {"kind": "customer_claim", "system": "meeting"},
            },
            token=writer,
        )
        memory = (reply.body or {}).get("memory") or {}
        return reply.status, memory.get("id")

    # When both run at once
    listers = [threading.Thread(target=keep_listing) for _ in range(2)]
    for t in listers:
        t.start()
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(write, range(16)))
    finally:
        stop.set()
        for t in listers:
            t.join(timeout=30)

    # Then every write was answered for tenant B, and every stored row is tenant B's
    assert all(status in (200, 201) for status, _ in results), results
    assert set(list_statuses) == {200}
    import psycopg

    ids = [mid for _, mid in results if mid]
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT tenant_id, count(*) FROM memory_records WHERE id = ANY(%s) GROUP BY tenant_id", (ids,)
        ).fetchall()
        crossed = conn.execute(
            "SELECT count(*) FROM memory_records WHERE tenant_id <> 'tenant-b' AND content LIKE 'tenantbmarker%%'"
        ).fetchone()
    assert rows == [("tenant-b", len(set(ids)))]
    assert crossed == (0,)

"""The local system of record takes a pooled connection of its own. Were the retrieval's transaction
still open while it asks (as before session 6), twice the pool's size in concurrent retrievals would
each hold one connection and wait for another until the pool's timeout."""

import threading
import time

import pytest

pytestmark = pytest.mark.e2e
T = "sor-pool"
POOL = 8  # the default of Settings.pool_max_size (`memory serve`)


@pytest.fixture(scope="module")
def container(serve_container):
    # `memory serve`'s default pool; the hang needed at least pool-size concurrent calls
    with serve_container(pool_max_size=POOL) as c:
        yield c


def test_concurrent_retrievals_with_the_local_system_of_record_never_wait_on_each_other(api, container):
    integ = api.token(T, "crm", ["integration"])
    agent = api.token(T, "agent", ["agent"])
    subjects = [f"S-{i}" for i in range(POOL * 2)]
    for s in subjects:
        r = api.post(
            "/v1/memories",
            {
                "subject_id": s,
                "type": "fact",
                "category": "ACCOUNT_PROFILE",
                "slot": "account.plan_tier",
                "content": "Plan tier is Enterprise.",
                "value": {"plan_tier": "enterprise"},
                "source": {"kind": "system_of_record", "system": "crm"},
            },
            token=integ,
        )
        assert r.status in (200, 201), r.body
    results = {}
    barrier = threading.Barrier(len(subjects))

    def go(s):
        barrier.wait()
        t0 = time.monotonic()
        try:
            r = api.post("/v1/retrieve", {"subject_id": s, "query": "plan tier?"}, token=agent)
            results[s] = (r.status, round(time.monotonic() - t0, 2))
        except Exception as exc:  # the test client gives up after 30 s
            results[s] = (type(exc).__name__, round(time.monotonic() - t0, 2))

    threads = [threading.Thread(target=go, args=(s,)) for s in subjects]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    # a hang, not a speed: waiting on the pool ends only at its 30-second timeout
    assert all(st == 200 and sec < 20 for st, sec in results.values()), sorted(results.values(), key=str)

"""The HTTP system-of-record adapter against a real local HTTP server (pytest-httpserver): an answer
is trusted no further than its shape, its size, its time and its address."""

import contextlib
import json
import socket
import threading
import time

import pytest
from werkzeug.wrappers import Response

from agent_memory.adapters.sor.http import MAX_BODY_BYTES, HttpSystemOfRecord
from agent_memory.ports.system_of_record import SystemOfRecordUnavailable

pytestmark = pytest.mark.integration

TICKET_PATH = "/tenants/t/tickets/T-1"


def sor_for(httpserver, **kw):
    kw.setdefault("cache_seconds", 0)
    return HttpSystemOfRecord(httpserver.url_for(""), **kw)


@pytest.mark.parametrize(
    "body",
    [
        [1, 2, 3],
        "just a string",
        {"values": ["plan_tier", "enterprise"]},
        {"values": {"plan_tier": "enterprise"}},  # a bare value instead of {"value", "as_of"}
        {"values": {"plan_tier": None}},
        {"values": {"plan_tier": {"value": {"nested": "object"}}}},
        None,  # a JSON null is not "not found": only a 404 is
    ],
)
def test_a_malformed_account_answer_is_unavailable(httpserver, body):
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_json(body)
    with pytest.raises(SystemOfRecordUnavailable, match="malformed"):
        sor_for(httpserver).account_values("t", "S")


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        "x",
        42,
        {"subject_id": "S", "status": {"name": "open"}},
        None,
        {"status": "open"},  # no subject_id: whose ticket it is cannot be checked
        {"subject_id": None, "status": "open"},
    ],
)
def test_a_malformed_ticket_answer_is_unavailable(httpserver, body):
    httpserver.expect_request(TICKET_PATH).respond_with_json(body)
    with pytest.raises(SystemOfRecordUnavailable, match="malformed"):
        sor_for(httpserver).ticket("t", "S", "T-1")


def test_a_numeric_priority_is_text_and_missing_fields_are_not_invented(httpserver):
    httpserver.expect_request(TICKET_PATH).respond_with_json({"subject_id": "S", "priority": 2})
    t = sor_for(httpserver).ticket("t", "S", "T-1")
    assert t is not None
    assert (t.priority, t.status, t.updated_at) == ("2", None, None)  # never "None", never "now"


def test_the_ticket_is_asked_for_the_subject_and_another_subjects_ticket_is_not_found(httpserver):
    httpserver.expect_request(TICKET_PATH, query_string={"subject_id": "S"}).respond_with_json(
        {"subject_id": "SOMEONE-ELSE", "status": "open"}
    )
    assert sor_for(httpserver).ticket("t", "S", "T-1") is None


def test_a_redirect_is_unavailable_and_never_carries_the_token(httpserver):
    from pytest_httpserver import HTTPServer

    other = HTTPServer(host="127.0.0.1", port=0)
    other.start()
    try:
        other.expect_request("/steal").respond_with_json({"values": {}})
        httpserver.expect_request("/tenants/t/accounts/S").respond_with_response(
            Response(status=302, headers={"Location": other.url_for("/steal")})
        )
        with pytest.raises(SystemOfRecordUnavailable):
            sor_for(httpserver, token="s3cr3t-sor-token").account_values("t", "S")
        assert other.log == []
    finally:
        other.clear()
        other.stop()


def _one_shot_server(reply) -> tuple[socket.socket, int, threading.Event]:
    """A raw HTTP server for one connection: it reads the request, then `reply(conn, stop)` sends
    whatever the test needs. Set the event to stop a slow reply."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    stop = threading.Event()

    def serve() -> None:
        conn, _ = srv.accept()
        conn.recv(65536)
        with contextlib.suppress(OSError):  # the client gave up, as it should
            reply(conn, stop)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1], stop


def _trickle(conn, data: bytes, delay: float, stop: threading.Event) -> None:
    """Send `data` one byte every `delay` seconds: each read is quick, the whole never is."""
    for i in range(len(data)):
        if stop.wait(delay):
            return
        conn.sendall(data[i : i + 1])


def _trickle_server(delay: float, size: int) -> tuple[socket.socket, int, threading.Event]:
    """Answers at once, then sends its body one byte every `delay` seconds."""
    body = b'{"values": {}}' + b" " * (size - 14)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    return _one_shot_server(lambda conn, stop: (conn.sendall(head), _trickle(conn, body, delay, stop)))


def test_the_timeout_bounds_the_whole_answer_not_each_read():
    # Given a server whose every byte arrives within the timeout, but the whole body takes 4 s
    srv, port, stop = _trickle_server(delay=0.2, size=20)
    sor = HttpSystemOfRecord(f"http://127.0.0.1:{port}", timeout_s=0.5, cache_seconds=0)
    t0 = time.monotonic()
    with pytest.raises(SystemOfRecordUnavailable, match="timeout"):
        sor.account_values("t", "S")
    # Then the call gave up near its timeout (a bound, generous for a loaded machine, not a speed test)
    assert time.monotonic() - t0 < 2.0
    stop.set()
    srv.close()


def test_an_answer_larger_than_the_cap_is_unavailable(httpserver):
    big = {"values": {"plan_tier": {"value": "x" * (MAX_BODY_BYTES + 1)}}}
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_data(
        json.dumps(big), content_type="application/json"
    )
    with pytest.raises(SystemOfRecordUnavailable, match="too large"):
        sor_for(httpserver).account_values("t", "S")


@pytest.mark.parametrize("ticket_id", [".", ".."])
def test_dot_segment_ticket_ids_are_not_found_and_never_requested(httpserver, ticket_id):
    assert sor_for(httpserver).ticket("t", "S", ticket_id) is None
    assert httpserver.log == []


def test_the_cache_keeps_tenants_and_subjects_apart(httpserver):
    for t, tier in (("A", "enterprise"), ("B", "basic")):
        httpserver.expect_request(f"/tenants/{t}/accounts/S").respond_with_json(
            {"values": {"plan_tier": {"value": tier, "as_of": "2026-01-01T00:00:00Z"}}}
        )
        httpserver.expect_request(f"/tenants/{t}/tickets/T-1").respond_with_json(
            {"subject_id": "S", "status": f"status-{t}", "updated_at": "2026-01-01T00:00:00Z"}
        )
    sor = HttpSystemOfRecord(httpserver.url_for(""), cache_seconds=300)
    assert sor.account_values("A", "S")["plan_tier"].value == "enterprise"
    assert sor.account_values("B", "S")["plan_tier"].value == "basic"
    assert sor.ticket("A", "S", "T-1").status == "status-A"
    assert sor.ticket("B", "S", "T-1").status == "status-B"


def test_erasure_drops_the_subjects_account_and_tickets_from_the_cache_only():
    from agent_memory.adapters.sor.cache import TtlCache
    from agent_memory.bootstrap import _sor_cache_invalidator

    class Cached:
        name = "cached"
        cache: TtlCache = TtlCache(300)

    sor = Cached()
    keys = [("acct", "A", "S"), ("acct", "B", "S"), ("ticket", "A", "S\x00T-1"), ("ticket", "A", "S2\x00T-1")]
    for k in keys:
        sor.cache.get_or_load(k, lambda: 1)
    assert _sor_cache_invalidator(sor)("A", "S") == 2
    assert sorted(sor.cache._data) == sorted([("acct", "B", "S"), ("ticket", "A", "S2\x00T-1")])


def test_a_load_overtaken_by_an_erasure_is_not_kept_in_the_cache():
    # Given a load of a subject's live values that is still running when the subject is erased
    from agent_memory.adapters.sor.cache import TtlCache

    cache: TtlCache = TtlCache(300)

    def load_while_erased() -> str:
        cache.invalidate(lambda k: k[2] == "S")  # the erasure runs meanwhile
        return "values read before the erasure"

    # When the load finishes
    assert cache.get_or_load(("acct", "A", "S"), load_while_erased) == "values read before the erasure"
    # Then its result is not cached: the next call asks the system of record again
    assert cache.get_or_load(("acct", "A", "S"), lambda: "asked again") == "asked again"


def test_a_number_too_large_for_a_float_is_unavailable_not_infinity(httpserver):
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_data(
        '{"values": {"seats": {"value": 1e400}}}', content_type="application/json"
    )
    with pytest.raises(SystemOfRecordUnavailable, match="malformed"):
        sor_for(httpserver).account_values("t", "S")


def test_an_answer_about_another_ticket_is_not_found(httpserver):
    httpserver.expect_request(TICKET_PATH).respond_with_json(
        {"subject_id": "S", "ticket_id": "T-OTHER", "status": "solved"}
    )
    assert sor_for(httpserver).ticket("t", "S", "T-1") is None


def test_a_load_started_earlier_never_replaces_a_later_one():
    from agent_memory.adapters.sor.cache import TtlCache

    cache: TtlCache = TtlCache(300)

    def slow_old_load() -> str:
        cache.get_or_load(("acct", "A", "S"), lambda: "new")  # a later load finishes first
        return "old"

    assert cache.get_or_load(("acct", "A", "S"), slow_old_load) == "old"
    assert cache.get_or_load(("acct", "A", "S"), lambda: "asked again") == "new"


def _slow_headers_server(delay: float) -> tuple[socket.socket, int, threading.Event]:
    """Sends its status line and headers one byte every `delay` seconds: the part of an answer a
    body deadline cannot see."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"p" * 40 + b"\r\n"
    return _one_shot_server(lambda conn, stop: _trickle(conn, head, delay, stop))


def test_the_timeout_bounds_the_headers_too():
    # Given a server whose headers trickle in for 16 s, each byte well within the socket timeout
    srv, port, stop = _slow_headers_server(delay=0.2)
    sor = HttpSystemOfRecord(f"http://127.0.0.1:{port}", timeout_s=0.5, cache_seconds=0)
    t0 = time.monotonic()
    # When the account is asked for
    with pytest.raises(SystemOfRecordUnavailable, match="within the timeout"):
        sor.account_values("t", "S")
    # Then the caller waited about the timeout, not until the headers ended (a bound, not a speed test)
    assert time.monotonic() - t0 < 2.0
    stop.set()
    srv.close()


def _breaking_sor(httpserver, **kw):
    from agent_memory.adapters.sor.breaker import Breaker

    return sor_for(httpserver, breaker=Breaker(failures=3, cooldown_s=kw.pop("cooldown_s", 60)), **kw)


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_after_three_outages_in_a_row_the_system_of_record_is_not_asked(httpserver, status):
    from agent_memory.adapters.sor.breaker import CircuitOpen

    # Given a system of record that answers every request with a server error
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_data("down", status=status)
    sor = _breaking_sor(httpserver)
    for _ in range(3):
        with pytest.raises(SystemOfRecordUnavailable, match=f"HTTP {status}"):
            sor.account_values("t", "S")
    # When it is asked again, for any subject and for a ticket
    with pytest.raises(CircuitOpen):
        sor.account_values("t", "S")
    with pytest.raises(CircuitOpen):
        sor.ticket("t", "OTHER", "T-1")
    # Then those calls failed at once without a request: the three outages are all it saw
    assert len(httpserver.log) == 3


def test_a_refused_connection_counts_as_an_outage():
    from agent_memory.adapters.sor.breaker import Breaker, CircuitOpen

    # Given a port where nothing listens
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    sor = HttpSystemOfRecord(f"http://127.0.0.1:{port}", cache_seconds=0, breaker=Breaker(failures=2))
    for _ in range(2):
        with pytest.raises(SystemOfRecordUnavailable):
            sor.account_values("t", "S")
    with pytest.raises(CircuitOpen):
        sor.account_values("t", "S")


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, "[1, 2]"), (200, '{"values": {"seats": {"value": 1e400}}}'), (400, "bad"), (403, "no")],
)
def test_answers_that_are_not_outages_never_open_the_breaker(httpserver, status, body):
    # Given a system of record that answers, but not usefully (one subject's odd data, a refusal)
    httpserver.expect_request("/tenants/t/accounts/ODD").respond_with_data(
        body, status=status, content_type="application/json"
    )
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_json({"values": {"seats": {"value": 12}}})
    sor = _breaking_sor(httpserver)
    # When one subject's answers fail many times over
    for _ in range(6):
        with pytest.raises(SystemOfRecordUnavailable):
            sor.account_values("t", "ODD")
    # Then every other subject is still asked and served
    assert sor.account_values("t", "S")["seats"].value == 12
    assert sor.breaker.state == "closed"


def test_after_the_cooldown_one_trial_call_closes_the_breaker_when_the_system_is_back(httpserver):
    from agent_memory.adapters.sor.breaker import CircuitOpen

    # Given a breaker opened by three outages, with a short cooldown
    httpserver.expect_ordered_request("/tenants/t/accounts/S").respond_with_data("down", status=503)
    httpserver.expect_ordered_request("/tenants/t/accounts/S").respond_with_data("down", status=503)
    httpserver.expect_ordered_request("/tenants/t/accounts/S").respond_with_data("down", status=503)
    httpserver.expect_ordered_request("/tenants/t/accounts/S").respond_with_json(
        {"values": {"seats": {"value": 7}}}
    )
    httpserver.expect_ordered_request("/tenants/t/accounts/S").respond_with_json(
        {"values": {"seats": {"value": 8}}}
    )
    sor = _breaking_sor(httpserver, cooldown_s=0.3)
    for _ in range(3):
        with pytest.raises(SystemOfRecordUnavailable):
            sor.account_values("t", "S")
    with pytest.raises(CircuitOpen):
        sor.account_values("t", "S")
    # When the cooldown has passed and the system of record is back
    time.sleep(0.4)
    # Then the trial call is made and served, and the calls after it go through again
    assert sor.account_values("t", "S")["seats"].value == 7
    assert sor.account_values("t", "S")["seats"].value == 8
    assert len(httpserver.log) == 5


def test_calls_that_waited_in_this_process_queue_never_count_as_outages():
    from agent_memory.adapters.sor.breaker import Breaker

    # Given one worker, held by a request whose headers trickle in for seconds
    srv, port, stop = _slow_headers_server(delay=0.2)
    sor = HttpSystemOfRecord(
        f"http://127.0.0.1:{port}",
        timeout_s=0.5,
        cache_seconds=0,
        max_concurrent=1,
        breaker=Breaker(failures=2),
    )
    # When four callers ask at once: one request is sent, three wait for the worker
    errors: list[str] = []
    together = threading.Barrier(4)

    def ask() -> None:
        together.wait()
        try:
            sor.account_values("t", "S")
        except SystemOfRecordUnavailable as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    # Then all four gave up at the timeout, but only the request that was sent counts as an outage
    assert sorted(errors) == ["no answer within the timeout"] + ["no worker free within the timeout"] * 3
    assert sor.breaker.state == "closed"
    stop.set()
    srv.close()
    sor.close()


def test_a_call_that_cannot_be_sent_frees_the_trial(httpserver):
    from agent_memory.adapters.sor.breaker import Breaker, CircuitOpen

    # Given an open breaker whose cooldown has passed, and an adapter that can no longer send
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_data("down", status=503)
    sor = sor_for(httpserver, breaker=Breaker(failures=1, cooldown_s=0.05))
    with pytest.raises(SystemOfRecordUnavailable):
        sor.account_values("t", "S")
    time.sleep(0.1)
    sor.close()
    # When the trial call cannot be sent
    with pytest.raises(SystemOfRecordUnavailable, match="no worker") as raised:
        sor.account_values("t", "S")
    assert not isinstance(raised.value, CircuitOpen)
    # Then the trial's place is free again: the breaker is not stuck half-open for ever
    assert sor.breaker.before()


def test_an_answer_cut_short_is_an_outage():
    from agent_memory.adapters.sor.breaker import Breaker

    # Given a server that promises 200 bytes, sends 20 and hangs up
    srv, port, _ = _one_shot_server(
        lambda conn, stop: conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
            b'{"values": {"seats":'
        )
    )
    sor = HttpSystemOfRecord(f"http://127.0.0.1:{port}", cache_seconds=0, breaker=Breaker(failures=1))
    with pytest.raises(SystemOfRecordUnavailable):
        sor.account_values("t", "S")
    srv.close()
    # Then it counted as an outage (a dying server), not as a malformed answer
    assert sor.breaker.state == "open"


def test_a_server_trickling_its_headers_holds_a_worker_no_longer_than_twice_the_timeout():
    # Given one worker, and a server whose headers trickle in for 16 s
    srv, port, stop = _slow_headers_server(delay=0.2)
    sor = HttpSystemOfRecord(f"http://127.0.0.1:{port}", timeout_s=0.5, cache_seconds=0, max_concurrent=1)
    with pytest.raises(SystemOfRecordUnavailable, match="within the timeout"):
        sor.account_values("t", "S")
    # When the next call comes after twice the timeout (and a margin for a loaded machine)
    time.sleep(1.0)
    with pytest.raises(SystemOfRecordUnavailable) as second:
        sor.account_values("t", "S")
    # Then it got the worker and sent its own request (which this server never answers): the
    # first request's socket was shut at its worker's deadline instead of holding it for 16 s
    assert "no worker free" not in str(second.value)
    stop.set()
    srv.close()
    sor.close()


def test_https_goes_through_the_same_watched_connection(httpserver):
    # Given a plain-HTTP server asked over https: the TLS handshake fails
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_json({"values": {}})
    sor = HttpSystemOfRecord(httpserver.url_for("").replace("http://", "https://"), cache_seconds=0)
    # Then it is an outage of the system of record, not an error of the adapter
    with pytest.raises(SystemOfRecordUnavailable):
        sor.account_values("t", "S")


def _self_signed_localhost(tmp_path):
    """A certificate for localhost, and the file a client trusts it through."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


def test_the_deadline_never_puts_the_token_on_the_wire_in_cleartext(tmp_path, monkeypatch):
    import ssl

    # Given a trusted TLS server that records the raw bytes each client sends after the handshake
    cert_file, key_file = _self_signed_localhost(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert_file, key_file)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            raw = conn.dup()  # the bytes under TLS, as they travel
            try:
                tls = server_ctx.wrap_socket(conn, server_side=True)
                raw.settimeout(0.5)
                data = raw.recv(65536)
                seen.append(data)
                tls.close()
            except OSError:
                pass
            finally:
                raw.close()

    threading.Thread(target=serve, daemon=True).start()
    # and a name lookup so slow that each request's deadline (twice the timeout: 0.1 s) falls
    # somewhere between its connection, its TLS handshake and its request being sent
    real_lookup = socket.getaddrinfo
    delays = iter([0.06 + 0.002 * (i % 25) for i in range(1000)])

    def slow_lookup(*args, **kwargs):
        time.sleep(next(delays))
        return real_lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    port = srv.getsockname()[1]
    sor = HttpSystemOfRecord(
        f"https://localhost:{port}", timeout_s=0.05, cache_seconds=0, token="S3CRET-TOKEN"
    )
    sor.breaker.failures = 10_000  # keep asking: this test is about every request
    # When many requests race their deadline
    for _ in range(50):
        with pytest.raises(SystemOfRecordUnavailable):
            sor.account_values("t", "S")
    time.sleep(1.0)  # let the last workers finish sending
    stop.set()
    srv.close()
    sor.close()
    # Then the server saw requests, and none of them carried the token in cleartext
    assert seen, "no request reached the server"
    assert not [d for d in seen if b"S3CRET-TOKEN" in d]


def test_no_thread_left_to_watch_a_request_is_an_outage_not_an_error(httpserver, monkeypatch):
    # Given a process that can start no more threads (the watch needs one per request)
    httpserver.expect_request("/tenants/t/accounts/S").respond_with_json({"values": {}})
    sor = sor_for(httpserver)
    sor._calls.submit(lambda: None).result()  # the worker itself exists already

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Timer, "start", no_thread)
    # Then a call is 'unavailable' (the retrieval answers from memory), not a RuntimeError (a 500)
    with pytest.raises(SystemOfRecordUnavailable):
        sor.account_values("t", "S")
    sor.close()

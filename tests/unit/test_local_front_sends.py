"""The local front writes each response in one send with Nagle's algorithm off: with the headers
and the body in two sends, a kept-alive client's delayed ACK held every response ~40 ms."""

from __future__ import annotations

import http.client
import socket
from typing import Any

from agent_memory.local.server import LocalApi, make_http_server, serve_in_thread

SECRET = "a-local-development-secret-of-32-bytes-at-least"


class CountingSocket:
    """The accepted socket itself, with its sends and options counted."""

    def __init__(self, real: socket.socket, log: dict[str, list[Any]]) -> None:
        self._real = real
        self._log = log

    def sendall(self, data: bytes) -> None:
        self._log["sends"].append(bytes(data))
        self._real.sendall(data)

    def setsockopt(self, level: int, option: int, value: Any) -> None:
        self._log["options"].append((level, option, value))
        self._real.setsockopt(level, option, value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def served_with_counted_sockets() -> tuple[Any, dict[str, list[Any]]]:
    log: dict[str, list[Any]] = {"sends": [], "options": []}
    server = make_http_server(LocalApi(SECRET, 1024), "127.0.0.1", 0)
    accept = server.get_request

    def counted() -> tuple[Any, Any]:
        conn, addr = accept()
        return CountingSocket(conn, log), addr

    server.get_request = counted  # type: ignore[method-assign]
    serve_in_thread(server)
    return server, log


def test_each_response_on_a_kept_alive_connection_is_one_send_with_nagle_off() -> None:
    # Given the local front, its accepted sockets counted
    server, log = served_with_counted_sockets()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        # When three requests go over one kept-alive connection (a route answer and two refusals)
        for path in ("/v1/nowhere", "/v1/retrieve", "/console/"):
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            assert body  # each answer has a body
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    # Then each response left in exactly one send, status line to body
    assert len(log["sends"]) == 3
    assert all(s.startswith(b"HTTP/1.1 ") for s in log["sends"])
    assert all(s.split(b"\r\n\r\n", 1)[1] for s in log["sends"])
    # And Nagle's algorithm was turned off on the connection
    assert (socket.IPPROTO_TCP, socket.TCP_NODELAY, True) in log["options"]


def test_a_refusal_of_http_server_itself_is_one_send_too() -> None:
    # Given the local front
    server, log = served_with_counted_sockets()
    try:
        # When a request line it cannot parse arrives
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as raw:
            raw.sendall(b"NOT A REQUEST\r\n\r\n")
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
    finally:
        server.shutdown()
        server.server_close()
    # Then the refusal (the API's JSON error body) left in one send
    assert len(log["sends"]) == 1
    assert log["sends"][0] == answer
    assert answer.startswith(b"HTTP/1.1 400") and b'"invalid_request"' in answer

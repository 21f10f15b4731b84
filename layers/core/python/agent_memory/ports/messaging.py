"""Queue and object store ports (SQS and S3 in AWS; the same boto3 code against moto locally)."""

from __future__ import annotations

from typing import Any, Protocol


class Queue(Protocol):
    def send(self, body: dict[str, Any], *, dedupe_id: str | None = None) -> str: ...


class ObjectStore(Protocol):
    def put_json(self, key: str, body: Any) -> None: ...
    def get_json(self, key: str, *, max_bytes: int) -> Any: ...
    def delete_prefix(self, prefix: str) -> int: ...
    def count_prefix(self, prefix: str) -> int: ...
    def delete(self, key: str) -> None: ...


class ObjectTooLarge(Exception):
    pass


class ObjectMissing(Exception):
    pass

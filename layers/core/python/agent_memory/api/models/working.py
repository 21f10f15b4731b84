"""Working memory: an open session's short-lived values (the service's own models)."""

from __future__ import annotations

from agent_memory.services.working import WorkingItemView as WorkingItemView
from agent_memory.services.working import WorkingPutRequest as WorkingPutRequest
from agent_memory.services.working import WorkingSessionView as WorkingSessionView

WORKING_PUT_EXAMPLE = {
    "subject_id": "ACC-CORP-4812",
    "value": {"seats": 50, "price": 41.5},
    "ttl_seconds": 300,
}

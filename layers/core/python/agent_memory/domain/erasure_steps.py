"""The erasure workflow as one ordered list (docs/rules.md, DEL-01).

The CDK stack compiles this list into the Step Functions state machine and
`memory serve` runs the same steps in the same order with the same retries:
a test proves the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int
    interval_seconds: int
    backoff_rate: float


# A database or dependency outage (the step raised `Unavailable`) is waited out far longer than a
# step's own error before the erasure is called failed: about 30 minutes in all, well inside the
# 24-hour deadline. The error name is what Step Functions matches (the Lambda's errorType).
OUTAGE_ERROR = "Unavailable"
OUTAGE_RETRY = RetryPolicy(max_attempts=8, interval_seconds=15, backoff_rate=2.0)


@dataclass(frozen=True)
class ErasureStep:
    name: str
    description: str
    retry: RetryPolicy
    outage_retry: RetryPolicy = OUTAGE_RETRY


STEP_RETRY = RetryPolicy(max_attempts=3, interval_seconds=2, backoff_rate=2.0)
# Verification re-checks with a longer backoff before it declares failure.
VERIFY_RETRY = RetryPolicy(max_attempts=5, interval_seconds=5, backoff_rate=2.0)

ERASURE_STEPS: tuple[ErasureStep, ...] = (
    ErasureStep(
        "resolve_lineage", "find the subject's records and every lineage key derived from them", STEP_RETRY
    ),
    ErasureStep(
        "tombstone", "record content hashes and lineage keys so nothing can be re-admitted", STEP_RETRY
    ),
    ErasureStep("purge_index", "drop embeddings and full-text entries", STEP_RETRY),
    ErasureStep(
        "purge_derived",
        "delete records and derived summaries found by subject or lineage, the subject's working memory "
        "and its sessions' extraction reports",
        STEP_RETRY,
    ),
    ErasureStep("purge_objects", "delete stored transcripts from the object store", STEP_RETRY),
    ErasureStep(
        "invalidate_caches", "drop cached system-of-record values and idempotency replies", STEP_RETRY
    ),
    ErasureStep(
        "verify",
        "query every layer (working memory and extraction reports included); each must report zero",
        VERIFY_RETRY,
    ),
    ErasureStep(
        "receipt", "write the receipt (identifiers and counts only) and erasure_verified", STEP_RETRY
    ),
)

ERASURE_DEADLINE_HOURS = 24


def step_names() -> list[str]:
    return [s.name for s in ERASURE_STEPS]

"""The outbox sweep's resend age and the extraction queue's visibility timeout come from one place
(the extract function's timeout in the function table), and a resend age that would let the sweep
send a second message while the first is in flight is refused at start."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_memory.config import Settings
from agent_memory.functions_spec import EXTRACTION_VISIBILITY_TIMEOUT_S, VISIBILITY_TIMEOUT_FACTOR, by_name


def test_the_default_resend_age_exceeds_the_queues_visibility_timeout() -> None:
    # Given the extraction queue's visibility timeout, derived from the extract function's timeout
    assert by_name("extract").timeout_s * VISIBILITY_TIMEOUT_FACTOR == EXTRACTION_VISIBILITY_TIMEOUT_S
    # Then the sweep waits longer than that before it queues a session again
    assert Settings().extraction_stuck_after_s > EXTRACTION_VISIBILITY_TIMEOUT_S


def test_a_resend_age_within_the_visibility_timeout_is_refused_naming_the_setting() -> None:
    # When an operator sets the resend age below the visibility timeout
    with pytest.raises(ValidationError) as refused:
        Settings(extraction_stuck_after_s=EXTRACTION_VISIBILITY_TIMEOUT_S - 1)
    # Then the service does not start, and says which setting
    assert "extraction_stuck_after_s" in str(refused.value)

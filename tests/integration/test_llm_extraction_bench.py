"""`memory bench extraction --extractor llm` and the LLM extractor's windows, against a local HTTP
server that plays recorded model answers: good, malformed, cut off and refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from werkzeug import Request, Response

from agent_memory.adapters.extractors.llm import LlmExtractor
from agent_memory.domain.extraction import Transcript
from agent_memory.ports.extractor import ExtractionFailed
from memory_bench.extraction_splits import CachedEmbedder, run_llm

pytestmark = pytest.mark.integration


def completion(content: str | None, *, finish: str = "stop", refusal: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-rec",
        "object": "chat.completion",
        "created": 1,
        "model": "recorded",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def candidate(turn: int, quote: str, kind: str = "preference", slot: str | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "category": None,
        "slot": slot,
        "turn": turn,
        "quote": quote,
        "content": quote,
        "confidence": 0.9,
        "flags": [],
    }


GOOD_TEXT = "Please use email for anything routine from now on."
GOOD = json.dumps(
    {
        "candidates": [candidate(0, GOOD_TEXT, slot="preference.contact_channel")],
        "summary": "The customer prefers email.",
        "injection_detected": False,
    }
)
# Recorded answers, chosen by a word in the transcript the request carries.
ANSWERS = {
    "email": completion(GOOD),
    "Berlin": completion("{not json"),  # malformed
    "Slack": completion('{"candidates": [{"type": "prefer', finish="length"),  # cut off
    "Spanish": completion(None, refusal="I can't help with that."),  # refused
}


def labelled(tid: str, text: str, slot: str) -> dict[str, Any]:
    label = {
        "turn": 0,
        "quote": text,
        "outcome": "stored",
        "type": "fact" if slot.startswith("profile.") else "preference",
        "category": "ACCOUNT_PROFILE" if slot.startswith("profile.") else "PREFERENCE",
        "slot": slot,
        "decision": "admitted",
        "reason": None,
        "contains_identifier": False,
    }
    return {
        "id": tid,
        "domain": "crm",
        "channel": "chat",
        "turns": [{"speaker": "customer", "text": text}],
        "labels": [label],
    }


def recorded(request: Request) -> Response:
    sent = json.loads(request.data)["messages"][1]["content"]
    answer = next(a for word, a in ANSWERS.items() if word in sent)
    return Response(json.dumps(answer), content_type="application/json")


def llm(httpserver: Any, **kw: Any) -> LlmExtractor:
    return LlmExtractor(
        model="recorded", api_key="k", base_url=httpserver.url_for("/v1"), max_retries=0, **kw
    )


def test_given_recorded_answers_when_the_bench_runs_then_rejected_sessions_are_counted_and_admit_nothing(
    httpserver: Any, tmp_path: Path
) -> None:
    # Given four labelled sessions, and a server whose answer to each is good, malformed, cut off
    # or refused
    rows = [
        labelled("good", GOOD_TEXT, "preference.contact_channel"),
        labelled("malformed", "Our head office is in Berlin.", "profile.headquarters"),
        labelled("partial", "Slack is the best way to reach me from now on.", "preference.contact_channel"),
        labelled("refused", "Please write to me in Spanish from now on.", "preference.language"),
    ]
    data = tmp_path / "recorded.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(recorded)
    # When the LLM extractor is benchmarked beside the offline ones
    report = run_llm(llm(httpserver), {"recorded": data}, CachedEmbedder(tmp_path / "vectors.npz"))
    # Then each rejected session is counted once, by why it was rejected
    split = report["splits"]["recorded"]
    assert split["llm"]["failed_transcripts"] == 3
    assert sum(report["llm_failures"].values()) == 3
    assert any("refused" in reason for reason in report["llm_failures"])
    # And only the good answer's preference is admitted and counted
    assert split["llm"]["recall"] == 0.25
    assert split["llm"]["counts"]["admitted"] == 1
    assert split["llm"]["admitted_precision"] == 1.0
    # And the offline extractors ran on the same sessions
    assert split["rules"]["counts"]["remember"] == split["learned"]["counts"]["remember"] == 4


def transcript(n: int) -> Transcript:
    turns = [{"speaker": "customer", "text": f"Statement number {i} about email."} for i in range(n)]
    return Transcript(
        session_id="long", subject_id="C-1", occurred_at=datetime(2026, 1, 1, tzinfo=UTC), turns=turns
    )


def window_turns(request: Request) -> list[int]:
    sent = json.loads(request.data)["messages"][1]["content"]
    return [t["turn"] for t in json.loads(sent.removeprefix("<transcript>").removesuffix("</transcript>"))]


def test_given_a_long_transcript_when_extracted_then_overlapping_windows_are_read_and_merged(
    httpserver: Any,
) -> None:
    # Given a ten-turn transcript, windows of four turns overlapping by one, and a model that
    # finds the first and last turn of every window it is shown, and a turn it was not shown
    seen: list[list[int]] = []

    def answer(request: Request) -> Response:
        turns = window_turns(request)
        seen.append(turns)
        found = [
            candidate(t, f"Statement number {t} about email", slot="preference.contact_channel")
            for t in (turns[0], turns[-1])
        ]
        found.append(
            candidate(9 if turns[0] == 0 else 0, "Statement number", slot="preference.contact_channel")
        )
        body = {"candidates": found, "summary": f"Window from {turns[0]}.", "injection_detected": False}
        return Response(json.dumps(completion(json.dumps(body))), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(answer)
    # When it is extracted
    result = llm(httpserver, chunk_turns=4, overlap_turns=1).extract(transcript(10))
    # Then three windows were sent, each sharing one turn with the one before
    assert seen == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    # And a statement found in two windows is kept once, and none outside its window is kept
    assert [c.span.turn for c in result.candidates] == [0, 3, 6, 9]
    assert result.summary is not None and "Window from 0." in result.summary.content


def test_given_one_window_answered_badly_when_extracted_then_the_whole_session_is_rejected(
    httpserver: Any,
) -> None:
    # Given a model that answers the second window with malformed output
    calls: list[int] = []

    def answer(request: Request) -> Response:
        calls.append(window_turns(request)[0])
        if len(calls) == 2:
            return Response(json.dumps(completion("{broken")), content_type="application/json")
        body = {"candidates": [], "summary": "", "injection_detected": False}
        return Response(json.dumps(completion(json.dumps(body))), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(answer)
    # When it is extracted / Then nothing of it is kept: the session is rejected with a reason
    with pytest.raises(ExtractionFailed, match="rejected"):
        llm(httpserver, chunk_turns=4, overlap_turns=1).extract(transcript(10))


def test_given_an_overlap_as_long_as_the_window_then_the_extractor_is_refused(httpserver: Any) -> None:
    # When the windows could never move forward / Then the configuration is refused at once
    with pytest.raises(ValueError, match="overlap_turns"):
        llm(httpserver, chunk_turns=4, overlap_turns=4)

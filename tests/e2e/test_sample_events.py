"""Local parity: every sample event in events/ goes through its handler against the
embedded database and moto, as `sam local invoke` would."""

import base64
import json
from pathlib import Path

import pytest

from agent_memory.api.http import INTERNAL_ERROR_METRIC
from agent_memory.functions_spec import FUNCTIONS, by_name, load_handler_module
from agent_memory.local.lambda_context import LocalLambdaContext
from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e
EVENTS = Path(__file__).resolve().parents[2] / "events"
SAMPLE_SECRET = "sample-events-secret-not-for-production-0000"


def invoke(name: str, event: dict):
    return load_handler_module(by_name(name)).lambda_handler(event, LocalLambdaContext(function_name=name))


def load(path: str, **substitutions: str) -> dict:
    text = (EVENTS / path).read_text()
    for placeholder, value in substitutions.items():
        text = text.replace(placeholder, value)
    return json.loads(text)


def test_every_function_has_at_least_one_sample_event():
    for spec in FUNCTIONS:
        assert list((EVENTS / spec.name).glob("*.json")), f"no sample event for {spec.name}"


def test_every_api_sample_event_runs_through_its_handler(container, local_aws):
    # Given the state the samples refer to (a memory, a queued session, an erasure)
    created = invoke("memories", load("memories/post_system_of_record_fact.json"))
    assert created["statusCode"] == 201
    preference = invoke("memories", load("memories/post_customer_preference.json"))
    pref_id = json.loads(preference["body"])["memory"]["id"]
    pending = invoke(
        "memories",
        {
            **load("memories/post_customer_preference.json"),
            "body": json.dumps(
                {
                    "subject_id": "ACC-CORP-4812",
                    "type": "fact",
                    "category": "CONTRACT_COMMERCIAL",
                    "slot": "contract.discount",
                    "content": "Customer says 15% off was agreed.",
                    "source": {"kind": "customer_claim"},
                }
            ),
        },
    )
    pending_id = json.loads(pending["body"])["memory"]["id"]
    follow_up = invoke(
        "memories",
        {
            **load("memories/post_customer_preference.json"),
            "body": json.dumps(
                {
                    "subject_id": "ACC-CORP-4812",
                    "type": "commitment",
                    "content": "I will send the revised SOW by Friday.",
                    "value": {"owner": "agent-7", "due": "Friday"},
                    "source": {"kind": "agent_inference"},
                }
            ),
        },
    )
    commitment_id = json.loads(follow_up["body"])["memory"]["id"]

    answers = {}
    for path in sorted(EVENTS.glob("*/*.json")):
        name = path.parent.name
        if by_name(name).trigger != "api":
            continue
        mem_id = pending_id if "approve" in path.name or "reject" in path.name else pref_id
        mem_id = commitment_id if "commitment" in path.name else mem_id
        event = load(f"{name}/{path.name}", mem_sample=mem_id)
        result = invoke(name, event)
        answers[f"{name}/{path.name}"] = result["statusCode"]
        assert result["statusCode"] < 500, (path, result)
    assert answers["memories/get_memory.json"] == 200
    assert answers["review/approve.json"] == 200
    assert answers["memories/close_commitment.json"] == 200
    assert answers["memories/confirm_revalidation.json"] == 200
    assert answers["retrieve/renewal_question.json"] == 200
    assert answers["session_close/close_meeting.json"] == 202
    assert answers["erasure/request.json"] == 202
    assert answers["memories/request_deletion.json"] == 200
    assert answers["erasure/subject_export.json"] == 200


def test_the_extract_sample_runs_after_its_session_was_queued(container, local_aws):
    invoke("session_close", load("session_close/close_meeting.json"))
    poller = QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")
    result = invoke("extract", load("extract/sqs_batch.json"))
    assert result == {"batchItemFailures": []}
    status = invoke("session_close", load("session_close/get_status.json"))
    assert json.loads(status["body"])["status"] == "processed"
    poller.drain()  # the real queued copy is a redelivery now: processed once, skipped


def test_the_erasure_step_purge_and_authorizer_samples(container, monkeypatch):
    era = invoke("erasure", load("erasure/request.json", **{"CUST-991": "CUST-STEP"}))
    erasure_id = json.loads(era["body"])["erasure_id"]
    step = invoke(
        "erasure_step",
        load("erasure_step/resolve_lineage.json", era_sample=erasure_id, **{"CUST-991": "CUST-STEP"}),
    )
    assert step["step"] == "resolve_lineage"
    purge = invoke("purge", load("purge/dry_run.json"))
    assert purge["dry_run"] is True
    assert invoke("purge", load("purge/nightly_schedule.json"))["dry_run"] is False
    monkeypatch.setenv("MEMORY_JWT_SECRET", SAMPLE_SECRET)
    policy = invoke("authorizer", load("authorizer/token.json"))
    assert (
        policy["context"]["tenant_id"] == "acme"
        and policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    )
    bad = load("authorizer/token.json")
    bad["authorizationToken"] = bad["authorizationToken"][:-4] + "AAAA"
    with pytest.raises(Exception, match="Unauthorized"):
        invoke("authorizer", bad)


def test_retrievals_and_refusals_are_metrics_an_operator_can_alarm_on(
    container, capsys, monkeypatch, emitted_metrics
):
    # Given metrics switched on (the suite runs with them off), the retrieval sample, the same
    # sample with a bad body, and the policy sample sent by an agent
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    good = load("retrieve/renewal_question.json")
    bad = {**good, "body": json.dumps({"subject_id": "ACC-1", "top_k": 0})}
    as_agent = load("policy/show.json")
    as_agent["requestContext"]["authorizer"]["roles"] = "agent"
    # When each runs through its handler
    capsys.readouterr()
    assert invoke("retrieve", good)["statusCode"] == 200
    served = emitted_metrics(capsys.readouterr().out)
    assert invoke("retrieve", bad)["statusCode"] == 422
    assert invoke("policy", as_agent)["statusCode"] == 403
    refused = emitted_metrics(capsys.readouterr().out)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(container.broker, "retrieve", broken)
    assert invoke("retrieve", good)["statusCode"] == 500
    failed = emitted_metrics(capsys.readouterr().out)
    # Then a retrieval reports its latency, database time, candidates and what it returned
    assert {"RetrievalLatency", "RetrievalDbLatency", "RetrievalCandidates", "RetrievalReturned"} <= served
    # And each refusal is a metric named by its code
    assert {"RequestRefused_invalid_request", "RequestRefused_forbidden"} <= refused
    # And a handled 500, which Lambda's own Errors metric never sees, is counted for its alarm
    assert INTERNAL_ERROR_METRIC in failed


def test_unstorable_values_are_refused_wherever_api_gateway_puts_them(container):
    # Given events as API Gateway delivers them: a base64-encoded body, decoded path parameters,
    # multi-value query parameters, each carrying a NUL
    retrieve = load("retrieve/renewal_question.json")
    encoded = {
        **retrieve,
        "isBase64Encoded": True,
        "body": base64.b64encode(json.dumps({"subject_id": "ACC-1", "query": "a\x00b"}).encode()).decode(),
    }
    by_path = load("memories/get_memory.json")
    by_path["pathParameters"] = {"memory_id": "mem_\x00"}
    by_query = load("memories/list_subject.json")
    by_query["queryStringParameters"] = {"status": "active"}
    by_query["multiValueQueryStringParameters"] = {"status": ["active"], "cursor": ["c\x00"]}
    # When each runs through its handler
    # Then each is a 422 naming where the value was, never a 500
    for name, event, field in (
        ("retrieve", encoded, "query"),
        ("memories", by_path, "memory_id"),
        ("memories", by_query, "cursor.0"),
    ):
        reply = invoke(name, event)
        assert reply["statusCode"] == 422, reply
        assert json.loads(reply["body"])["error"]["field"] == field

"""The erasure state machine compiled from ERASURE_STEPS, and the alarms."""

from __future__ import annotations

from typing import Any

import pytest
from cfn_template import refs_in, state_machine_definition, task_order

from agent_memory.domain.erasure_steps import ERASURE_DEADLINE_HOURS, ERASURE_STEPS, step_names
from agent_memory.functions_spec import FUNCTIONS

pytestmark = pytest.mark.infra


def test_state_machine_runs_the_steps_in_the_core_order(synthesized: Any) -> None:
    definition = state_machine_definition(synthesized.raw)
    # "fail" is the failure-recording call of the error path, not a step of the workflow.
    assert [step for step in task_order(definition) if step != "fail"] == step_names()


def test_each_step_invokes_erasure_step_with_the_identifiers(synthesized: Any) -> None:
    (machine,) = synthesized.resources("AWS::StepFunctions::StateMachine").values()
    spec = next(s for s in FUNCTIONS if s.trigger == "stepfunctions")
    functions = synthesized.resources("AWS::Lambda::Function")
    invoked = {
        functions[i]["Properties"]["Handler"]
        for i in refs_in(machine["Properties"]["DefinitionString"])
        if i in functions
    }
    assert invoked == {spec.lambda_handler}
    states = state_machine_definition(synthesized.raw)["States"]
    for step in ERASURE_STEPS:
        payload = states[step.name]["Parameters"]
        assert payload == {
            "erasure_id.$": "$.erasure_id",
            "tenant_id.$": "$.tenant_id",
            "subject_id.$": "$.subject_id",
            "step": step.name,
        }


def test_each_step_retries_with_its_policy_then_records_the_failure(synthesized: Any) -> None:
    states = state_machine_definition(synthesized.raw)["States"]
    for step in ERASURE_STEPS:
        outage, retry = states[step.name]["Retry"]
        # RetryPolicy counts attempts (like the local runner); Step Functions counts retries.
        assert outage == {
            "ErrorEquals": ["Unavailable"],
            "MaxAttempts": step.outage_retry.max_attempts - 1,
            "IntervalSeconds": step.outage_retry.interval_seconds,
            "BackoffRate": step.outage_retry.backoff_rate,
        }
        assert retry == {
            "ErrorEquals": ["States.ALL"],
            "MaxAttempts": step.retry.max_attempts - 1,
            "IntervalSeconds": step.retry.interval_seconds,
            "BackoffRate": step.retry.backoff_rate,
        }
        (catch,) = states[step.name]["Catch"]
        marker = states[catch["Next"]]
        assert marker["Parameters"]["failed_step"] == step.name
        assert states[marker["Next"]]["Parameters"]["step"] == "fail"
        assert states[states[marker["Next"]]["Next"]]["Type"] == "Fail"


def test_verify_loops_with_a_wait_and_is_bounded(synthesized: Any) -> None:
    config = synthesized.stack.config
    states = state_machine_definition(synthesized.raw)["States"]
    choice = states[states["verify"]["Next"]]
    assert choice["Type"] == "Choice"
    clean_branch, retry_branch = choice["Choices"]
    assert clean_branch["Next"] == "receipt"
    wait = states[retry_branch["Next"]]
    assert wait["Type"] == "Wait" and wait["Seconds"] == config.erasure_verify_wait_seconds
    assert states[states[wait["Next"]]["Next"]] is states["verify"]
    assert retry_branch["NumericLessThan"] == config.erasure_verify_rounds - 1
    default = states[choice["Default"]]
    assert default["Parameters"]["failed_step"] == "verify"


def test_state_machine_is_traced_logged_and_bounded_by_the_deadline(synthesized: Any) -> None:
    (machine,) = synthesized.resources("AWS::StepFunctions::StateMachine").values()
    props = machine["Properties"]
    assert props["TracingConfiguration"] == {"Enabled": True}
    assert props["LoggingConfiguration"]["Level"] == "ALL"
    assert props["LoggingConfiguration"]["IncludeExecutionData"] is False
    assert state_machine_definition(synthesized.raw)["TimeoutSeconds"] == ERASURE_DEADLINE_HOURS * 3600


def alarms(synthesized: Any) -> list[dict[str, Any]]:
    return [a["Properties"] for a in synthesized.resources("AWS::CloudWatch::Alarm").values()]


def test_alarm_on_dlq_depth(synthesized: Any) -> None:
    queues = synthesized.resources("AWS::SQS::Queue")
    dlq_id = next(k for k, q in queues.items() if "RedrivePolicy" not in q["Properties"])
    found = [a for a in alarms(synthesized) if a.get("MetricName") == "ApproximateNumberOfMessagesVisible"]
    assert len(found) == 1
    assert dlq_id in refs_in(found[0]["Dimensions"])
    assert found[0]["Threshold"] == 1


def test_alarms_on_erasure_failures_and_missed_deadlines(synthesized: Any) -> None:
    by_metric = {a.get("MetricName"): a for a in alarms(synthesized)}
    assert by_metric["ExecutionsFailed"]["Namespace"] == "AWS/States"
    assert by_metric["ExecutionsTimedOut"]["Namespace"] == "AWS/States"
    deadline = by_metric["ErasureDeadlineMissed"]
    assert deadline["Namespace"] == "AgentMemory"
    # Powertools Metrics writes a `service` dimension on every metric.
    assert deadline["Dimensions"] == [{"Name": "service", "Value": "agent-memory"}]


def test_alarm_on_api_calls_that_end_in_a_500(synthesized: Any) -> None:
    # A handled 500 never reaches Lambda's Errors metric: the API counts it itself, under the
    # name the alarm watches.
    from agent_memory.api.http import INTERNAL_ERROR_METRIC

    found = [a for a in alarms(synthesized) if a.get("MetricName") == INTERNAL_ERROR_METRIC]
    assert len(found) == 1
    assert found[0]["Namespace"] == "AgentMemory" and found[0]["Threshold"] == 1
    assert found[0]["Dimensions"] == [{"Name": "service", "Value": "agent-memory"}]


def test_alarm_on_retrievals_without_the_system_of_record(synthesized: Any) -> None:
    # Retrieval still answers (200) while the system of record is down, so only this metric,
    # under the name the retrieve handler emits, tells an operator facts go out unconfirmed.
    from agent_memory.observability import SOR_UNAVAILABLE_METRIC

    found = [a for a in alarms(synthesized) if a.get("MetricName") == SOR_UNAVAILABLE_METRIC]
    assert len(found) == 1
    assert found[0]["Namespace"] == "AgentMemory" and found[0]["Statistic"] == "Sum"
    assert found[0]["Dimensions"] == [{"Name": "service", "Value": "agent-memory"}]
    assert (found[0]["Threshold"], found[0]["EvaluationPeriods"], found[0]["Period"]) == (10, 2, 300)


def test_alarm_on_database_connections_pinned_by_the_proxy(synthesized: Any) -> None:
    # A pinned connection cannot be shared: with Lambda's concurrency that exhausts the database.
    (proxy_id,) = synthesized.resources("AWS::RDS::DBProxy")
    found = [
        a for a in alarms(synthesized) if a.get("MetricName") == "DatabaseConnectionsCurrentlySessionPinned"
    ]
    assert len(found) == 1
    assert found[0]["Namespace"] == "AWS/RDS"
    assert [d["Name"] for d in found[0]["Dimensions"]] == ["ProxyName"]
    assert proxy_id in refs_in(found[0]["Dimensions"])
    assert found[0]["Threshold"] == 1


def test_alarm_on_retrieval_p95_over_budget(synthesized: Any) -> None:
    retrieve = next(s for s in FUNCTIONS if s.name == "retrieve")
    functions = synthesized.resources("AWS::Lambda::Function")
    retrieve_id = next(
        k for k, v in functions.items() if v["Properties"]["Handler"] == retrieve.lambda_handler
    )
    found = [
        a
        for a in alarms(synthesized)
        if a.get("MetricName") == "Duration" and retrieve_id in refs_in(a["Dimensions"])
    ]
    assert len(found) == 1
    assert found[0]["ExtendedStatistic"] == "p95"
    assert found[0]["Threshold"] == synthesized.stack.config.retrieval_p95_budget_ms


def test_alarm_on_errors_of_every_function(synthesized: Any) -> None:
    functions = synthesized.resources("AWS::Lambda::Function")
    handlers = {k: v["Properties"]["Handler"] for k, v in functions.items()}
    watched = {
        handlers[next(iter(refs_in(a["Dimensions"])))]
        for a in alarms(synthesized)
        if a.get("MetricName") == "Errors"
    }
    assert {s.lambda_handler for s in FUNCTIONS} <= watched


def test_every_alarm_notifies_the_topic(synthesized: Any) -> None:
    (topic_id,) = synthesized.resources("AWS::SNS::Topic")
    for alarm in alarms(synthesized):
        assert refs_in(alarm["AlarmActions"]) == {topic_id}


def test_alarm_on_each_retrieval_stage_over_the_seeds_budget(synthesized: Any) -> None:
    # Seed 000: 80 ms p95 in all, 45 ms in the database, 15 ms to serialize; the retrieve handler
    # emits each stage under RetrievalStage_<stage>, and an alarm watches each budgeted one.
    from agent_memory.domain.policy import profile

    budgets = profile(synthesized.stack.config.latency_budget_preset).latency_budget_ms
    assert budgets == {"total": 80, "db": 45, "serialize": 15}
    found = {
        a["MetricName"]: a
        for a in alarms(synthesized)
        if a.get("MetricName", "").startswith("RetrievalStage_")
    }
    assert set(found) == {f"RetrievalStage_{stage}" for stage in budgets}
    for stage, budget in budgets.items():
        alarm = found[f"RetrievalStage_{stage}"]
        assert alarm["Threshold"] == budget and alarm["ExtendedStatistic"] == "p95"
        assert alarm["Namespace"] == "AgentMemory"
        assert alarm["Dimensions"] == [{"Name": "service", "Value": "agent-memory"}]


def _strings(node: Any) -> str:
    """The literal text of a CloudFormation value (Fn::Join parts and plain strings)."""
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "".join(_strings(n) for n in node)
    if isinstance(node, dict):
        return "".join(_strings(v) for v in node.values())
    return ""


def test_a_dashboard_shows_the_operating_figures_per_stage_and_per_tenant(synthesized: Any) -> None:
    from agent_memory.services.stats import TENANT_GAUGES

    # Given the stack's one dashboard
    (dashboard,) = synthesized.resources("AWS::CloudWatch::Dashboard").values()
    body = _strings(dashboard["Properties"]["DashboardBody"])
    # Then it graphs each retrieval stage, the stale rate, decisions and refusals the service emits
    for metric in (
        "RetrievalStage_db",
        "RetrievalStage_total",
        "RetrievalExcluded_stale_vs_live",
        "decision_rejected",
        "RequestRefused_forbidden",
        "RequestRefused_rate_limited",
        "Purge_expired",
    ):
        assert metric in body, metric
    # And every figure the nightly run publishes per tenant, by a search over the tenant dimension
    for name, _, _ in TENANT_GAUGES:
        assert f'MetricName=\\"{name}\\"' in body or f'MetricName="{name}"' in body, name
    assert "tenant_id" in body

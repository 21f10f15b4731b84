"""The erasure workflow, compiled from `agent_memory.domain.erasure_steps.ERASURE_STEPS`.

One LambdaInvoke task per step, in list order, each invoking the erasure_step
function with {erasure_id, tenant_id, subject_id, step} and retrying with the
step's RetryPolicy. `RetryPolicy.max_attempts` counts attempts (the local
runner tries a step that many times) while Step Functions' MaxAttempts counts
retries after the first, hence `max_attempts - 1`. `verify` is a loop: when
its result is not `clean`, wait and verify again, a bounded number of rounds,
then fail; the workflow is never "done" unverified. A step that exhausts its
retries is recorded through the same function ({"step": "fail",
"failed_step", "error"}) and the execution ends in a Fail state (alarmed);
the whole execution times out at the erasure deadline.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks

from agent_memory.domain.erasure_steps import ERASURE_DEADLINE_HOURS, ERASURE_STEPS, OUTAGE_ERROR, ErasureStep
from constructs import Construct
from infra.config import DeploymentConfig

VERIFY_STEP = "verify"
# The field of the verify step's result that says every layer reported zero.
VERIFY_CLEAN_FIELD = "clean"
# The erasure_step payload that records a terminal failure (functions/erasure_step/handler.py).
FAIL_STEP = "fail"


class ErasureWorkflow(Construct):
    """Exposes `state_machine`, `log_group` and `task_state_names` (in execution order)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        step_function: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        if VERIFY_STEP not in [s.name for s in ERASURE_STEPS]:
            raise ValueError("ERASURE_STEPS has no 'verify' step; the workflow must never finish unverified")
        self.step_function = step_function
        failed = sfn.Fail(
            self,
            "erasure_failed",
            error="ErasureFailed",
            cause="an erasure step failed after its retries, or verification never came back clean",
        )
        record_failure = self._invoke(
            "record_failure",
            {
                "step": FAIL_STEP,
                "failed_step": sfn.JsonPath.string_at("$.failure.failed_step"),
                "error": sfn.JsonPath.string_at("$.failure.error"),
            },
            result_path="$.failure.recorded",
            comment="mark the erasure request failed (identifiers and the error type only)",
        )
        record_failure.add_retry(
            errors=[sfn.Errors.ALL], max_attempts=2, interval=Duration.seconds(2), backoff_rate=2.0
        )
        # Recording is best effort: the Fail state (and its alarm) must be reached either way.
        record_failure.add_catch(failed, errors=[sfn.Errors.ALL], result_path="$.failure.record_error")
        record_failure.next(failed)
        not_verified = sfn.Pass(
            self,
            "verify_not_clean",
            parameters={"failed_step": VERIFY_STEP, "error": "ErasureNotVerified"},
            result_path="$.failure",
        )
        not_verified.next(record_failure)
        start = sfn.Pass(
            self,
            "start_verification_rounds",
            result=sfn.Result.from_object({"round": 0}),
            result_path="$.verification",
        )
        self.task_state_names: list[str] = []
        chain: sfn.Chain = sfn.Chain.start(start)
        verify_task: sfn.TaskStateBase | None = None
        after_verify: list[sfn.IChainable] = []
        for step in ERASURE_STEPS:
            task = self._task(step, record_failure)
            self.task_state_names.append(step.name)
            if verify_task is not None:
                after_verify.append(task)
            else:
                chain = chain.next(task)
            if step.name == VERIFY_STEP:
                verify_task = task
        assert verify_task is not None
        # After verify: clean -> the remaining steps -> succeed; not clean -> wait and retry, bounded.
        rest = sfn.Chain.start(after_verify[0]) if after_verify else None
        for task in after_verify[1:]:
            rest = rest.next(task) if rest is not None else None
        done = sfn.Succeed(self, "erasure_verified")
        rest = rest.next(done) if rest is not None else sfn.Chain.start(done)
        wait = sfn.Wait(
            self,
            "verify_wait",
            time=sfn.WaitTime.duration(Duration.seconds(config.erasure_verify_wait_seconds)),
        )
        next_round = sfn.Pass(
            self,
            "verify_next_round",
            parameters={"round.$": "States.MathAdd($.verification.round, 1)"},
            result_path="$.verification",
        )
        clean = f"$.steps.{VERIFY_STEP}.{VERIFY_CLEAN_FIELD}"
        decide = (
            sfn.Choice(self, "verify_clean")
            .when(
                sfn.Condition.and_(
                    sfn.Condition.is_present(clean), sfn.Condition.boolean_equals(clean, True)
                ),
                rest,
            )
            .when(
                sfn.Condition.number_less_than("$.verification.round", config.erasure_verify_rounds - 1),
                wait.next(next_round).next(verify_task),
            )
            .otherwise(not_verified)
        )
        chain = chain.next(decide)

        self.log_group = logs.LogGroup(
            self, "Logs", retention=logs.RetentionDays.SIX_MONTHS, removal_policy=RemovalPolicy.RETAIN
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            comment="Agent Memory subject erasure (compiled from ERASURE_STEPS)",
            definition_body=sfn.DefinitionBody.from_chainable(chain),
            state_machine_type=sfn.StateMachineType.STANDARD,
            timeout=Duration.hours(ERASURE_DEADLINE_HOURS),
            tracing_enabled=True,
            # Execution data carries subject ids: log events, not payloads.
            logs=sfn.LogOptions(
                destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
        )

    def _invoke(
        self, state_name: str, extra: dict[str, object], *, result_path: str, comment: str
    ) -> tasks.LambdaInvoke:
        return tasks.LambdaInvoke(
            self,
            state_name,
            comment=comment,
            lambda_function=self.step_function,
            payload=sfn.TaskInput.from_object(
                {
                    "erasure_id": sfn.JsonPath.string_at("$.erasure_id"),
                    "tenant_id": sfn.JsonPath.string_at("$.tenant_id"),
                    "subject_id": sfn.JsonPath.string_at("$.subject_id"),
                    **extra,
                }
            ),
            payload_response_only=True,
            result_path=result_path,
            # Retries come from the step's own policy, including for Lambda service errors.
            retry_on_service_exceptions=False,
        )

    def _task(self, step: ErasureStep, record_failure: sfn.IChainable) -> tasks.LambdaInvoke:
        task = self._invoke(
            step.name, {"step": step.name}, result_path=f"$.steps.{step.name}", comment=step.description
        )
        # Step Functions takes the first retrier whose errors match: the outage one comes first.
        task.add_retry(
            errors=[OUTAGE_ERROR],
            max_attempts=step.outage_retry.max_attempts - 1,
            interval=Duration.seconds(step.outage_retry.interval_seconds),
            backoff_rate=step.outage_retry.backoff_rate,
        )
        task.add_retry(
            errors=[sfn.Errors.ALL],
            max_attempts=step.retry.max_attempts - 1,
            interval=Duration.seconds(step.retry.interval_seconds),
            backoff_rate=step.retry.backoff_rate,
        )
        # Remember which step failed and the error type (never the cause: it may quote data).
        mark = sfn.Pass(
            self,
            f"{step.name}_failed",
            parameters={"failed_step": step.name, "error.$": "$.error.Error"},
            result_path="$.failure",
        )
        task.add_catch(mark.next(record_failure), errors=[sfn.Errors.ALL], result_path="$.error")
        return task

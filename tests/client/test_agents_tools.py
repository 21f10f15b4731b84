"""The Agents SDK tools run by the SDK's own Runner with a scripted model (no network, no key)
against the real local HTTP front: the model calls recall and remember, the tools answer through
the API, and the model sees what they returned."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_memory_client import AsyncMemoryClient
from agent_memory_client.agents_tools import MEMORY_TOOLS, MemoryContext, recall, remember
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

pytestmark = pytest.mark.e2e

SUBJECT = "agents.customer@example.com"
TENANT = "agents-tests"


def tool_call(call_id: str, name: str, **arguments: Any) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", id=f"fc_{call_id}", call_id=call_id, name=name, arguments=json.dumps(arguments)
    )


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id="msg_1",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """A model that answers each turn from a script, and keeps what it was shown."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = list(script)
        self.seen_inputs: list[Any] = []
        self.seen_tools: list[list[str]] = []

    async def get_response(self, system_instructions, input, model_settings, tools, *args, **kwargs):
        self.seen_inputs.append(input)
        self.seen_tools.append([t.name for t in tools])
        return ModelResponse(output=self.script.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


def tool_outputs(model: ScriptedModel) -> dict[str, str]:
    """The function-call outputs the Runner fed back to the model, by call id."""
    last = model.seen_inputs[-1]
    return {item["call_id"]: item["output"] for item in last if item.get("type") == "function_call_output"}


@pytest.fixture(scope="module")
def seeded(api) -> str:
    token = api.token(TENANT, "int-1", ["integration"], clearance="confidential")
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.plan_tier",
            "content": "On the enterprise plan with premium support.",
            "source": {"kind": "system_of_record", "system": "crm", "reference": "ACC-31"},
        },
        token=token,
    )
    assert reply.status == 201, reply.body
    return reply.body["memory"]["id"]


def run_agent(api, model: ScriptedModel, roles: list[str], subject: str = SUBJECT) -> Any:
    token = api.token(TENANT, f"{roles[0]}-1", roles, clearance="confidential", subjects=[subject])
    agent = Agent(
        name="support-copilot", instructions="Answer the customer.", tools=MEMORY_TOOLS, model=model
    )

    async def main() -> Any:
        async with AsyncMemoryClient(api.base, token=token) as memory:
            context = MemoryContext(memory=memory, subject_id=subject, session_id="agents-sess-1")
            return await Runner.run(
                agent,
                "Which plan am I on? And please email me.",
                context=context,
                run_config=RunConfig(tracing_disabled=True),
            )

    return asyncio.run(main())


def test_the_runner_calls_recall_and_remember_through_the_api(api, seeded):
    # Given a scripted model: recall, then remember a preference, then answer
    model = ScriptedModel(
        [
            [tool_call("c1", "recall", query="Which plan is the customer on?")],
            [
                tool_call(
                    "c2",
                    "remember",
                    type="preference",
                    content="Prefers to be contacted by email.",
                    slot="preference.contact_channel",
                    category=None,
                )
            ],
            [message("You are on the enterprise plan; I will email you.")],
        ]
    )
    # When the SDK's Runner runs the agent with the memory tools
    result = run_agent(api, model, ["agent"])
    # Then the model was offered both tools and the run ended with its answer
    assert model.seen_tools[0] == ["recall", "remember"]
    assert result.final_output == "You are on the enterprise plan; I will email you."
    # And recall's output, fed back to the model, was the service's context with the seeded fact
    outputs = tool_outputs(model)
    assert f'<retrieved_memory subject="{SUBJECT}">' in outputs["c1"]
    assert f"[{seeded}]" in outputs["c1"]
    # And remember reported the gateway's decision on a record stored for the context's subject
    decision = json.loads(outputs["c2"])
    assert decision["decision"] == "admitted" and decision["status"] == "active"
    token = api.token(TENANT, "agent-1", ["agent"], clearance="confidential")
    stored = api.get(f"/v1/memories/{decision['memory_id']}", token=token).body
    assert stored["subject_id"] == SUBJECT and stored["session_id"] == "agents-sess-1"
    assert stored["authority"] == "customer_claim"


def test_a_refusal_reaches_the_model_as_the_apis_error(api):
    # Given a model that calls recall with an auditor's token (may not read context)
    model = ScriptedModel(
        [[tool_call("c1", "recall", query="anything")], [message("I could not look that up.")]]
    )
    # When the Runner runs it
    result = run_agent(api, model, ["auditor"])
    # Then the tool output the model saw is the API's 403, and the run still ended normally
    refusal = json.loads(tool_outputs(model)["c1"])["error"]
    assert refusal["status"] == 403 and refusal["code"] == "forbidden" and refusal["request_id"]
    assert result.final_output == "I could not look that up."


def test_a_commercial_term_waits_for_approval_and_the_model_is_told(api):
    model = ScriptedModel(
        [
            [
                tool_call(
                    "c1",
                    "remember",
                    type="fact",
                    content="Was promised a 20% discount on renewal.",
                    slot="contract.discount",
                    category="CONTRACT_COMMERCIAL",
                )
            ],
            [message("A colleague will confirm the discount.")],
        ]
    )
    # When the model proposes a commercial term
    run_agent(api, model, ["agent"])
    # Then the gateway held it for a reviewer, and that is what the model was told
    decision = json.loads(tool_outputs(model)["c1"])
    assert decision["decision"] == "pending_approval" and decision["status"] == "pending_approval"


def test_the_tools_take_no_subject_session_or_source_from_the_model(api):
    # Given the tools' parameter schemas, as the SDK sends them to the model
    for tool in (recall, remember):
        properties = tool.params_json_schema["properties"]
        # Then none lets the model name whose memory, which session or which source
        assert {"subject_id", "session_id", "ticket_id", "source", "source_kind"}.isdisjoint(properties)
    # And a note needs only its content (type, slot and category are hints the model may leave null)
    assert "content" in remember.params_json_schema["properties"]
    # And a run context cannot make notes claim a source an agent cannot vouch for
    token = api.token(TENANT, "agent-1", ["agent"], subjects=[SUBJECT])
    for kind in ("system_of_record", "customer_confirmed", "human_verified"):
        with pytest.raises(ValueError, match="not what an agent reports"):
            MemoryContext(
                memory=AsyncMemoryClient(api.base, token=token), subject_id=SUBJECT, source_kind=kind
            )


def test_a_first_note_reports_the_decision_and_an_empty_recall_says_why(api):
    lonely = "agents.lonely@example.com"
    model = ScriptedModel(
        [
            [tool_call("c1", "recall", query="Who signs renewals?")],
            [tool_call("c2", "remember", content="Dana Ortiz has left; Sam Lee now signs renewals.")],
            [message("Noted.")],
        ]
    )
    # When the model recalls about a customer nothing is known of, then notes a sentence (content only)
    run_agent(api, model, ["agent"], subject=lonely)
    outputs = tool_outputs(model)
    # Then recall's output says why nothing came back, instead of an empty context alone
    assert "nothing recalled" in outputs["c1"]
    # And remember's output is the gateway's decision with its reasons and a sentence to relay
    decision = json.loads(outputs["c2"])
    assert "error" not in decision, decision
    assert decision["decision"] in {"admitted", "pending_approval", "quarantined", "rejected", "contested"}
    assert isinstance(decision["reasons"], list) and decision["explanation"]

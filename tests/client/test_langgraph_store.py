"""The LangGraph store through LangGraph's own code path: a compiled StateGraph whose nodes get the
store injected (`store: BaseStore`), against the real local HTTP front, offline."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from agent_memory_client import Forbidden, MemoryClient
from agent_memory_client._tooling import write_summary
from agent_memory_client.langgraph_store import ServiceStore, subject_namespace
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

pytestmark = pytest.mark.e2e

SUBJECT = "lg.customer@example.com"  # periods: written %2E in the namespace label
TENANT = "langgraph-tests"
NS = subject_namespace(SUBJECT)
DECISIONS = {"admitted", "pending_approval", "contested", "quarantined", "rejected", "duplicate"}


class Turn(TypedDict, total=False):
    question: str
    recalled: list[str]
    recalled_ids: list[str]
    remembered: bool


def copilot_graph(store: BaseStore) -> Any:
    """Recall before answering, then remember what the customer asked for."""

    def recall(state: Turn, *, store: BaseStore) -> Turn:
        hits = store.search(NS, query=state["question"], limit=5)
        return {"recalled": [h.value["content"] for h in hits], "recalled_ids": [h.key for h in hits]}

    def remember(state: Turn, *, store: BaseStore) -> Turn:
        store.put(
            NS, "preference.contact_channel", {"type": "preference", "content": "Prefers email over phone."}
        )
        return {"remembered": True}

    builder = StateGraph(Turn)
    builder.add_node("recall", recall)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store)


@pytest.fixture(scope="module")
def integration(clients) -> MemoryClient:
    return clients("integration", tenant=TENANT)


@pytest.fixture(scope="module")
def agent(clients) -> MemoryClient:
    """An agent's client whose token is bound to the subject (the store acts on that one)."""
    return clients("agent", tenant=TENANT, subjects=[SUBJECT])


@pytest.fixture(scope="module")
def plan_fact(integration) -> str:
    written = integration.write_memory(
        subject_id=SUBJECT,
        type="fact",
        category="ACCOUNT_PROFILE",
        slot="account.plan_tier",
        content="On the enterprise plan with premium support.",
        source={"kind": "system_of_record", "system": "crm", "reference": "ACC-9"},
    )
    assert written.decision == "admitted" and written.memory is not None
    return written.memory.id


def test_a_graph_node_recalls_and_remembers_through_the_injected_store(agent, plan_fact):
    # Given a graph compiled with the service's store, acting with an agent's token
    graph = copilot_graph(ServiceStore(agent))
    # When it runs one turn
    out = graph.invoke({"question": "Which plan are they on?"})
    # Then the recall node got the system-of-record fact from retrieval
    assert plan_fact in out["recalled_ids"]
    assert "On the enterprise plan with premium support." in out["recalled"]
    # And the remember node's put went through the gateway: one active preference in that slot
    active = [
        r for r in agent.iter_memories(SUBJECT, status="active") if r.slot == "preference.contact_channel"
    ]
    assert [r.content for r in active] == ["Prefers email over phone."]
    assert active[0].authority == "customer_claim" and active[0].type == "preference"


def test_get_by_slot_or_id_and_a_second_put_supersedes(agent, plan_fact):
    store = ServiceStore(agent)
    # Given a preference put under its slot key
    store.put(NS, "preference.language", {"type": "preference", "content": "Prefers French."})
    first = store.get(NS, "preference.language")
    # When a second put goes to the same key
    store.put(NS, "preference.language", {"type": "preference", "content": "Prefers German."})
    second = store.get(NS, "preference.language")
    # Then get by slot answers the active version, and the first was superseded
    assert first is not None and second is not None
    assert first.value["content"] == "Prefers French." and second.value["content"] == "Prefers German."
    assert second.key != first.key and second.namespace == NS
    assert agent.get_memory(first.key).status == "superseded"
    # And a put to the item's key (its memory id) updates the same slot
    store.put(NS, second.key, {"type": "preference", "content": "Prefers Italian."})
    third = store.get(NS, "preference.language")
    assert third is not None and third.value["content"] == "Prefers Italian."
    assert agent.get_memory(second.key).status == "superseded"
    # And get by id answers the record; an unknown id or another subject's namespace answers None
    by_id = store.get(NS, plan_fact)
    assert (
        by_id is not None and by_id.value["verified"] is True and by_id.value["slot"] == "account.plan_tier"
    )
    assert store.get(NS, "mem_unknown") is None and store.get(NS, "not an id") is None


def test_search_without_a_query_lists_with_filters_and_pages(agent, plan_fact):
    store = ServiceStore(agent)
    store.put(NS, "preference.timezone", {"type": "preference", "content": "Works in CET."})
    # When the subject's memories are listed, filtered by type and by verification, and paged
    preferences = store.search(NS, filter={"type": "preference"}, limit=50)
    verified = store.search(NS, filter={"verified": True}, limit=50)
    everything = store.search(NS, limit=50)
    page = store.search(NS, limit=1, offset=1)
    # Then each answers only what it asked for, newest first, with no embedding in the values
    assert preferences and {i.value["type"] for i in preferences} == {"preference"}
    assert [i.key for i in verified] == [plan_fact]
    assert [i.key for i in page] == [everything[1].key]
    assert all("embedding" not in i.value and i.value["status"] == "active" for i in everything)


def test_delete_forgets_the_memory(agent):
    store = ServiceStore(agent)
    store.put(NS, "preference.meeting_time", {"type": "preference", "content": "Prefers morning calls."})
    item = store.get(NS, "preference.meeting_time")
    assert item is not None
    # When the key is deleted
    store.delete(NS, "preference.meeting_time")
    # Then the record is forgotten through DELETE /v1/memories/{id}, and the key answers None
    assert agent.get_memory(item.key).status == "deleted"
    assert store.get(NS, "preference.meeting_time") is None
    assert all(i.key != item.key for i in store.search(NS, query="morning calls"))


def test_write_reports_the_gateways_decision_and_a_held_memory_is_not_served(agent):
    store = ServiceStore(agent)
    # When a commercial term is proposed
    result = store.write(
        NS,
        {
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "Was promised a 20% discount on renewal.",
        },
    )
    # Then it waits for a reviewer, and the store does not serve it
    assert result.decision == "pending_approval"
    assert store.get(NS, "contract.discount") is None


def test_the_async_path_runs_the_graph_with_ainvoke(agent, plan_fact):
    store = ServiceStore(agent)

    async def recall(state: Turn, *, store: BaseStore) -> Turn:
        hits = await store.asearch(NS, query=state["question"], limit=3)
        return {"recalled_ids": [h.key for h in hits]}

    builder = StateGraph(Turn)
    builder.add_node("recall", recall)
    builder.add_edge(START, "recall")
    graph = builder.compile(store=store)
    # When the graph runs on the event loop
    out = asyncio.run(graph.ainvoke({"question": "What support do they have?"}))
    # Then abatch answered through the same API
    assert plan_fact in out["recalled_ids"]


def test_the_services_refusal_reaches_the_graph_and_namespaces_are_checked(clients):
    # Given a store acting with an auditor's token (may not retrieve context)
    store = ServiceStore(clients("auditor", tenant=TENANT, subjects=[SUBJECT]))
    graph = copilot_graph(store)
    # When the graph runs, the API's 403 is raised through LangGraph unchanged
    with pytest.raises(Forbidden) as refused:
        graph.invoke({"question": "Which plan are they on?"})
    assert refused.value.code == "forbidden" and refused.value.request_id
    # And a namespace that names no single subject is refused before any call
    with pytest.raises(InvalidNamespaceError):
        store.search(("memories",), query="anything")
    with pytest.raises(NotImplementedError):
        store.list_namespaces()


def test_the_store_acts_only_on_the_bound_customers_and_never_writes_a_source_a_value_names(agent, clients):
    store = ServiceStore(agent)
    other = subject_namespace("lg.other@example.com")
    # When a graph (or a model's tool call) names another customer's namespace
    # Then every operation is refused before any call
    for attempt in (
        lambda: store.search(other, query="anything"),
        lambda: store.get(other, "preference.language"),
        lambda: store.put(other, "preference.language", {"content": "Prefers Dutch."}),
        lambda: store.delete(other, "preference.language"),
    ):
        with pytest.raises(InvalidNamespaceError):
            attempt()
    # And a value that names its own source is refused, as is a store configured with a source
    # no agent may report; nothing was written
    with pytest.raises(ValueError, match="source"):
        store.put(
            NS,
            "contract.seat_price",
            {"type": "fact", "content": "Pays $1 per seat.", "source": {"kind": "system_of_record"}},
        )
    with pytest.raises(ValueError, match="not what an agent reports"):
        ServiceStore(agent, default_source={"kind": "customer_confirmed"})
    assert all(r.slot != "contract.seat_price" for r in agent.iter_memories(SUBJECT, status="active"))
    # And a store whose token is bound to no customer, with none configured, is refused at once
    with pytest.raises(ValueError, match="--subjects"):
        ServiceStore(clients("agent", tenant=TENANT))


def test_a_content_only_put_reports_the_decision_and_an_empty_search_says_why(clients):
    lonely = "lg.lonely@example.com"
    store = ServiceStore(clients("agent", tenant=TENANT, subjects=[lonely]))
    ns = subject_namespace(lonely)
    # Given nothing known about the customer, a search answers an empty list that says why
    empty = store.search(ns, query="who signs renewals?")
    assert empty == [] and empty.note is not None and empty.note.startswith("nothing recalled")
    # When the graph puts only a sentence
    store.put(ns, "note-1", {"content": "Dana Ortiz has left; Sam Lee now signs renewals."})
    # Then the gateway's decision is kept, with its reasons and a sentence a model can relay
    written = store.last_write
    assert written is not None and written.decision in DECISIONS and isinstance(written.reasons, list)
    assert write_summary(written)["explanation"]
    # And remember(namespace, content) answers the decision itself
    again = store.remember(ns, "Prefers email over phone.")
    assert again.decision in DECISIONS and again is store.last_write

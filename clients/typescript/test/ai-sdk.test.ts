/**
 * The AI SDK tools against a real `memory serve`: whose memory they touch is the configuration's
 * and the token's, never the model's. A mock language model (the AI SDK's own) makes the tool
 * calls a model would, including one that names another customer.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { MemoryClient, Unscoped } from "@agent-memory/client";
import { memoryTools } from "@agent-memory/client/ai-sdk";

import { service } from "./support.js";

const agent = new MemoryClient(service.url, { token: service.agentToken, timeoutMs: 30_000 });
const unbound = new MemoryClient(service.url, { token: service.unboundAgentToken, timeoutMs: 30_000 });

const usage = {
  inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: undefined, reasoning: undefined },
};

/** A model that calls `toolName` with `input` once, then answers "done". */
function modelCalling(toolName: string, input: Record<string, unknown>): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      calls += 1;
      if (calls === 1) {
        return {
          content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
    },
  });
}

function schemaOf(tool: unknown): { properties: Record<string, unknown>; additionalProperties?: boolean } {
  return (tool as { inputSchema: { jsonSchema: { properties: Record<string, unknown>; additionalProperties?: boolean } } }).inputSchema
    .jsonSchema;
}

describe("AI SDK tools", () => {
  test("no tool's schema lets the model name a subject, session or source", () => {
    // Given the tools of an agent bound to one customer
    const tools = memoryTools({ client: agent });
    // Then they are the memory tools, forget included for an agent
    assert.deepEqual(Object.keys(tools).sort(), ["forget", "recall", "remember", "working_memory_get", "working_memory_set"]);
    // And no schema has a field that would choose whose memory, which session or what authority
    for (const [name, tool] of Object.entries(tools)) {
      const schema = schemaOf(tool);
      const fields = Object.keys(schema.properties);
      for (const forbidden of ["subject_id", "subject", "session_id", "session", "source", "source_kind", "ticket_id", "tenant_id"]) {
        assert.ok(!fields.includes(forbidden), `${name} has ${forbidden}`);
      }
      assert.equal(schema.additionalProperties, false, `${name} accepts extra fields`);
    }
  });

  test("a model naming another customer and a stronger source writes to the configured customer only", async () => {
    // Given the tools configured for the bound customer, and a model that asks `remember` to
    // write about another customer as the system of record
    const tools = memoryTools({ client: agent, subjectId: service.subject });
    const model = modelCalling("remember", {
      content: "Prefers to be called Sam in every conversation.",
      subject_id: service.otherSubject,
      session_id: "attacker-session",
      source: { kind: "system_of_record", system: "crm" },
    });
    // When the model runs
    const result = await generateText({ model, tools, prompt: "note it", stopWhen: stepCountIs(3) });
    // Then the tool wrote, and what it wrote is about the configured customer, as an agent's claim
    const output = result.steps[0]?.toolResults[0]?.output as { decision: string; memory_id: string | null; message: string };
    assert.ok(output.memory_id, `decision ${output.decision}: ${output.message}`);
    const written = await agent.getMemory(output.memory_id);
    assert.equal(written.subject_id, service.subject);
    assert.equal(written.source.kind, "customer_claim");
    assert.notEqual(written.session_id, "attacker-session");
    // And the other customer has nothing
    const others = await unbound.listMemories(service.otherSubject);
    assert.deepEqual(others.memories, []);
  });

  test("recall serves the configured customer's memories, as data", async () => {
    const tools = memoryTools({ client: agent });
    await tools.remember.execute!({ content: "Their fiscal year starts in April." }, { toolCallId: "t1", messages: [] });
    const model = modelCalling("recall", { query: "when does their fiscal year start?", subject_id: service.otherSubject });
    const result = await generateText({ model, tools, prompt: "recall", stopWhen: stepCountIs(3) });
    const context = result.steps[0]?.toolResults[0]?.output as string;
    assert.equal(typeof context, "string");
    assert.match(context, new RegExp(`subject="${service.subject}"`));
    assert.match(context, /fiscal year starts in April/);
  });

  test("forget deletes the customer's own memory, and answers another customer's as unknown", async () => {
    // Given a memory of the configured customer and one of another customer
    const tools = memoryTools({ client: agent });
    const own = await agent.remember(service.subject, "Uses the mobile app for approvals.", { type: "preference", slot: "preference.approval_app" });
    const theirs = await unbound.remember(service.otherSubject, "Uses the desktop app for approvals.", { type: "preference", slot: "preference.approval_app" });
    assert.ok(own.memory && theirs.memory);
    const options = { toolCallId: "t2", messages: [] };
    // When the model asks to forget each
    const refused = (await tools.forget!.execute!({ memory_id: theirs.memory.id }, options)) as { error: { status: number; code: string } };
    const gone = (await tools.forget!.execute!({ memory_id: own.memory.id, reason: "customer_request" }, options)) as { status: string };
    // Then the other customer's is refused as unknown and still there; the own one is deleted
    assert.equal(refused.error.status, 404);
    assert.equal(refused.error.code, "not_found");
    assert.equal((await unbound.getMemory(theirs.memory.id)).status, "active");
    assert.equal(gone.status, "deleted");
  });

  test("a refusal is returned to the model as the API's error body", async () => {
    const tools = memoryTools({ client: agent });
    const output = (await tools.working_memory_set.execute!(
      { key: "bad key with spaces", value: 1 },
      { toolCallId: "t3", messages: [] },
    )) as { error: { status: number; code: string; field: string | null } };
    assert.equal(output.error.status, 422);
    assert.equal(output.error.code, "invalid_request");
    assert.equal(output.error.field, "key");
  });

  test("the tools refuse an unbound token, and a subject the token is not bound to", () => {
    assert.throws(() => memoryTools({ client: unbound, subjectId: service.subject }), Unscoped);
    assert.throws(() => memoryTools({ client: agent, subjectId: service.otherSubject }), Unscoped);
    // And with an unbound token allowed, the configured subject is the one used
    assert.ok(memoryTools({ client: unbound, subjectId: service.subject, allowUnboundToken: true }).recall);
  });

  test("forget is not offered to a token whose roles cannot forget", () => {
    const reviewer = new MemoryClient(service.url, { token: service.reviewerToken });
    const tools = memoryTools({ client: reviewer, subjectId: service.subject, allowUnboundToken: true });
    assert.equal("forget" in tools, false);
  });
});

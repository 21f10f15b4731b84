/**
 * Every method of the client sends a request the service's OpenAPI document declares: its method
 * and path, and only the body fields and query parameters the operation accepts. The document is
 * the running service's; the requests are recorded by a local server standing in for it.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryClient } from "@agent-memory/client";

import { localServer, service } from "./support.js";

interface Recorded {
  method: string;
  path: string;
  query: string[];
  body: Record<string, unknown> | null;
}

type Schema = { $ref?: string; properties?: Record<string, unknown>; anyOf?: Schema[]; oneOf?: Schema[] };
type Operation = { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: Schema }> } };
type OpenApi = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** The property names a body schema accepts (through `$ref`, `anyOf` and `oneOf`). */
function fieldsOf(schema: Schema | undefined, doc: OpenApi): Set<string> {
  if (!schema) return new Set();
  if (schema.$ref) return fieldsOf(doc.components.schemas[schema.$ref.split("/").pop() as string], doc);
  const found = new Set(Object.keys(schema.properties ?? {}));
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) for (const f of fieldsOf(branch, doc)) found.add(f);
  return found;
}

test("every method's request is one the service's OpenAPI document declares", async () => {
  // Given the running service's OpenAPI document, and a stand-in that records what it is sent
  const doc = (await new MemoryClient(service.url).openapi()) as unknown as OpenApi;
  const recorded: Recorded[] = [];
  const server = await localServer((req, res) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://stand-in");
      recorded.push({ method: req.method ?? "", path: url.pathname, query: [...url.searchParams.keys()], body: raw ? JSON.parse(raw) : null });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ status: "processed", next_cursor: null, memories: [], items: [], events: [] }));
    });
  });
  try {
    // When every method is called
    const c = new MemoryClient(server.url, { token: "t" });
    const s = "ACC-1";
    await c.retrieve({ subject_id: s, query: "q", ticket_id: "T-1", session_id: "sess-1", top_k: 3, max_tokens: 500, types: ["fact"], slots: ["a.b"] });
    await c.searchResolutions({ query: "q", top_k: 2, subject_id: s, max_tokens: 100 });
    await c.writeMemory({ subject_id: s, type: "fact", content: "c", source: { kind: "customer_claim" }, slot: "a.b", category: "X", ticket_id: "T-1", session_id: "sess-1", expires_at: new Date() });
    await c.writeMemory({ subject_id: s, content: "c", session_id: "sess-1" });
    await c.remember(s, "c", { type: "preference", slot: "preference.x", category: "PREFERENCE", ticket_id: "T-1", session_id: "sess-1", source: { kind: "agent_inference" } });
    await c.getMemory("mem_1");
    await c.deleteMemory("mem_1", "customer_request");
    await c.revalidate("mem_1");
    await c.closeCommitment("mem_1", { outcome: "done", closed_at: new Date(), note: "n" });
    await c.listMemories(s, { status: "active", type: "fact", cursor: "x", limit: 5 });
    await c.closeSession("sess-1", { subject_id: s, occurred_at: new Date(), turns: [{ speaker: "customer", text: "t" }], ticket_id: "T-1", channel: "chat" }, { wait: true });
    await c.getExtraction("sess-1");
    await c.workingSet("sess-1", "k", { a: 1 }, { subject_id: s, ttl_seconds: 60 });
    await c.workingGet("sess-1");
    await c.workingDelete("sess-1", "k");
    await c.reviewQueue({ cursor: "x", limit: 5 });
    await c.approve("mem_1", { note: "n", evidence_ref: "ev-123", supersedes: ["mem_2"], independent_reason: "r" });
    await c.reject("mem_1", { note: "n", evidence_ref: "ev-123" });
    await c.reinstate("mem_1", { note: "n" });
    await c.requestErasure(s, { reason: "gdpr_article_17", request_reference: "DSR-1" });
    await c.getErasure("er_1");
    await c.legalHoldSubject(s, { hold: true, reason: "litigation" });
    await c.legalHoldMemory("mem_1", { hold: false, reason: "released" });
    await c.exportSubject(s, { cursor: "x", limit: 5 });
    await c.audit({ subject_id: s, memory_id: "mem_1", since: new Date(), cursor: "x", limit: 5 });
    await c.getPolicy();
    await c.putPolicy({ profile: "b2b_support", overrides: {} });
    await c.health();
    await c.openapi();
    await c.openSession({ subject_id: s, session_id: "sess-2" }).append("customer", "t").close();
  } finally {
    await server.close();
  }
  // Then each request matches an operation: method, path, body fields and query parameters
  const templates = Object.keys(doc.paths).map((p) => ({ p, re: new RegExp(`^${p.replace(/\{\w+\}/g, "[^/]+")}$`) }));
  const seen = new Set<string>();
  for (const r of recorded) {
    const matches = templates.filter((t) => t.re.test(r.path) && doc.paths[t.p]?.[r.method.toLowerCase()]);
    // a literal path wins over a template (`/v1/memories/{id}` would match nothing else here)
    const template = matches.find((t) => !t.p.includes("{")) ?? matches[0];
    assert.ok(template, `${r.method} ${r.path} is not in the OpenAPI document`);
    const op = doc.paths[template.p]?.[r.method.toLowerCase()] as Operation;
    seen.add(`${r.method} ${template.p}`);
    const accepted = fieldsOf(op.requestBody?.content["application/json"]?.schema, doc);
    for (const field of Object.keys(r.body ?? {})) assert.ok(accepted.has(field), `${r.method} ${template.p}: body field ${field}`);
    const params = new Set((op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name));
    for (const name of r.query) assert.ok(params.has(name), `${r.method} ${template.p}: query parameter ${name}`);
  }
  // And the client reaches every operation but the Swagger page
  const all = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  assert.deepEqual(all.filter((op) => !seen.has(op)), ["GET /v1/docs"]);
});

/**
 * The client against a real `memory serve`: round trips, notes, sessions, review, privacy and
 * audit, and errors mapped to their typed classes. Retries and timeouts use local HTTP servers
 * that answer 429/503 or never answer.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";

import {
  InvalidRequest,
  MemoryApiError,
  MemoryClient,
  MemoryTransportError,
  NO_RETRIES,
  NotFound,
  RateLimited,
  Unauthenticated,
  Unavailable,
} from "@agent-memory/client";

import { consoleCalls, localServer, service } from "./support.js";

const agent = new MemoryClient(service.url, { token: service.agentToken, timeoutMs: 30_000 });

describe("memories", () => {
  test("a typed write is recalled by a retrieve about it, and nothing is printed", async () => {
    // Given a preference written for the bound customer
    let written: Awaited<ReturnType<MemoryClient["writeMemory"]>> | undefined;
    let found: Awaited<ReturnType<MemoryClient["retrieve"]>> | undefined;
    const printed = await consoleCalls(async () => {
      written = await agent.writeMemory({
        subject_id: service.subject,
        type: "preference",
        slot: "preference.contact_channel",
        content: "Prefers email for renewal paperwork, never phone calls.",
        source: { kind: "customer_claim" },
      });
      // When the agent asks how to reach the customer about the renewal
      found = await agent.retrieve({ subject_id: service.subject, query: "how should we contact them about the renewal?" });
    });
    // Then the write was admitted, and the retrieval serves it back in its context
    assert.equal(written?.decision, "admitted");
    const id = written?.memory?.id;
    assert.ok(id?.startsWith("mem_"));
    assert.ok(found?.memories.some((m) => m.id === id), "the written memory is retrieved");
    assert.match(found?.context ?? "", /email for renewal paperwork/);
    // And the record reads back with its history
    const detail = await agent.getMemory(id as string);
    assert.equal(detail.subject_id, service.subject);
    assert.ok(Array.isArray(detail.history));
    // And the client printed nothing (never memory content)
    assert.deepEqual(printed, []);
  });

  test("a content-only note is classified by the service and held with an explanation", async () => {
    // Given a note in the agent's own words stating a commercial term
    // When it is sent content-only
    const result = await agent.remember(service.subject, "We agreed a 20% discount on the renewal.");
    // Then the service classified it and held it for a reviewer, saying why in one sentence
    assert.equal(result.decision, "pending_approval");
    assert.ok(result.reasons.includes("commercial_term_requires_approval"));
    assert.match(result.explanation ?? "", /reviewer/);
    assert.equal(result.classified_as?.category, "CONTRACT_COMMERCIAL");
    assert.equal(result.memory?.source.kind, "customer_claim");
  });

  test("small talk is not stored, and the explanation says so", async () => {
    const result = await agent.remember(service.subject, "How are you doing today?");
    assert.equal(result.decision, "rejected");
    assert.ok(result.explanation && result.explanation.length > 10);
    assert.equal(result.memory ?? null, null);
  });

  test("an unknown memory is a NotFound carrying the status", async () => {
    await assert.rejects(agent.getMemory("mem_00000000000000000000000000ff"), (error: unknown) => {
      assert.ok(error instanceof NotFound);
      assert.equal(error.status, 404);
      assert.equal(error.code, "not_found");
      return true;
    });
  });

  test("a subject's memories are listed page after page", async () => {
    const all: string[] = [];
    for await (const record of agent.iterMemories(service.subject, { pageSize: 1 })) all.push(record.id);
    assert.ok(all.length >= 2, `${all.length} listed`);
    assert.equal(new Set(all).size, all.length);
  });
});

describe("errors", () => {
  test("a 422 is an InvalidRequest naming the field", async () => {
    // Given a retrieval asking for more memories than any tenant allows
    // When it is sent
    // Then the typed error carries the status, the code and the field
    await assert.rejects(agent.retrieve({ subject_id: service.subject, query: "renewal", top_k: 99 }), (error: unknown) => {
      assert.ok(error instanceof InvalidRequest);
      assert.ok(error instanceof MemoryApiError);
      assert.equal(error.status, 422);
      assert.equal(error.code, "invalid_request");
      assert.equal(error.field, "top_k");
      assert.ok(error.requestId);
      assert.match(error.message, /^422 invalid_request: top_k/);
      return true;
    });
  });

  test("a typed write missing its source names the field", async () => {
    await assert.rejects(
      agent.writeMemory({ subject_id: service.subject, type: "fact", content: "x" } as never),
      (error: unknown) => error instanceof InvalidRequest && error.field === "source",
    );
  });

  test("a bad token is Unauthenticated (401) with the check that failed", async () => {
    const stranger = new MemoryClient(service.url, { token: "not-a-token" });
    await assert.rejects(stranger.retrieve({ subject_id: service.subject, query: "x" }), (error: unknown) => {
      assert.ok(error instanceof Unauthenticated);
      assert.equal(error.status, 401);
      assert.equal(error.code, "unauthenticated");
      assert.match(error.serviceMessage, /JWT/);
      return true;
    });
  });

  test("a 429 with a Retry-After the policy will not wait for is a RateLimited at once", async () => {
    let requests = 0;
    const server = await localServer((_req, res) => {
      requests += 1;
      res.writeHead(429, { "Content-Type": "application/json", "Retry-After": "120" });
      res.end(JSON.stringify({ error: { code: "rate_limited", message: "slow down", request_id: "r-1" } }));
    });
    try {
      const client = new MemoryClient(server.url, { token: "t" });
      await assert.rejects(client.health(), (error: unknown) => {
        assert.ok(error instanceof RateLimited);
        assert.equal(error.retryAfter, 120);
        assert.equal(error.requestId, "r-1");
        return true;
      });
      assert.equal(requests, 1);
    } finally {
      await server.close();
    }
  });

  test("a 503 is retried after its Retry-After, then answered", async () => {
    let requests = 0;
    const server = await localServer((_req, res) => {
      requests += 1;
      if (requests === 1) {
        res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "1" });
        res.end(JSON.stringify({ error: { code: "unavailable", message: "database" } }));
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ status: "ok", database: "ok", embedder: "e", version: "v" }));
    });
    try {
      const started = Date.now();
      const health = await new MemoryClient(server.url).health();
      assert.equal(health.status, "ok");
      assert.equal(requests, 2);
      assert.ok(Date.now() - started >= 900, "waited for Retry-After");
      // And without retries, the 503 is an Unavailable carrying Retry-After
      requests = 0;
      await assert.rejects(new MemoryClient(server.url, { retry: NO_RETRIES }).health(), (error: unknown) => {
        return error instanceof Unavailable && error.retryAfter === 1 && error.status === 503;
      });
    } finally {
      await server.close();
    }
  });

  test("a service that does not answer times out as a MemoryTransportError", async () => {
    const server = await localServer(() => undefined); // never answers
    try {
      const client = new MemoryClient(server.url, { timeoutMs: 200, retry: NO_RETRIES });
      const started = Date.now();
      await assert.rejects(client.health(), (error: unknown) => {
        assert.ok(error instanceof MemoryTransportError);
        assert.match(error.message, /GET \/v1\/health: no answer within 200 ms/);
        return true;
      });
      assert.ok(Date.now() - started < 5_000);
      // And a caller's own signal stops the call with the caller's reason
      const controller = new AbortController();
      const reason = new Error("user went away");
      setTimeout(() => controller.abort(reason), 50);
      await assert.rejects(new MemoryClient(server.url).health({ signal: controller.signal }), (error: unknown) => error === reason);
    } finally {
      await server.close();
    }
  });
});

describe("sessions", () => {
  test("a session opened, appended to and closed is extracted, and its report says why", async () => {
    // Given a session with a working value and two turns
    const session = agent.openSession({ subject_id: service.subject, session_id: `ts-${randomUUID()}`, channel: "chat" });
    const kept = await session.setWorking("order_number", "A-1042");
    assert.equal(kept.key, "order_number");
    assert.equal((await session.working()).items.length, 1);
    session.append("customer", "Please send the renewal paperwork by email, not by phone.").append("agent", "Will do.");
    assert.equal(session.turns.length, 2);
    // When it is closed, waiting for extraction
    const done = await session.close({ wait: true, waitTimeoutMs: 60_000, pollIntervalMs: 200 });
    // Then extraction finished and counted its decisions
    assert.equal(done.status, "processed");
    assert.equal(done.session_id, session.sessionId);
    // And the report gives each statement's decision and reason
    const report = await session.extraction();
    assert.equal(report.available, true);
    assert.equal(report.subject_id, service.subject);
    assert.ok(report.statements.length >= 2, `${report.statements.length} statements`);
    for (const statement of report.statements) {
      assert.ok(["admitted", "pending_approval", "quarantined", "not_stored", "superseded", "duplicate"].includes(statement.decision));
      assert.ok(statement.reason.length > 0);
    }
    assert.ok(report.statements.some((s) => s.speaker === "agent" && s.decision === "not_stored"));
    // And closing cleared the working values
    assert.equal((await session.working()).items.length, 0);
    // And closing again with the same turns is the same session, not a second one
    const again = await session.close();
    assert.equal(again.session_id, session.sessionId);
  });
});

describe("review, privacy, audit", () => {
  const reviewer = new MemoryClient(service.url, { token: service.reviewerToken });
  const privacy = new MemoryClient(service.url, { token: service.privacyToken });
  const auditor = new MemoryClient(service.url, { token: service.auditorToken });
  const unbound = new MemoryClient(service.url, { token: service.unboundAgentToken });

  test("a reviewer approves a held term with evidence, and rejects another", async () => {
    // Given two held terms written by the agent
    const held = await agent.remember(service.subject, "They were promised 15% off the support tier this year.");
    assert.equal(held.decision, "pending_approval");
    const other = await agent.remember(service.subject, "Renewal price is locked at $40 per seat for two years.");
    assert.equal(other.decision, "pending_approval");
    // When the reviewer lists the queue and decides
    const queued: string[] = [];
    for await (const item of reviewer.iterReviewQueue(50)) queued.push(item.memory.id);
    assert.ok(queued.includes(held.memory?.id as string));
    const approved = await reviewer.approve(held.memory?.id as string, { evidence_ref: "signed-contract-2026-118", note: "as signed" });
    const rejected = await reviewer.reject(other.memory?.id as string, { note: "not what was signed" });
    // Then the approved one is active and verified, the rejected one rejected
    assert.equal(approved.memory.status, "active");
    assert.equal(approved.memory.evidence_ref, "signed-contract-2026-118");
    assert.equal(rejected.memory.status, "rejected");
    // And the agent may not approve: 403 with the write refusal's code
    await assert.rejects(agent.approve(other.memory?.id as string, { evidence_ref: "signed-contract-2026-118" }), (error: unknown) => {
      return error instanceof MemoryApiError && error.status === 403 && error.code === "unauthorized_memory_mutation";
    });
  });

  test("a privacy officer exports and erases a subject, and the auditor sees it", async () => {
    // Given a memory of the customer to erase
    const written = await unbound.remember(service.erasedSubject, "Prefers calls after 3pm their time.", {
      type: "preference",
      slot: "preference.call_window",
    });
    assert.equal(written.decision, "admitted");
    // When the privacy officer exports, then erases the subject
    const exported = await privacy.exportSubject(service.erasedSubject);
    assert.ok(exported.memories.some((m) => m.id === written.memory?.id));
    const erasure = await privacy.requestErasure(service.erasedSubject, { reason: "gdpr_article_17", request_reference: `DSR-${randomUUID()}` });
    assert.ok(erasure.erasure_id);
    // Then the erasure's status is readable by its id
    const status = await privacy.getErasure(erasure.erasure_id);
    assert.equal(status.erasure_id, erasure.erasure_id);
    assert.ok(["running", "verified", "failed"].includes(status.status));
    // And the auditor sees the subject's events (no content)
    const events = await auditor.audit({ subject_id: service.erasedSubject, limit: 50 });
    assert.ok(events.events.length > 0);
    assert.ok(events.events.every((e) => typeof e.hash === "string"));
  });
});

describe("configuration", () => {
  test("fromEnv reads MEMORY_URL and MEMORY_TOKEN", async () => {
    const saved = { url: process.env.MEMORY_URL, token: process.env.MEMORY_TOKEN };
    process.env.MEMORY_URL = service.url + "/";
    process.env.MEMORY_TOKEN = service.agentToken;
    try {
      const client = MemoryClient.fromEnv();
      assert.equal(client.baseUrl, service.url);
      const found = await client.retrieve({ subject_id: service.subject, query: "renewal" });
      assert.equal(found.subject_id, service.subject);
      assert.equal(JSON.stringify(client).includes(service.agentToken), false, "the token is not serialised");
    } finally {
      for (const [name, value] of [["MEMORY_URL", saved.url], ["MEMORY_TOKEN", saved.token]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test("fromEnv without MEMORY_URL is the local server", () => {
    const saved = process.env.MEMORY_URL;
    delete process.env.MEMORY_URL;
    try {
      assert.equal(MemoryClient.fromEnv().baseUrl, "http://127.0.0.1:8080");
    } finally {
      if (saved !== undefined) process.env.MEMORY_URL = saved;
    }
  });
});

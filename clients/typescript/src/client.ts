/** `MemoryClient`: one method per route of the HTTP API the Python client covers. */

import { InvalidRequest, SessionWaitTimeout } from "./errors.js";
import type * as m from "./models.js";
import {
  type Call,
  type CallOptions,
  DEFAULT_RETRY,
  DEFAULT_URL,
  type RetryPolicy,
  type TransportOptions,
  USER_AGENT,
  encodePath,
  environment,
  newIdempotencyKey,
  send,
} from "./transport.js";

export interface MemoryClientOptions {
  /** The caller's bearer token: the service decides what it may see and do. */
  token?: string | null;
  /** Milliseconds one attempt may take (default 10,000). */
  timeoutMs?: number;
  /** When to send a request again (default: 3 retries of 429/503 and lost connections). */
  retry?: Partial<RetryPolicy>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface Page {
  cursor?: string | null;
  limit?: number | null;
}

export interface WaitOptions extends CallOptions {
  /** Poll until extraction is processed or failed. */
  wait?: boolean;
  /** Milliseconds to wait for extraction (default 60,000); then `SessionWaitTimeout`. */
  waitTimeoutMs?: number;
  /** Milliseconds between polls (default 500). */
  pollIntervalMs?: number;
}

export interface OpenSessionOptions {
  subject_id: string;
  /** Default: a new random id (use unguessable ids: a session id is the tenant's). */
  session_id?: string;
  ticket_id?: string | null;
  channel?: string | null;
}

const pathOf = encodePath;

/**
 * A client of the Agent Memory Service.
 *
 * `new MemoryClient("http://127.0.0.1:8080", { token })`, or `MemoryClient.fromEnv()`. Every
 * method sends one request (plus the retries the policy allows) with the token's identity: the
 * service decides what the token may see and do. Errors are thrown as `MemoryApiError`
 * subclasses; an unreachable service as `MemoryTransportError`.
 */
export class MemoryClient {
  readonly baseUrl: string;
  /** The caller's token; the AI SDK adapter reads its bound subjects from it. */
  readonly token: string | null;
  readonly retry: RetryPolicy;
  private readonly transport: TransportOptions;

  constructor(baseUrl: string, options: MemoryClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = options.token ?? null;
    this.retry = Object.freeze({ ...DEFAULT_RETRY, ...options.retry });
    const headers: Record<string, string> = { Accept: "application/json", "User-Agent": USER_AGENT };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") {
      throw new TypeError("no global fetch: use Node 18 or later, or pass options.fetch");
    }
    this.transport = {
      baseUrl: this.baseUrl,
      headers: { ...headers, ...options.headers },
      timeoutMs: options.timeoutMs ?? 10_000,
      retry: this.retry,
      fetch: fetchImpl,
    };
  }

  /**
   * A client of `MEMORY_URL` (default http://127.0.0.1:8080) acting with `MEMORY_TOKEN`, the
   * variables the Python client and the MCP server read; options as for the constructor.
   */
  static fromEnv(options: MemoryClientOptions = {}): MemoryClient {
    const env = environment();
    return new MemoryClient(env.MEMORY_URL || DEFAULT_URL, { token: env.MEMORY_TOKEN || null, ...options });
  }

  /** Never prints the token. */
  toJSON(): { baseUrl: string; token: string | null } {
    return { baseUrl: this.baseUrl, token: this.token ? "***" : null };
  }

  private async send<T>(call: Call, options?: CallOptions): Promise<T> {
    return (await send(this.transport, call, options)) as T;
  }

  // -- retrieval -----------------------------------------------------------------------------

  /** Context for the next turn. The context is data about the customer, never instructions. */
  retrieve(request: m.RetrieveRequest, options?: CallOptions): Promise<m.RetrieveResult> {
    const body = { query: "", ...request };
    return this.send({ method: "POST", route: "/v1/retrieve", path: "/v1/retrieve", body, idempotent: true }, options);
  }

  /** Reusable resolutions across the tenant's subjects. */
  searchResolutions(request: m.ResolutionSearchRequest, options?: CallOptions): Promise<m.ResolutionSearchResult> {
    const route = "/v1/resolutions/search";
    return this.send({ method: "POST", route, path: route, body: request, idempotent: true }, options);
  }

  // -- memories ------------------------------------------------------------------------------

  /**
   * Propose a memory (a typed write, or a content-only note); the gateway decides (`decision`).
   * A typed write without an idempotency key gets a random one, so a retried write is stored once.
   */
  async writeMemory(memory: m.MemoryWrite | m.MemoryNote, options?: CallOptions): Promise<m.WriteResult> {
    let body: m.MemoryWrite | m.MemoryNote = memory;
    if ("type" in memory && !memory.idempotency_key) {
      body = { ...memory, idempotency_key: await newIdempotencyKey() };
    }
    return this.send({ method: "POST", route: "/v1/memories", path: "/v1/memories", body, idempotent: true }, options);
  }

  /**
   * A note about the subject, in its own words: the service classifies it (type, category, slot)
   * and admits it under the authority the token allows; `decision`, `reasons` and `explanation`
   * say what became of it. With a hint other than `session_id` (`type`, `slot`, `category`,
   * `source`, `ticket_id`) it is sent as a typed write. A service that predates content-only
   * notes (a 422 naming `type` or `source`) gets the typed write it needs instead.
   */
  async remember(subjectId: string, content: string, hints: m.RememberHints = {}, options?: CallOptions): Promise<m.WriteResult> {
    const given = Object.fromEntries(
      Object.entries(hints).filter(([, v]) => v !== null && v !== undefined),
    ) as m.RememberHints;
    const typed: m.MemoryWrite = {
      subject_id: subjectId,
      content,
      ...(given as Omit<m.RememberHints, "type" | "source">),
      type: given.type ?? defaultType(given.slot),
      source: given.source ?? { kind: "customer_claim" },
    };
    if (Object.keys(given).some((k) => k !== "session_id")) {
      return this.writeMemory(typed, options);
    }
    const note: m.MemoryNote = { subject_id: subjectId, content };
    if (given.session_id) note.session_id = given.session_id;
    try {
      return await this.writeMemory(note, options);
    } catch (error) {
      if (error instanceof InvalidRequest && ["type", "source"].includes((error.field ?? "").split(".")[0] ?? "")) {
        return this.writeMemory(typed, options);
      }
      throw error;
    }
  }

  getMemory(memoryId: string, options?: CallOptions): Promise<m.MemoryDetail> {
    const route = "/v1/memories/{memory_id}";
    return this.send({ method: "GET", route, path: pathOf(route, { memory_id: memoryId }), idempotent: true }, options);
  }

  /** Forget one memory on the customer's request. */
  deleteMemory(memoryId: string, reason: string, options?: CallOptions): Promise<m.ForgetResult> {
    const route = "/v1/memories/{memory_id}";
    const path = pathOf(route, { memory_id: memoryId });
    return this.send({ method: "DELETE", route, path, body: { reason }, idempotent: true }, options);
  }

  /** Confirm a memory is still true (`last_validated_at` becomes now). */
  revalidate(memoryId: string, options?: CallOptions): Promise<m.MemoryRecord> {
    const route = "/v1/memories/{memory_id}/revalidate";
    return this.send({ method: "POST", route, path: pathOf(route, { memory_id: memoryId }), idempotent: false }, options);
  }

  /** Close a commitment (`outcome` done or cancelled, `closed_at`, `note`). */
  closeCommitment(memoryId: string, request: m.CloseCommitment = {}, options?: CallOptions): Promise<m.CommitmentClosed> {
    const route = "/v1/memories/{memory_id}/close";
    const path = pathOf(route, { memory_id: memoryId });
    return this.send({ method: "POST", route, path, body: request, idempotent: false }, options);
  }

  /** One page of a subject's memories, newest first. */
  listMemories(
    subjectId: string,
    filter: Page & { status?: m.Status | null; type?: m.MemoryType | null } = {},
    options?: CallOptions,
  ): Promise<m.MemoryPage> {
    const route = "/v1/subjects/{subject_id}/memories";
    const path = pathOf(route, { subject_id: subjectId });
    return this.send({ method: "GET", route, path, query: { ...filter }, idempotent: true }, options);
  }

  /** Every memory of a subject, page after page. */
  async *iterMemories(
    subjectId: string,
    filter: { status?: m.Status | null; type?: m.MemoryType | null; pageSize?: number } = {},
    options?: CallOptions,
  ): AsyncGenerator<m.MemoryRecord> {
    const { pageSize, ...rest } = filter;
    yield* pages((cursor) => this.listMemories(subjectId, { ...rest, cursor, limit: pageSize }, options), (p) => p.memories);
  }

  // -- sessions ------------------------------------------------------------------------------

  /**
   * A conversation to hand over when it ends: turns are kept in this process as they are
   * appended, and sent with `close()`. The service has no route to open a session: one belongs
   * to the subject of its first use (its close, or its working values).
   */
  openSession(options: OpenSessionOptions): Session {
    return new Session(this, options);
  }

  /**
   * Hand over a closed session's transcript (`subject_id`, `occurred_at`, `turns`, ...). With
   * `wait: true`, polls `getSession` until extraction is processed or failed (throws
   * `SessionWaitTimeout` after `waitTimeoutMs`).
   */
  closeSession(sessionId: string, request: m.CloseSessionRequest, options?: WaitOptions & { wait?: false }): Promise<m.SessionAccepted>;
  closeSession(sessionId: string, request: m.CloseSessionRequest, options: WaitOptions & { wait: true }): Promise<m.SessionStatus>;
  async closeSession(
    sessionId: string,
    request: m.CloseSessionRequest,
    options: WaitOptions = {},
  ): Promise<m.SessionAccepted | m.SessionStatus> {
    const route = "/v1/sessions/{session_id}/close";
    const path = pathOf(route, { session_id: sessionId });
    const accepted = await this.send<m.SessionAccepted>(
      { method: "POST", route, path, body: request, idempotent: true },
      options,
    );
    if (!options.wait) return accepted;
    const deadline = Date.now() + (options.waitTimeoutMs ?? 60_000);
    for (;;) {
      const status = await this.getSession(sessionId, options);
      if (status.status === "processed" || status.status === "failed") return status;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SessionWaitTimeout(`session not processed within ${options.waitTimeoutMs ?? 60_000} ms`, status);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollIntervalMs ?? 500, left)));
    }
  }

  getSession(sessionId: string, options?: CallOptions): Promise<m.SessionStatus> {
    const route = "/v1/sessions/{session_id}";
    return this.send({ method: "GET", route, path: pathOf(route, { session_id: sessionId }), idempotent: true }, options);
  }

  /**
   * Why every statement of a closed session was, or was not, kept: each one masked, with its
   * decision, reason code and the model's score.
   */
  getExtraction(sessionId: string, options?: CallOptions): Promise<m.ExtractionReport> {
    const route = "/v1/sessions/{session_id}/extraction";
    return this.send({ method: "GET", route, path: pathOf(route, { session_id: sessionId }), idempotent: true }, options);
  }

  /** Keep a short-lived value for an open session (masked, screened, hard TTL). */
  workingSet(
    sessionId: string,
    key: string,
    value: unknown,
    target: { subject_id: string; ttl_seconds?: number | null },
    options?: CallOptions,
  ): Promise<m.WorkingItem> {
    const route = "/v1/sessions/{session_id}/working/{key}";
    const path = pathOf(route, { session_id: sessionId, key });
    const body: Record<string, unknown> = { subject_id: target.subject_id, value };
    if (target.ttl_seconds !== null && target.ttl_seconds !== undefined) body.ttl_seconds = target.ttl_seconds;
    return this.send({ method: "PUT", route, path, body, idempotent: true }, options);
  }

  workingGet(sessionId: string, options?: CallOptions): Promise<m.WorkingSession> {
    const route = "/v1/sessions/{session_id}/working";
    return this.send({ method: "GET", route, path: pathOf(route, { session_id: sessionId }), idempotent: true }, options);
  }

  async workingDelete(sessionId: string, key: string, options?: CallOptions): Promise<void> {
    const route = "/v1/sessions/{session_id}/working/{key}";
    const path = pathOf(route, { session_id: sessionId, key });
    await this.send({ method: "DELETE", route, path, idempotent: true }, options);
  }

  // -- review --------------------------------------------------------------------------------

  /** Pending approvals and contested records of the tenant (reviewer). */
  reviewQueue(page: Page = {}, options?: CallOptions): Promise<m.ReviewPage> {
    return this.send({ method: "GET", route: "/v1/review", path: "/v1/review", query: { ...page }, idempotent: true }, options);
  }

  async *iterReviewQueue(pageSize?: number, options?: CallOptions): AsyncGenerator<m.ReviewItem> {
    yield* pages((cursor) => this.reviewQueue({ cursor, limit: pageSize }, options), (p) => p.items);
  }

  /**
   * Approve a pending or contested memory. A commercial term whose review item lists
   * `family_active` needs `supersedes` (those it replaces) or `independent_reason` for the rest.
   */
  approve(memoryId: string, decision: m.ReviewDecision = {}, options?: CallOptions): Promise<m.ReviewResult> {
    return this.review("approve", memoryId, decision, options);
  }

  reject(memoryId: string, decision: Pick<m.ReviewDecision, "note" | "evidence_ref"> = {}, options?: CallOptions): Promise<m.ReviewResult> {
    return this.review("reject", memoryId, decision, options);
  }

  reinstate(memoryId: string, decision: Pick<m.ReviewDecision, "note" | "evidence_ref"> = {}, options?: CallOptions): Promise<m.ReviewResult> {
    return this.review("reinstate", memoryId, decision, options);
  }

  private review(verb: string, memoryId: string, decision: m.ReviewDecision, options?: CallOptions): Promise<m.ReviewResult> {
    const route = `/v1/memories/{memory_id}/${verb}`;
    const body = Object.fromEntries(Object.entries(decision).filter(([, v]) => v !== null && v !== undefined));
    return this.send({ method: "POST", route, path: pathOf(route, { memory_id: memoryId }), body, idempotent: false }, options);
  }

  // -- privacy and holds ---------------------------------------------------------------------

  /** Erase everything held about a subject (privacy officer); idempotent by `request_reference`. */
  requestErasure(subjectId: string, request: m.ErasureRequest, options?: CallOptions): Promise<m.ErasureStatus> {
    const route = "/v1/subjects/{subject_id}/erasure";
    const path = pathOf(route, { subject_id: subjectId });
    return this.send({ method: "POST", route, path, body: request, idempotent: false }, options);
  }

  getErasure(erasureId: string, options?: CallOptions): Promise<m.ErasureStatus> {
    const route = "/v1/erasures/{erasure_id}";
    return this.send({ method: "GET", route, path: pathOf(route, { erasure_id: erasureId }), idempotent: true }, options);
  }

  legalHoldSubject(subjectId: string, hold: m.LegalHold, options?: CallOptions): Promise<m.SubjectHold> {
    const route = "/v1/subjects/{subject_id}/legal-hold";
    const path = pathOf(route, { subject_id: subjectId });
    return this.send({ method: "POST", route, path, body: hold, idempotent: true }, options);
  }

  legalHoldMemory(memoryId: string, hold: m.LegalHold, options?: CallOptions): Promise<m.MemoryHold> {
    const route = "/v1/memories/{memory_id}/legal-hold";
    const path = pathOf(route, { memory_id: memoryId });
    return this.send({ method: "POST", route, path, body: hold, idempotent: true }, options);
  }

  /** One page of everything held about a subject (privacy officer). */
  exportSubject(subjectId: string, page: Page = {}, options?: CallOptions): Promise<m.SubjectExport> {
    const route = "/v1/subjects/{subject_id}/export";
    const path = pathOf(route, { subject_id: subjectId });
    return this.send({ method: "GET", route, path, query: { ...page }, idempotent: true }, options);
  }

  /** Every page of a subject's export. */
  async *iterExport(subjectId: string, pageSize?: number, options?: CallOptions): AsyncGenerator<m.SubjectExport> {
    yield* pages((cursor) => this.exportSubject(subjectId, { cursor, limit: pageSize }, options), (p) => [p]);
  }

  // -- audit, policy, health -----------------------------------------------------------------

  /** Audit events (auditor): ids, actor, type, reason, time and the hash chain; no content. */
  audit(
    filter: Page & { subject_id?: string | null; memory_id?: string | null; since?: string | Date | null } = {},
    options?: CallOptions,
  ): Promise<m.AuditPage> {
    return this.send({ method: "GET", route: "/v1/audit", path: "/v1/audit", query: { ...filter }, idempotent: true }, options);
  }

  async *iterAudit(
    filter: { subject_id?: string | null; memory_id?: string | null; since?: string | Date | null; pageSize?: number } = {},
    options?: CallOptions,
  ): AsyncGenerator<m.AuditEvent> {
    const { pageSize, ...rest } = filter;
    yield* pages((cursor) => this.audit({ ...rest, cursor, limit: pageSize }, options), (p) => p.events);
  }

  getPolicy(options?: CallOptions): Promise<m.PolicyView> {
    return this.send({ method: "GET", route: "/v1/policy", path: "/v1/policy", idempotent: true }, options);
  }

  putPolicy(change: m.PolicyChange, options?: CallOptions): Promise<m.PolicyView> {
    const body = { overrides: {}, ...change };
    return this.send({ method: "PUT", route: "/v1/policy", path: "/v1/policy", body, idempotent: true }, options);
  }

  health(options?: CallOptions): Promise<m.Health> {
    return this.send({ method: "GET", route: "/v1/health", path: "/v1/health", idempotent: true }, options);
  }

  /** The service's OpenAPI document. */
  openapi(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.send({ method: "GET", route: "/v1/openapi.json", path: "/v1/openapi.json", idempotent: true }, options);
  }
}

/**
 * One conversation with a subject: `append` keeps its turns in this process (nothing is sent),
 * `setWorking` keeps short-lived values on the service, and `close` hands the transcript over.
 */
export class Session {
  readonly sessionId: string;
  readonly subjectId: string;
  readonly ticketId: string | null;
  readonly channel: string | null;
  /** When the conversation started: the transcript's `occurred_at`. */
  readonly startedAt: Date;
  private readonly memory: MemoryClient;
  private readonly kept: m.Turn[] = [];

  constructor(memory: MemoryClient, options: OpenSessionOptions) {
    if (!options.subject_id) throw new TypeError("subject_id: must be a non-empty string");
    this.memory = memory;
    this.subjectId = options.subject_id;
    this.sessionId = options.session_id ?? `sess-${randomId()}`;
    this.ticketId = options.ticket_id ?? null;
    this.channel = options.channel ?? null;
    this.startedAt = new Date();
  }

  /** The turns appended so far (a copy). */
  get turns(): m.Turn[] {
    return this.kept.map((t) => ({ ...t }));
  }

  /** Add a turn to the transcript (kept here until `close`). */
  append(speaker: m.Speaker, text: string): this {
    this.kept.push({ speaker, text });
    return this;
  }

  /** A note about the subject in this session (`MemoryClient.remember` with the session's id). */
  remember(content: string, hints: Omit<m.RememberHints, "session_id"> = {}, options?: CallOptions): Promise<m.WriteResult> {
    return this.memory.remember(this.subjectId, content, { ...hints, session_id: this.sessionId }, options);
  }

  /** Context for the next turn, with this session's working values. */
  retrieve(query: string, request: Omit<m.RetrieveRequest, "subject_id" | "query" | "session_id"> = {}, options?: CallOptions): Promise<m.RetrieveResult> {
    const ticket = this.ticketId ? { ticket_id: this.ticketId } : {};
    return this.memory.retrieve({ ...ticket, ...request, subject_id: this.subjectId, query, session_id: this.sessionId }, options);
  }

  setWorking(key: string, value: unknown, ttlSeconds?: number, options?: CallOptions): Promise<m.WorkingItem> {
    return this.memory.workingSet(this.sessionId, key, value, { subject_id: this.subjectId, ttl_seconds: ttlSeconds ?? null }, options);
  }

  working(options?: CallOptions): Promise<m.WorkingSession> {
    return this.memory.workingGet(this.sessionId, options);
  }

  /** The transcript as `closeSession` sends it. */
  request(): m.CloseSessionRequest {
    const request: m.CloseSessionRequest = { subject_id: this.subjectId, occurred_at: this.startedAt.toISOString(), turns: this.turns };
    if (this.ticketId) request.ticket_id = this.ticketId;
    if (this.channel) request.channel = this.channel;
    return request;
  }

  /** Hand the transcript over; with `wait: true`, resolve once extraction is done. */
  close(options?: WaitOptions & { wait?: false }): Promise<m.SessionAccepted>;
  close(options: WaitOptions & { wait: true }): Promise<m.SessionStatus>;
  close(options: WaitOptions = {}): Promise<m.SessionAccepted | m.SessionStatus> {
    if (options.wait) return this.memory.closeSession(this.sessionId, this.request(), { ...options, wait: true });
    return this.memory.closeSession(this.sessionId, this.request(), { ...options, wait: false });
  }

  /** Why each statement of the closed session was, or was not, kept. */
  extraction(options?: CallOptions): Promise<m.ExtractionReport> {
    return this.memory.getExtraction(this.sessionId, options);
  }
}

/** The type of a note that names none: a preference or fact with a slot, else an observation. */
export function defaultType(slot: string | null | undefined): m.MemoryType {
  if (!slot) return "observation";
  return slot.startsWith("preference.") ? "preference" : "fact";
}

function randomId(): string {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (webCrypto?.randomUUID) return webCrypto.randomUUID();
  if (webCrypto?.getRandomValues) {
    return Array.from(webCrypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  throw new Error("no secure random source: pass session_id");
}

async function* pages<P extends { next_cursor?: string | null }, T>(
  fetchPage: (cursor: string | null) => Promise<P>,
  itemsOf: (page: P) => T[],
): AsyncGenerator<T> {
  let cursor: string | null = null;
  for (;;) {
    const page: P = await fetchPage(cursor);
    yield* itemsOf(page);
    if (!page.next_cursor || page.next_cursor === cursor) return;
    cursor = page.next_cursor;
  }
}

/**
 * How a request is sent: path values percent-encoded once, the retry policy (429 and 503 after
 * `Retry-After`, lost connections for routes safe to repeat), a timeout per attempt through an
 * `AbortSignal`, and an error answer turned into its typed error. Nothing here logs: requests
 * carry memory content, and the service's audit trail is the record.
 */

import { MemoryApiError, MemoryTransportError, errorClass } from "./errors.js";

export const VERSION = "0.1.0";
export const USER_AGENT = `agent-memory-client-typescript/${VERSION}`;
export const DEFAULT_URL = "http://127.0.0.1:8080";

/** When to send a request again. */
export interface RetryPolicy {
  /** Retries after a 429 or 503, or a lost connection (default 3). */
  maxRetries: number;
  /** Seconds of the first backoff when the service gives no `Retry-After` (default 0.5, doubling). */
  backoffBase: number;
  /** Longest backoff, in seconds (default 8). */
  backoffMax: number;
  /** Asked to wait longer than this many seconds, the client gives up at once (default 30). */
  maxRetryAfter: number;
  /** The statuses retried (default 429 and 503). */
  statuses: readonly number[];
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({
  maxRetries: 3,
  backoffBase: 0.5,
  backoffMax: 8,
  maxRetryAfter: 30,
  statuses: Object.freeze([429, 503]),
});

/** No retries: every answer and failure is thrown as it comes. */
export const NO_RETRIES: RetryPolicy = Object.freeze({ ...DEFAULT_RETRY, maxRetries: 0 });

/** Per call: a caller's signal (aborting it stops the call) and a timeout per attempt. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Milliseconds one attempt may take (default: the client's `timeoutMs`). */
  timeoutMs?: number;
}

/** One request ready to send. */
export interface Call {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** The route's template, e.g. `/v1/memories/{memory_id}`: named in errors, never its values. */
  route: string;
  path: string;
  query?: Record<string, string | number | boolean | Date | null | undefined>;
  body?: unknown;
  /**
   * Safe to send again after a lost answer: reads, PUT/DELETE, and writes the service
   * de-duplicates (the write gateway by idempotency key, a session's close by its id).
   */
  idempotent: boolean;
}

/** The template with each value percent-encoded exactly once (`@`, `:`, `+` and `/` included). */
export function encodePath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (typeof value !== "string" || value === "") {
      throw new TypeError(`${name}: must be a non-empty string`);
    }
    return encodeURIComponent(value);
  });
}

/** Seconds from a `Retry-After` header: delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const when = Date.parse(text);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - now) / 1000);
}

/** Seconds before retry number `attempt` (1-based) when the service did not say: jittered exponential. */
export function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.backoffMax, policy.backoffBase * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** The typed error for an error answer: the body's `{"error": {...}}` fields when present. */
export async function errorFromResponse(response: Response): Promise<MemoryApiError> {
  let payload: unknown = null;
  try {
    payload = JSON.parse(await response.text());
  } catch {
    payload = null;
  }
  const raw = (payload as { error?: unknown } | null)?.error;
  const error = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const text = (v: unknown): string | null => (typeof v === "string" ? v : null);
  const ErrorClass = errorClass(response.status);
  return new ErrorClass({
    status: response.status,
    code: text(error.code),
    message: text(error.message) ?? response.statusText ?? "",
    field: text(error.field),
    reason: text(error.reason),
    requestId: text(error.request_id) ?? response.headers.get("x-amzn-requestid"),
    retryAfter: parseRetryAfter(response.headers.get("retry-after")),
    body: payload,
  });
}

function queryString(query: Call["query"]): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === null || value === undefined) continue;
    params.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Whether a fetch failure happened before the request was sent (nothing reached the service). */
function neverSent(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" && ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"].includes(code);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface TransportOptions {
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: typeof fetch;
}

/**
 * Sends a call with the retries the policy allows; resolves to the parsed JSON body (undefined
 * for a 204), or rejects with a `MemoryApiError` subclass or a `MemoryTransportError`. A caller's
 * aborted signal rejects with the signal's reason, unretried.
 */
export async function send(transport: TransportOptions, call: Call, options: CallOptions = {}): Promise<unknown> {
  const url = transport.baseUrl + call.path + queryString(call.query);
  const headers: Record<string, string> = { ...transport.headers };
  let body: string | undefined;
  if (call.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(call.body);
  }
  const timeoutMs = options.timeoutMs ?? transport.timeoutMs;
  const policy = transport.retry;
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error("timeout"));
    }, timeoutMs);
    const onCallerAbort = (): void => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) {
      clearTimeout(timer);
      throw options.signal.reason;
    }
    options.signal?.addEventListener("abort", onCallerAbort, { once: true });
    let response: Response;
    try {
      response = await transport.fetch(url, { method: call.method, headers, body, signal: controller.signal });
      if (!policy.statuses.includes(response.status) || attempt > policy.maxRetries) {
        return await decode(response);
      }
    } catch (error) {
      if (error instanceof MemoryApiError) throw error;
      if (options.signal?.aborted) throw options.signal.reason;
      const sendAgain = attempt <= policy.maxRetries && (neverSent(error) || call.idempotent);
      if (!sendAgain) {
        const why = timedOut ? `no answer within ${timeoutMs} ms` : describeFailure(error);
        throw new MemoryTransportError(`${call.method} ${call.route}: ${why}`, { cause: error });
      }
      await sleep(backoff(policy, attempt) * 1000, options.signal);
      continue;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onCallerAbort);
    }
    // a 429 or 503 the policy retries: after the service's Retry-After, or a backoff
    const asked = parseRetryAfter(response.headers.get("retry-after"));
    if (asked !== null && asked > policy.maxRetryAfter) {
      throw await errorFromResponse(response);
    }
    await response.body?.cancel().catch(() => undefined);
    await sleep((asked ?? backoff(policy, attempt)) * 1000, options.signal);
  }
}

function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.name : "request failed";
}

async function decode(response: Response): Promise<unknown> {
  if (response.status >= 400) throw await errorFromResponse(response);
  if (response.status === 204) return undefined;
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

/** The environment's variables, where the runtime has them (Node, Deno's compatibility, Bun). */
export function environment(): Record<string, string | undefined> {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env ?? {};
}

/** A random idempotency key, so a retried write is one write (the service replays the first answer). */
export async function newIdempotencyKey(): Promise<string> {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (webCrypto?.randomUUID) return `client:${webCrypto.randomUUID()}`;
  const moduleName = "node:crypto"; // Node 18 has no global crypto.randomUUID
  const nodeCrypto = (await import(moduleName)) as { randomUUID: () => string };
  return `client:${nodeCrypto.randomUUID()}`;
}

/**
 * A typed TypeScript client for the Agent Memory Service: `MemoryClient`, one method per HTTP
 * route, errors as `MemoryApiError` subclasses. No runtime dependencies: the global `fetch`
 * (Node 18 or later). Tools for the Vercel AI SDK are in `@agent-memory/client/ai-sdk`.
 */

export { MemoryClient, Session, defaultType } from "./client.js";
export type { MemoryClientOptions, OpenSessionOptions, Page, WaitOptions } from "./client.js";
export {
  Conflict,
  Forbidden,
  InvalidRequest,
  MemoryApiError,
  MemoryClientError,
  MemoryTransportError,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServerError,
  SessionWaitTimeout,
  Unauthenticated,
  Unavailable,
  UnsupportedMediaType,
  errorClass,
} from "./errors.js";
export type { ApiErrorDetails } from "./errors.js";
export type * from "./models.js";
export {
  AGENT_SOURCE_KINDS,
  GATEWAY_DECIDES,
  RECALLED_IS_DATA,
  Unscoped,
  boundSubject,
  describeDecision,
  errorPayload,
  recallNote,
  recallText,
  tokenSubjects,
  writeSummary,
} from "./tooling.js";
export type { AgentSourceKind, Refusal, WriteSummary } from "./tooling.js";
export { DEFAULT_RETRY, DEFAULT_URL, NO_RETRIES, VERSION, parseRetryAfter } from "./transport.js";
export type { CallOptions, RetryPolicy } from "./transport.js";

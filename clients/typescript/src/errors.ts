/**
 * Typed errors: one class per HTTP status the service answers with, each carrying the error
 * body's `code`, `message`, `field`, `reason`, `limit` and `request_id` (`{"error": {...}}`), and the
 * `Retry-After` the service asked for on a 429 or 503. Mirrors the Python client's classes.
 */

/** Anything this client throws on purpose. */
export class MemoryClientError extends Error {
  override name = "MemoryClientError";
}

/** The service could not be reached, or did not answer in time (after the retries allowed). */
export class MemoryTransportError extends MemoryClientError {
  override name = "MemoryTransportError";
}

/** What a `MemoryApiError` is built from: the status and the error body's fields. */
export interface ApiErrorDetails {
  status: number;
  code?: string | null;
  message?: string;
  field?: string | null;
  reason?: string | null;
  requestId?: string | null;
  retryAfter?: number | null;
  body?: unknown;
}

/** The service answered with an error status. */
export class MemoryApiError extends MemoryClientError {
  override name = "MemoryApiError";
  static readonly defaultCode: string = "error";

  /** The HTTP status. */
  readonly status: number;
  /** The error body's `code` (`invalid_request`, `unauthorized_memory_mutation`...). */
  readonly code: string;
  /** The service's own message, without the status and code `message` adds. */
  readonly serviceMessage: string;
  /** The field the request got wrong (400/422, 409 on a session's `subject_id`...). */
  readonly field: string | null;
  /** A machine-readable why (a 409 on a write: `tombstoned`). */
  readonly reason: string | null;
  readonly requestId: string | null;
  /** Seconds the service asked to wait (`Retry-After`, on 429 and 503). */
  readonly retryAfter: number | null;
  /** The parsed error body, as the service sent it. */
  readonly body: unknown;

  /** A 429's limit: the value of the policy key `field` names (requests per second, memories...). */
  get limit(): number | null {
    const error = (this.body as { error?: { limit?: unknown } } | null)?.error;
    return typeof error?.limit === "number" ? error.limit : null;
  }

  constructor(details: ApiErrorDetails) {
    const code = details.code || (new.target as typeof MemoryApiError).defaultCode;
    const text = details.message ?? "";
    const extras = [
      details.field ? `field=${details.field}` : "",
      details.requestId ? `request_id=${details.requestId}` : "",
    ].filter(Boolean);
    const head = text ? `${details.status} ${code}: ${text}` : `${details.status} ${code}`;
    super(extras.length ? `${head} (${extras.join(", ")})` : head);
    this.status = details.status;
    this.code = code;
    this.serviceMessage = text;
    this.field = details.field ?? null;
    this.reason = details.reason ?? null;
    this.requestId = details.requestId ?? null;
    this.retryAfter = details.retryAfter ?? null;
    this.body = details.body;
  }

}

/** 400 or 422: the request breaks the contract; `field` names what. */
export class InvalidRequest extends MemoryApiError {
  override name = "InvalidRequest";
  static override readonly defaultCode = "invalid_request";
}

/** 401: no token, or one the service does not accept (the message names the check that failed). */
export class Unauthenticated extends MemoryApiError {
  override name = "Unauthenticated";
  static override readonly defaultCode = "unauthenticated";
}

/** 403: the token's role may not do this (`forbidden` for reads, `unauthorized_memory_mutation` for writes). */
export class Forbidden extends MemoryApiError {
  override name = "Forbidden";
  static override readonly defaultCode = "forbidden";
}

/** 404: unknown, or not visible to this token (the two look the same on purpose). */
export class NotFound extends MemoryApiError {
  override name = "NotFound";
  static override readonly defaultCode = "not_found";
}

/** 409: the record's state does not allow this (e.g. approving one already decided). */
export class Conflict extends MemoryApiError {
  override name = "Conflict";
  static override readonly defaultCode = "conflict";
}

/** 413: the body is over the route's limit. */
export class PayloadTooLarge extends MemoryApiError {
  override name = "PayloadTooLarge";
  static override readonly defaultCode = "payload_too_large";
}

/** 415: the body was not sent as application/json. */
export class UnsupportedMediaType extends MemoryApiError {
  override name = "UnsupportedMediaType";
  static override readonly defaultCode = "unsupported_media_type";
}

/** 429, after the retries allowed; `retryAfter` is what the service asked for. */
export class RateLimited extends MemoryApiError {
  override name = "RateLimited";
  static override readonly defaultCode = "rate_limited";
}

/** 500 and other 5xx than 503. */
export class ServerError extends MemoryApiError {
  override name = "ServerError";
  static override readonly defaultCode = "internal_error";
}

/** 503, after the retries allowed: a dependency (the database) is out; `retryAfter` says when to try again. */
export class Unavailable extends MemoryApiError {
  override name = "Unavailable";
  static override readonly defaultCode = "unavailable";
}

/**
 * `closeSession(..., { wait: true })` gave up before extraction finished; `session` is the last
 * status read (the session stays queued and is processed anyway).
 */
export class SessionWaitTimeout extends MemoryClientError {
  override name = "SessionWaitTimeout";
  readonly session: unknown;

  constructor(message: string, session: unknown) {
    super(message);
    this.session = session;
  }
}

const ERRORS_BY_STATUS: Record<number, typeof MemoryApiError> = {
  400: InvalidRequest,
  401: Unauthenticated,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  413: PayloadTooLarge,
  415: UnsupportedMediaType,
  422: InvalidRequest,
  429: RateLimited,
  503: Unavailable,
};

/** The error class for an error status. */
export function errorClass(status: number): typeof MemoryApiError {
  return ERRORS_BY_STATUS[status] ?? (status >= 500 ? ServerError : MemoryApiError);
}

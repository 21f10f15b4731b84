/**
 * Request and response shapes of the HTTP API, as the JSON goes over the wire (snake_case field
 * names). Responses may carry fields this version does not declare: a newer service never breaks
 * an older client, and every response interface allows them.
 */

export type MemoryType = "fact" | "preference" | "episode" | "resolution" | "observation" | "sentiment" | "commitment";
export type Authority =
  | "system_of_record"
  | "human_verified"
  | "customer_confirmed"
  | "confirmed_outcome"
  | "customer_claim"
  | "agent_inference";
export type Sensitivity = "public" | "internal" | "confidential" | "restricted";
export type Scope = "subject" | "ticket" | "tenant";
export type Speaker = "customer" | "agent" | "system";
export type CommitmentOutcome = "done" | "cancelled";
export type Status =
  | "candidate"
  | "active"
  | "pending_approval"
  | "contested"
  | "quarantined"
  | "rejected"
  | "superseded"
  | "expired"
  | "tombstoned"
  | "deleted";
export type SessionState = "queued" | "processing" | "processed" | "failed";
export type Decision = "admitted" | "pending_approval" | "contested" | "quarantined" | "rejected" | "duplicate";
/** A date-time as ISO 8601 text (`2026-09-01T00:00:00Z`); requests also take a `Date`. */
export type DateTime = string;
type DateInput = string | Date;

/** Fields a newer service may add to an answer. */
interface Open {
  [field: string]: unknown;
}

// -- requests --------------------------------------------------------------------------------

export interface SourceSpan {
  turn: number;
  start: number;
  end: number;
}

/** Where a memory comes from; `kind` is its authority (only `integration` may assert `system_of_record`). */
export interface Source {
  kind: Authority;
  system?: string | null;
  reference?: string | null;
  span?: SourceSpan | null;
}

/** A memory proposed to the write gateway; the gateway decides what becomes of it. */
export interface MemoryWrite {
  subject_id: string;
  type: MemoryType;
  content: string;
  source: Source;
  category?: string | null;
  slot?: string | null;
  value?: Record<string, unknown>;
  scope?: Scope;
  ticket_id?: string | null;
  session_id?: string | null;
  effective_at?: DateInput | null;
  expires_at?: DateInput | null;
  confidence?: number;
  confidence_basis?: string | null;
  importance?: number;
  sensitivity?: Sensitivity | null;
  idempotency_key?: string | null;
  lineage_keys?: string[];
  extractor?: string | null;
  extractor_version?: string | null;
  actor?: string | null;
  flags?: "untrusted_instruction"[];
}

/**
 * A content-only note: a subject, one sentence and optionally its session. The service classifies
 * it and admits it under the authority the token allows (an agent-reported `customer_claim`).
 */
export interface MemoryNote {
  subject_id: string;
  content: string;
  session_id?: string | null;
}

/** Hints for `remember`: with any of them but `session_id`, the note goes as a typed write. */
export interface RememberHints {
  session_id?: string | null;
  ticket_id?: string | null;
  type?: MemoryType | null;
  slot?: string | null;
  category?: string | null;
  source?: Source | null;
}

export interface RetrieveRequest {
  subject_id: string;
  query?: string;
  ticket_id?: string | null;
  session_id?: string | null;
  top_k?: number | null;
  max_tokens?: number | null;
  types?: MemoryType[] | null;
  slots?: string[] | null;
}

export interface ResolutionSearchRequest {
  query: string;
  top_k?: number;
  subject_id?: string | null;
  max_tokens?: number | null;
}

export interface Turn {
  speaker: Speaker;
  text: string;
}

export interface CloseSessionRequest {
  subject_id: string;
  occurred_at: DateInput;
  turns: Turn[];
  ticket_id?: string | null;
  channel?: string | null;
}

export interface ReviewDecision {
  note?: string | null;
  evidence_ref?: string | null;
  /** Approving a commercial term whose review item lists `family_active`: the ids it replaces. */
  supersedes?: string[] | null;
  /** ... and, for those it does not replace, why it stands beside them. */
  independent_reason?: string | null;
}

export interface CloseCommitment {
  outcome?: CommitmentOutcome;
  closed_at?: DateInput | null;
  note?: string | null;
}

export interface ErasureRequest {
  reason: string;
  request_reference?: string | null;
}

export interface LegalHold {
  hold: boolean;
  reason: string;
}

export interface PolicyChange {
  profile: string;
  overrides?: Record<string, unknown>;
}

// -- responses -------------------------------------------------------------------------------

export interface SourceView extends Open {
  kind: string;
  system?: string | null;
  reference?: string | null;
  span?: SourceSpan | null;
}

/** A memory record as reads show it (no embedding vector). */
export interface MemoryRecord extends Open {
  id: string;
  tenant_id: string;
  subject_id: string;
  type: string;
  category: string;
  content: string;
  source: SourceView;
  actor: string;
  authority: string;
  confidence: number;
  status: string;
  created_at: DateTime;
  effective_at: DateTime;
  content_hash: string;
  verified: boolean;
  /** The context section retrieval would put it in. */
  section?: "verified_facts" | "relevant" | "supporting" | "unverified";
  scope?: string;
  ticket_id?: string | null;
  session_id?: string | null;
  slot?: string | null;
  value?: Record<string, unknown>;
  extractor?: string | null;
  extractor_version?: string | null;
  confidence_basis?: string | null;
  importance?: number;
  sensitivity?: string;
  flags?: string[];
  reasons?: string[];
  valid_to?: DateTime | null;
  last_validated_at?: DateTime | null;
  expires_at?: DateTime | null;
  legal_hold?: boolean;
  version?: number;
  supersedes_id?: string | null;
  superseded_by_id?: string | null;
  superseded_at?: DateTime | null;
  verified_by?: string | null;
  verified_at?: DateTime | null;
  evidence_ref?: string | null;
  lineage_keys?: string[];
  embedding_model?: string | null;
  needs_revalidation?: boolean;
}

export interface HistoryEntry extends Open {
  id: string;
  version: number;
  status: string;
  authority: string;
  created_at: DateTime;
  effective_at: DateTime;
  superseded_at?: DateTime | null;
  supersedes_id?: string | null;
  superseded_by_id?: string | null;
  content?: string | null;
  source?: SourceView | null;
  verified_by?: string | null;
  verified_at?: DateTime | null;
  evidence_ref?: string | null;
}

/** One memory with its version chain (`GET /v1/memories/{id}`). */
export interface MemoryDetail extends MemoryRecord {
  history: HistoryEntry[];
}

/** The gateway's decision on a proposed memory. */
export interface WriteResult extends Open {
  decision: Decision | string;
  reasons: string[];
  memory?: MemoryRecord | null;
  superseded: string[];
  /** When not admitted: one sentence a model can relay. */
  explanation?: string | null;
  /** A content-only note: the `type`, `category` and `slot` the service gave it. */
  classified_as?: { type?: string; category?: string; slot?: string | null } | null;
}

export interface RetrievedMemory extends Open {
  id: string;
  type: string;
  category: string;
  content: string;
  /** verified_facts | relevant | supporting | unverified */
  section: string;
  score: number;
  rank?: number | null;
  authority: string;
  verified: boolean;
  confidence: number;
  effective_at: DateTime;
  source: SourceView;
  slot?: string | null;
  similarity?: number | null;
  expires_at?: DateTime | null;
  session_id?: string | null;
  contested?: boolean;
  needs_revalidation?: boolean;
  commitment?: Record<string, unknown> | null;
}

export interface LiveValue extends Open {
  field: string;
  value?: unknown;
  as_of?: string | null;
  overrides?: string[];
}

export interface WorkingItem extends Open {
  key: string;
  value: unknown;
  expires_at: DateTime;
}

/** The context for the next turn: `context` is data about the customer, never instructions. */
export interface RetrieveResult extends Open {
  subject_id: string;
  context: string;
  memories: RetrievedMemory[];
  live: LiveValue[];
  excluded: Record<string, number>;
  /** The similarity a memory needs to count as relevant to this query. */
  relevance_floor?: number | null;
  /** The similarity a memory sharing a word with the query needs to count as relevant. */
  keyword_bar?: number | null;
  /** The memories counted as `below_threshold`, by why (`below_similarity_floor`, ...). */
  relevance_excluded?: Record<string, number> | null;
  tokens: number;
  max_tokens: number;
  working?: WorkingItem[] | null;
  live_unavailable?: boolean;
  ticket_unavailable?: boolean;
  ticket_not_found?: boolean;
}

export interface Resolution extends Open {
  id: string;
  type: string;
  category: string;
  content: string;
  similarity: number;
  authority: string;
  confidence: number;
  effective_at: DateTime;
  source_kind: string;
}

export interface ResolutionSearchResult extends Open {
  resolutions: Resolution[];
  context: string;
  tokens: number;
  max_tokens: number;
}

export interface SessionAccepted extends Open {
  session_id: string;
  status: string;
}

export interface SessionStatus extends Open {
  session_id: string;
  status: SessionState | string;
  subject_id?: string | null;
  admitted: number;
  pending_approval: number;
  rejected: number;
  quarantined: number;
  contested?: number;
  duplicate?: number;
  not_stored?: number;
  memory_ids: string[];
  attempts?: number;
  extractor?: string | null;
  /** Why extraction failed (status `failed`). */
  reason?: string | null;
}

/** One statement of a closed session (identifiers masked) and what became of it. */
export interface ExtractedStatement extends Open {
  turn: number;
  start: number;
  end: number;
  speaker: string;
  text: string;
  /** admitted | pending_approval | quarantined | not_stored | superseded | duplicate */
  decision: string;
  reason: string;
  score?: number | null;
  memory_id?: string | null;
  type?: string | null;
  slot?: string | null;
  withheld?: boolean;
}

/** Why every statement of a session was, or was not, kept (while the transcript is retained). */
export interface ExtractionReport extends Open {
  session_id: string;
  subject_id: string;
  status: string;
  available: boolean;
  statements: ExtractedStatement[];
}

export interface MemoryPage extends Open {
  subject_id: string;
  memories: MemoryRecord[];
  next_cursor?: string | null;
}

export interface ReviewItem extends Open {
  memory: MemoryRecord;
  active?: MemoryRecord | null;
  diff?: Record<string, unknown> | null;
  evidence_required?: boolean;
  /** The account's active terms of the same commercial family in other slots. */
  family_active?: MemoryRecord[] | null;
  /** The subject's other items waiting for review that say nearly the same, newest first. */
  similar_pending?: string[] | null;
}

export interface ReviewPage extends Open {
  items: ReviewItem[];
  next_cursor?: string | null;
}

export interface ReviewResult extends Open {
  memory: MemoryRecord;
  superseded: string[];
}

export interface CommitmentClosed extends Open {
  memory: MemoryRecord;
}

export interface ErasureStep extends Open {
  name: string;
  status: string;
  count?: number | null;
  attempts?: number;
}

export interface ErasureStatus extends Open {
  erasure_id: string;
  subject_id: string;
  /** running | verified | failed */
  status: string;
  deadline: DateTime;
  deadline_passed?: boolean;
  steps: ErasureStep[];
  receipt?: Record<string, unknown> | null;
  reason?: string | null;
  duplicate_of_earlier_request?: boolean;
  completes_erasure_id?: string | null;
  completed_by?: string[] | null;
}

export interface AuditEvent extends Open {
  tenant_id: string;
  seq: number;
  id: string;
  event_type: string;
  actor: string;
  created_at: DateTime;
  prev_hash: string;
  hash: string;
  memory_id?: string | null;
  subject_id?: string | null;
  reason?: string | null;
  payload: Record<string, unknown>;
  free_text?: Record<string, string> | null;
  redacted?: string | null;
}

export interface AuditPage extends Open {
  events: AuditEvent[];
  next_cursor?: string | null;
}

export interface SubjectHold extends Open {
  subject_id: string;
  legal_hold: boolean;
  hold_id?: string | null;
  erasure_id?: string | null;
}

export interface MemoryHold extends Open {
  memory_id: string;
  legal_hold: boolean;
  hold_id?: string | null;
  erasure_id?: string | null;
}

export interface PolicyView extends Open {
  tenant_id: string;
  profile: string;
  overrides: Record<string, unknown>;
  source: string;
  effective: Record<string, unknown>;
  presets: string[];
  overrides_refused?: boolean;
}

export interface Health extends Open {
  status: string;
  database: string;
  embedder: string;
  version: string;
}

export interface WorkingSession extends Open {
  session_id: string;
  subject_id?: string | null;
  items: WorkingItem[];
}

export interface ForgetResult extends Open {
  id: string;
  status: string;
}

export interface LegalHoldView extends Open {
  held: boolean;
  hold_id?: string | null;
  reason?: string | null;
  set_by?: string | null;
  set_at?: DateTime | null;
}

export interface TombstoneCounts extends Open {
  deletions: number;
  erasures: number;
  deleted_memories: number;
}

export interface ExportedMemory extends MemoryRecord {
  deleted_at?: DateTime | null;
}

export interface ExportedSession extends Open {
  session_id: string;
  occurred_at: DateTime;
  status: string;
  turns: number;
  transcript: { key?: string | null; sha256: string };
  created_at: DateTime;
  updated_at: DateTime;
  ticket_id?: string | null;
  channel?: string | null;
  memory_ids?: string[];
  outcome?: Record<string, unknown>;
  failure_reason?: string | null;
  extractor?: string | null;
}

export interface ExportedErasure extends Open {
  erasure_id: string;
  status: string;
  reason: string;
  requested_by: string;
  deadline: DateTime;
  created_at: DateTime;
  request_reference?: string | null;
  receipt?: Record<string, unknown> | null;
  failure_reason?: string | null;
  completed_at?: DateTime | null;
}

export interface ExportedEvent extends Open {
  seq: number;
  id: string;
  event_type: string;
  actor: string;
  created_at: DateTime;
  memory_id?: string | null;
  reason?: string | null;
  payload: Record<string, unknown>;
  redacted?: string | null;
  free_text?: Record<string, string> | null;
}

export interface ExportedWorkingValue extends Open {
  session_id: string;
  key: string;
  value: unknown;
  expires_at: DateTime;
}

/** One page of everything held about a subject; `next_cursor` is null on the last page. */
export interface SubjectExport extends Open {
  subject_id: string;
  generated_at: DateTime;
  legal_hold: LegalHoldView;
  tombstones: TombstoneCounts;
  memories: ExportedMemory[];
  sessions: ExportedSession[];
  erasures: ExportedErasure[];
  events: ExportedEvent[];
  working: ExportedWorkingValue[];
  next_cursor?: string | null;
}

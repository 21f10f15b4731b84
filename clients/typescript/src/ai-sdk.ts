/**
 * Tools for the Vercel AI SDK (`ai`, version 5 or later): `recall`, `remember`, `forget`,
 * `working_memory_get` and `working_memory_set`, acting through the service's HTTP API.
 *
 * ```ts
 * import { generateText, stepCountIs } from "ai";
 * import { MemoryClient } from "@agent-memory/client";
 * import { memoryTools } from "@agent-memory/client/ai-sdk";
 *
 * const tools = memoryTools({ client: MemoryClient.fromEnv(), subjectId: "ACC-CORP-4812" });
 * await generateText({ model, tools, stopWhen: stepCountIs(5), prompt: "Can we offer a discount?" });
 * ```
 *
 * Whose memory the tools touch, the session and ticket they belong to, and the source a note
 * claims come from this configuration and the token, never from a tool's arguments: the model's
 * arguments are untrusted input (a prompt injection can make it call `remember` or `forget`; it
 * cannot make it write as the system of record, or reach another customer). No tool's schema has
 * a subject, session or source field, and any such argument a model sends anyway is ignored.
 * The service checks role, tenant, subject and clearance on every call; a refusal is returned to
 * the model as the API's error body (`status`, `code`, `field`, `request_id`) rather than thrown,
 * so the agent can say it could not do it.
 */

import { jsonSchema, tool } from "ai";

import { MemoryClient } from "./client.js";
import { NotFound } from "./errors.js";
import type { MemoryType, RememberHints } from "./models.js";
import {
  type AgentSourceKind,
  GATEWAY_DECIDES,
  RECALLED_IS_DATA,
  type Refusal,
  type WriteSummary,
  agentSourceKind,
  boundSubject,
  describeDecision,
  errorPayload,
  mayForget,
  recallText,
  writeSummary,
} from "./tooling.js";
import { environment } from "./transport.js";

export interface MemoryToolsOptions {
  /** The client, with the caller's token (bind it to the customer: `memory token ... --subjects ID`). */
  client: MemoryClient;
  /** The customer the tools act on (default: the token's one bound subject). */
  subjectId?: string | null;
  /** The session notes and working values belong to (default: a new one for this set of tools). */
  sessionId?: string | null;
  /** The open ticket, if any: recall is scoped to it, and typed notes carry it. */
  ticketId?: string | null;
  /** The source a note claims: `customer_claim` or `agent_inference` (default: the service classifies it). */
  sourceKind?: AgentSourceKind | null;
  /** Accept a token bound to no subject (then `subjectId` names the customer). */
  allowUnboundToken?: boolean;
}

const MEMORY_TYPES: MemoryType[] = ["fact", "preference", "commitment", "episode", "resolution", "observation"];

/** What `remember` answers: the gateway's decision, and one line a model can relay. */
export interface RememberOutput extends WriteSummary {
  message: string;
}

/**
 * The memory tools for `generateText` / `streamText` (`tools: memoryTools({...})`). Throws
 * `Unscoped` when no subject can be settled: the token is bound to no subject (unless
 * `allowUnboundToken`), to several and none is configured, or the configured one is not among
 * them. `forget` is offered unless the token visibly carries no role that may forget.
 */
export function memoryTools(options: MemoryToolsOptions) {
  const { client } = options;
  const subject = boundSubject(options.subjectId, client.token, options.allowUnboundToken ?? false);
  const session = options.sessionId || `ai-${randomHex()}`;
  const ticket = options.ticketId || null;
  const sourceKind = agentSourceKind(options.sourceKind);

  const recall = tool({
    description: "Recall what is known about this conversation's customer before answering (when nothing comes back, the answer says why). " + RECALLED_IS_DATA,
    inputSchema: jsonSchema<{ query: string }>({
      type: "object",
      properties: { query: { type: "string", description: "What you need to know, in plain words." } },
      required: ["query"],
      additionalProperties: false,
    }),
    execute: async (input, { abortSignal }): Promise<string | Refusal> => {
      try {
        const found = await client.retrieve(
          { subject_id: subject, query: String(input.query ?? ""), session_id: session, ...(ticket ? { ticket_id: ticket } : {}) },
          { signal: abortSignal },
        );
        return recallText(found);
      } catch (error) {
        return errorPayload(error);
      }
    },
  });

  const remember = tool({
    description: "Note something about this conversation's customer, in one self-contained sentence. " + GATEWAY_DECIDES,
    inputSchema: jsonSchema<{ content: string; type?: MemoryType | null; slot?: string | null; category?: string | null }>({
      type: "object",
      properties: {
        content: { type: "string", description: "One self-contained sentence about the customer." },
        type: {
          type: ["string", "null"],
          enum: [...MEMORY_TYPES, null],
          description: "Optional: leave it out and the service classifies the sentence.",
        },
        slot: {
          type: ["string", "null"],
          description: "Optional: for a fact or preference, the key of its one current value (e.g. preference.contact_channel).",
        },
        category: { type: ["string", "null"], description: "Optional category such as CONTRACT_COMMERCIAL." },
      },
      required: ["content"],
      additionalProperties: false,
    }),
    execute: async (input, { abortSignal }): Promise<RememberOutput | Refusal> => {
      // Only the fields this schema declares are read: a subject, session or source the model
      // adds is ignored.
      const hints: RememberHints = { session_id: session };
      if (typeof input.type === "string") hints.type = input.type;
      if (typeof input.slot === "string") hints.slot = input.slot;
      if (typeof input.category === "string") hints.category = input.category;
      const typed = hints.type !== undefined || hints.slot !== undefined || hints.category !== undefined;
      if (typed || sourceKind !== null) {
        if (ticket) hints.ticket_id = ticket;
        hints.source = { kind: sourceKind ?? "customer_claim" };
      }
      try {
        const result = await client.remember(subject, String(input.content ?? ""), hints, { signal: abortSignal });
        const summary = writeSummary(result);
        return { ...summary, message: describeDecision(summary) };
      } catch (error) {
        return errorPayload(error);
      }
    },
  });

  const workingMemoryGet = tool({
    description: "This conversation's short-lived working values. " + RECALLED_IS_DATA,
    inputSchema: jsonSchema<Record<string, never>>({ type: "object", properties: {}, additionalProperties: false }),
    execute: async (_input, { abortSignal }) => {
      try {
        return await client.workingGet(session, { signal: abortSignal });
      } catch (error) {
        return errorPayload(error);
      }
    },
  });

  const workingMemorySet = tool({
    description: "Keep a short-lived value for this conversation (it expires, and is cleared when the conversation closes).",
    inputSchema: jsonSchema<{ key: string; value: unknown; ttl_seconds?: number | null }>({
      type: "object",
      properties: {
        key: { type: "string", description: "A short key, e.g. order_number." },
        value: { description: "Any JSON value; masked and screened by the service." },
        ttl_seconds: { type: ["integer", "null"], description: "Lifetime in seconds (default: the policy's)." },
      },
      required: ["key", "value"],
      additionalProperties: false,
    }),
    execute: async (input, { abortSignal }) => {
      try {
        const ttl = typeof input.ttl_seconds === "number" ? input.ttl_seconds : null;
        return await client.workingSet(session, String(input.key), input.value, { subject_id: subject, ttl_seconds: ttl }, { signal: abortSignal });
      } catch (error) {
        return errorPayload(error);
      }
    },
  });

  const forget = tool({
    description:
      "Forget one of this customer's memories when the customer asks for it to be deleted. Only roles that may forget can use it; otherwise the service refuses.",
    inputSchema: jsonSchema<{ memory_id: string; reason?: string | null }>({
      type: "object",
      properties: {
        memory_id: { type: "string", description: "The memory's id (mem_...), as recall shows it." },
        reason: { type: ["string", "null"], description: "Why, e.g. customer_request." },
      },
      required: ["memory_id"],
      additionalProperties: false,
    }),
    execute: async (input, { abortSignal }) => {
      try {
        const memoryId = String(input.memory_id);
        // Only this conversation's customer: another subject's memory answers as an unknown id.
        const record = await client.getMemory(memoryId, { signal: abortSignal });
        if (record.subject_id !== subject) {
          throw new NotFound({ status: 404, code: "not_found", message: "memory not found" });
        }
        return await client.deleteMemory(memoryId, input.reason || "customer_request", { signal: abortSignal });
      } catch (error) {
        return errorPayload(error);
      }
    },
  });

  const tools = { recall, remember, working_memory_get: workingMemoryGet, working_memory_set: workingMemorySet };
  const offered: typeof tools & { forget?: typeof forget } = mayForget(client.token) ? { ...tools, forget } : tools;
  return offered;
}

/**
 * `memoryTools` configured as the MCP server is: `MEMORY_SUBJECT`, `MEMORY_SESSION`,
 * `MEMORY_SOURCE_KIND` and `MEMORY_ALLOW_UNBOUND_TOKEN`, with a client from `MEMORY_URL` and
 * `MEMORY_TOKEN` unless one is given; options given here win.
 */
export function memoryToolsFromEnv(options: Partial<MemoryToolsOptions> = {}) {
  const env = environment();
  return memoryTools({
    client: options.client ?? MemoryClient.fromEnv(),
    subjectId: env.MEMORY_SUBJECT || null,
    sessionId: env.MEMORY_SESSION || null,
    sourceKind: (env.MEMORY_SOURCE_KIND || null) as AgentSourceKind | null,
    allowUnboundToken: ["1", "true", "yes"].includes((env.MEMORY_ALLOW_UNBOUND_TOKEN ?? "").toLowerCase()),
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  });
}

export { Unscoped } from "./tooling.js";

function randomHex(): string {
  const webCrypto = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
  if (!webCrypto?.getRandomValues) throw new Error("no secure random source: pass sessionId");
  return Array.from(webCrypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

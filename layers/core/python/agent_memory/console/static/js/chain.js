// The audit hash chain, recomputed in the page with WebCrypto exactly as the service computes it
// (agent_memory.domain.hashing.chain_hash and domain.audit.event_hash_fields):
//
//   hash = sha256_hex(prev_hash + "\n" + canonical_json(fields))
//   canonical_json = json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
//   fields = tenant_id, seq, id, event_type, memory_id, subject_id, actor, reason, payload,
//            created_at (UTC, Python isoformat: "+00:00", microseconds unless zero)
//
// Numbers keep the exact text the API sent (JSON.parse's source text), so 1.0 stays "1.0" as
// Python wrote it rather than JavaScript's "1".

export const GENESIS_HASH = "0".repeat(64);

class ExactNumber {
  constructor(source) {
    this.source = source;
  }
}

/** Parse an API response keeping every number's source text. */
export function parseExact(text) {
  return JSON.parse(text, (key, value, context) => {
    if (typeof value !== "number") return value;
    return new ExactNumber(context && typeof context.source === "string" ? context.source : pyNumber(value));
  });
}

function pyNumber(n) {
  // Without source text (an older browser): integers print alike; floats as Python's repr would.
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  let s = String(n);
  if (/e/.test(s)) s = s.replace(/e([+-])(\d)$/, "e$10$2");
  else if (!/\./.test(s)) s += ".0";
  return s;
}

function codePointCompare(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Python's json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False). */
export function canonicalJson(value) {
  if (value === null || value === undefined) return "null";
  if (value instanceof ExactNumber) return value.source;
  if (typeof value === "number") return pyNumber(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort(codePointCompare);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
}

/** The API's timestamp as Python's datetime.astimezone(UTC).isoformat() writes it. */
export function pythonUtcIso(text) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$/.exec(String(text));
  if (!m) throw new Error(`unexpected timestamp ${text}`);
  let [, seconds, fraction = "", zone] = m;
  fraction = fraction ? fraction.padEnd(7, "0") : "";
  if (/^\.0+$/.test(fraction)) fraction = "";
  if (zone !== "Z" && zone !== "+00:00") {
    seconds = new Date(`${seconds}${zone}`).toISOString().slice(0, 19);
  }
  return `${seconds}${fraction}+00:00`;
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function plain(v) {
  return v instanceof ExactNumber ? Number(v.source) : v;
}

/** The hash the service would have written for this event (exactly parsed) after `prevHash`. */
export async function eventHash(prevHash, e) {
  const fields = {
    tenant_id: e.tenant_id,
    seq: e.seq,
    id: e.id,
    event_type: e.event_type,
    memory_id: e.memory_id,
    subject_id: e.subject_id,
    actor: e.actor,
    reason: e.reason,
    payload: e.payload,
    created_at: pythonUtcIso(e.created_at),
  };
  return sha256Hex(`${prevHash}\n${canonicalJson(fields)}`);
}

/**
 * Verify events (exactly parsed, in seq order). Each event's own hash is recomputed from its
 * fields (except events redacted above the reader's clearance, whose fields the reader cannot
 * see); each link to the previous event is checked wherever the previous event is in the list.
 * `contiguous`: the list is the whole chain from its start (no filter), so gaps are breaks too.
 * Returns {checked, results: Map(seq -> {ok, problem}), firstBroken: {seq, problem} | null}.
 */
export async function verifyEvents(events, { contiguous }) {
  const results = new Map();
  let firstBroken = null;
  let previous = null;
  let checked = 0;
  const fail = (seq, problem) => {
    results.set(seq, { ok: false, problem });
    if (!firstBroken) firstBroken = { seq, problem };
  };
  for (const e of events) {
    const seq = Number(plain(e.seq));
    const previousSeq = previous ? Number(plain(previous.seq)) : 0;
    if (contiguous && seq !== previousSeq + 1) {
      fail(seq, `sequence gap: expected ${previousSeq + 1}`);
    } else if ((contiguous || previousSeq === seq - 1) && e.prev_hash !== (previous ? previous.hash : GENESIS_HASH)) {
      fail(seq, "prev_hash does not match the previous event's hash");
    } else if (e.redacted) {
      results.set(seq, { ok: true, problem: null, unverifiable: true });
    } else if ((await eventHash(e.prev_hash, e)) !== e.hash) {
      fail(seq, "hash does not match the event's fields");
    } else {
      results.set(seq, { ok: true, problem: null });
    }
    checked += 1;
    previous = e;
  }
  return { checked, results, firstBroken };
}

// Screen 2, one subject (agent, reviewer): active memories by section as retrieval assembles them,
// each slot's version history as a timeline, what the copilot would see (/v1/retrieve), and why
// each statement of a session was or was not kept (/v1/sessions/{id}/extraction).

import { allPages, enc, get, post } from "./api.js";
import { el, field, formatTime, replace, showError, statusRegion } from "./dom.js";
import { memoryText, sourceText } from "./memory-view.js";

// As the retrieval broker orders its context (domain/context.py SECTIONS and HEADINGS).
const SECTIONS = [
  ["verified_facts", "Verified account facts"],
  ["relevant", "Relevant memories"],
  ["supporting", "Supporting context"],
  ["unverified", "Unverified notes (not stated as fact)"],
];

/** A record's section: the service names it (`section`, from its type table and the source). */
function sectionOf(m) {
  return m.section || "relevant";
}

export function subjectScreen(root, { subjectId, roles, navigate }) {
  const input = el("input", { type: "text", name: "subject_id", required: true, autocomplete: "off", value: subjectId || "" });
  const form = el("form", { class: "inline", "aria-label": "Choose a subject" }, field("Subject id", input), el("button", { type: "submit", class: "primary" }, "Open"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (input.value.trim()) navigate(`#/subject/${enc(input.value.trim())}`);
  });
  const body = el("div", { id: "subject-body" });
  replace(root, el("h1", { id: "screen-title", tabindex: "-1" }, subjectId ? `Subject ${subjectId}` : "Subject"), form, body);
  if (subjectId) load(subjectId, body, roles);
}

async function load(subjectId, body, roles) {
  const status = statusRegion();
  const sections = el("div", { class: "sections" });
  replace(body, status, sections, roles.includes("agent") ? copilotPreview(subjectId) : el("p", { class: "muted" }, "The copilot preview and live system-of-record values need the agent role."), sessionExtraction());
  replace(status, "Loading…");
  let memories;
  try {
    ({ items: memories } = await allPages(`/v1/subjects/${enc(subjectId)}/memories`, { status: "active", limit: 200 }, "memories"));
  } catch (error) {
    showError(status, error);
    return;
  }
  replace(status, memories.length ? `${memories.length} active memories.` : "No active memories you may see for this subject.");
  for (const [key, heading] of SECTIONS) {
    const inSection = memories.filter((m) => sectionOf(m) === key);
    if (!inSection.length) continue;
    sections.append(el("section", { class: "memory-section", "data-section": key }, el("h2", {}, heading), el("ul", { class: "memories" }, inSection.map(memoryCard))));
  }
}

function memoryCard(m) {
  const timeline = el("div", { class: "timeline-slot" });
  const card = el("li", { class: "memory-card", "data-memory-id": m.id },
    el("p", { class: "meta" }, `${m.type} · ${m.category}${m.slot ? ` · ${m.slot}` : ""} · v${m.version}`),
    memoryText(m),
    el("p", { class: "meta" }, `${m.authority}${m.verified ? " (verified)" : ""} · ${sourceText(m.source)} · confidence ${Number(m.confidence).toFixed(2)}`),
    timeline);
  if (m.slot) loadTimeline(m, timeline);
  return card;
}

async function loadTimeline(m, slot) {
  try {
    const full = await get(`/v1/memories/${enc(m.id)}`);
    const history = [...(full.history || [])].sort((a, b) => b.version - a.version);
    if (history.length < 2) return;
    slot.append(el("details", { open: true },
      el("summary", {}, `Version history (${history.length})`),
      el("ol", { class: "timeline", "aria-label": `Versions of ${m.slot}` }, history.map(timelineEntry))));
  } catch (error) {
    slot.append(el("p", { class: "error" }, `Version history unavailable: ${error.message}`));
  }
}

function timelineEntry(h) {
  return el("li", { class: `version ${h.status}`, "data-version-id": h.id, "data-status": h.status },
    el("p", {}, el("strong", {}, `v${h.version} · ${h.status}`), ` · ${h.authority}`),
    h.content !== undefined ? memoryText(h) : null,
    el("p", { class: "meta" },
      [`created ${formatTime(h.created_at)}`,
        h.source ? `source ${sourceText(h.source)}` : null,
        h.verified_by ? `approved by ${h.verified_by} ${formatTime(h.verified_at)}` : null,
        h.evidence_ref ? `evidence ${h.evidence_ref}` : null,
        h.superseded_at ? `superseded ${formatTime(h.superseded_at)}` : null].filter(Boolean).join(" · ")));
}

function copilotPreview(subjectId) {
  const query = el("input", { type: "text", name: "query", required: true, autocomplete: "off", value: "What should I know before the renewal call?" });
  const status = statusRegion();
  const out = el("div", { class: "preview-out" });
  const form = el("form", { class: "inline", "aria-label": "Copilot preview" }, field("Query", query), el("button", { type: "submit" }, "Preview"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    replace(status, "Retrieving…");
    try {
      const r = await post("/v1/retrieve", { subject_id: subjectId, query: query.value });
      replace(status, `${r.memories.length} memories, ${r.tokens} of ${r.max_tokens} tokens.`);
      replace(out,
        r.live && r.live.length ? el("table", { class: "live" },
          el("caption", {}, "Live system-of-record values (these override memory)"),
          el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Field"), el("th", { scope: "col" }, "Value"), el("th", { scope: "col" }, "As of"))),
          el("tbody", {}, r.live.map((v) => el("tr", {}, el("th", { scope: "row" }, v.field), el("td", {}, JSON.stringify(v.value)), el("td", {}, formatTime(v.as_of)))))) : el("p", { class: "muted" }, "No live system-of-record values for this subject."),
        el("h3", {}, "Context the copilot receives"),
        el("pre", { class: "context", id: "copilot-context" }, r.context),
        el("p", { class: "meta" }, `Excluded: ${Object.entries(r.excluded || {}).map(([k, v]) => `${k} ${v}`).join(", ") || "none"}`));
    } catch (error) {
      showError(status, error);
    }
  });
  return el("section", { class: "preview", "aria-label": "What would the copilot see" }, el("h2", {}, "What would the copilot see"), form, status, out);
}

/** One session's extraction report: every statement (masked), its decision, reason and score. */
function sessionExtraction() {
  const session = el("input", { type: "text", name: "session_id", required: true, autocomplete: "off" });
  const status = statusRegion();
  const out = el("div", { class: "extraction-out" });
  const form = el("form", { class: "inline", "aria-label": "Session extraction" }, field("Session id", session), el("button", { type: "submit" }, "Explain"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    replace(status, "Loading…");
    try {
      const r = await get(`/v1/sessions/${enc(session.value.trim())}/extraction`);
      replace(status, r.available ? `${r.statements.length} statements (${r.status}).` : `No report: the session is ${r.status}, or its transcript's retention has ended.`);
      replace(out, r.statements.length ? el("table", { class: "extraction", id: "extraction-report" },
        el("thead", {}, el("tr", {}, ["Turn", "Speaker", "Statement", "Decision", "Reason", "Score"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, r.statements.map((st) => el("tr", { "data-decision": st.decision },
          el("td", {}, String(st.turn)), el("td", {}, st.speaker), el("td", {}, st.text),
          el("td", {}, st.decision), el("td", {}, st.reason),
          el("td", {}, st.score === null || st.score === undefined ? "–" : Number(st.score).toFixed(2)))))) : null);
    } catch (error) {
      showError(status, error);
    }
  });
  return el("section", { class: "extraction", "aria-label": "Why each statement was kept or not" }, el("h2", {}, "Why each statement was kept or not"), form, status, out);
}

// Screen 3, audit (auditor): the tenant's events, filterable, with the hash chain verified in the
// page, and export to CSV or JSON.

import { call, withQuery } from "./api.js";
import { el, field, formatTime, replace, showError, showOk, statusRegion, download } from "./dom.js";
import { parseExact, verifyEvents } from "./chain.js";

const PAGE = 1000;
const MAX_PAGES = 50;
const COLUMNS = ["seq", "created_at", "event_type", "actor", "subject_id", "memory_id", "reason", "redacted", "prev_hash", "hash"];

export function auditScreen(root) {
  const subject = el("input", { type: "text", name: "subject_id", autocomplete: "off" });
  const memory = el("input", { type: "text", name: "memory_id", autocomplete: "off" });
  const type = el("input", { type: "text", name: "event_type", autocomplete: "off", list: "event-types" });
  const since = el("input", { type: "datetime-local", name: "since", step: "1" });
  const until = el("input", { type: "datetime-local", name: "until", step: "1" });
  const types = el("datalist", { id: "event-types" });
  const chain = statusRegion("chain");
  chain.id = "chain-status";
  const status = statusRegion();
  const table = el("table", { class: "events", id: "audit-events" });
  const toCsv = el("button", { type: "button", disabled: true }, "Export CSV");
  const toJson = el("button", { type: "button", disabled: true }, "Export JSON");
  const form = el("form", { class: "filters", "aria-label": "Filter events" },
    field("Subject id", subject), field("Memory id", memory), field("Event type", type), types,
    field("From (UTC)", since), field("Until (UTC)", until),
    el("button", { type: "submit", class: "primary" }, "Load and verify"));
  let shown = [];

  replace(root,
    el("h1", { id: "screen-title", tabindex: "-1" }, "Audit trail"),
    el("p", { class: "lede" }, "Events carry ids, actors, types and reasons, never memory content. Every event's hash is recomputed here, in your browser, from its fields and the previous event's hash."),
    form, chain, status, el("div", { class: "actions" }, toCsv, toJson), table);

  form.addEventListener("submit", (e) => { e.preventDefault(); load(); });
  toJson.addEventListener("click", () => download("audit-events.json", JSON.stringify(shown, null, 2), "application/json"));
  toCsv.addEventListener("click", () => download("audit-events.csv", csv(shown), "text/csv"));

  async function load() {
    replace(status, "Loading…");
    replace(chain);
    const filters = {
      subject_id: subject.value.trim(),
      memory_id: memory.value.trim(),
      since: since.value ? new Date(`${since.value}Z`).toISOString() : "",
    };
    const events = [];
    const exact = [];
    let cursor = null;
    let complete = false;
    try {
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const { body, text } = await call("GET", withQuery("/v1/audit", { ...filters, limit: PAGE, cursor }));
        events.push(...body.events);
        exact.push(...parseExact(text).events);
        cursor = body.next_cursor;
        if (!cursor) { complete = true; break; }
      }
    } catch (error) {
      showError(status, error);
      return;
    }
    const contiguous = complete && !filters.subject_id && !filters.memory_id && !filters.since;
    const report = await verifyEvents(exact, { contiguous });
    const wanted = type.value.trim();
    const untilIso = until.value ? new Date(`${until.value}Z`).toISOString() : null;
    shown = events.filter((e) => (!wanted || e.event_type === wanted) && (!untilIso || e.created_at <= untilIso));
    replace(types, [...new Set(events.map((e) => e.event_type))].sort().map((t) => el("option", { value: t })));
    const unverifiable = [...report.results.values()].filter((r) => r.unverifiable).length;
    if (report.firstBroken) {
      showError(chain, new Error(`Chain broken: the first broken link is event ${report.firstBroken.seq} (${report.firstBroken.problem}).`));
    } else {
      showOk(chain, `Chain verified: ${report.checked} event(s)${contiguous ? " from the first, every link intact" : ", each event's hash and every adjacent link intact (filtered: only the links between listed events are checked)"}${unverifiable ? `; ${unverifiable} above your clearance checked by link only` : ""}.`);
    }
    replace(status, `${shown.length} of ${events.length} event(s) shown${complete ? "" : ` (first ${events.length}; narrow the filters for the rest)`}.`);
    renderTable(report);
    toCsv.disabled = toJson.disabled = false;
  }

  function renderTable(report) {
    replace(table,
      el("caption", {}, "Events, oldest first"),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Chain"), ["Seq", "Time", "Type", "Actor", "Subject", "Memory", "Reason"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, shown.map((e) => {
        const r = report.results.get(e.seq) || { ok: true };
        const mark = r.ok ? (r.unverifiable ? "link only" : "ok") : `BROKEN: ${r.problem}`;
        return el("tr", { class: r.ok ? "" : "broken", "data-seq": e.seq },
          el("td", { class: "chain-mark" }, mark),
          el("td", {}, String(e.seq)), el("td", {}, formatTime(e.created_at)), el("td", {}, e.event_type),
          el("td", {}, e.actor), el("td", {}, e.subject_id || "—"), el("td", {}, e.memory_id || (e.redacted ? "(above your clearance)" : "—")),
          el("td", {}, e.reason || "—"));
      })));
  }
}

function csvCell(v) {
  const s = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  // A leading = + - @ would be a formula in a spreadsheet: quote it as text.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csv(events) {
  // free_text: the reasons and references people typed, kept beside the chain until the subject is erased
  return [[...COLUMNS, "payload", "free_text"].join(","), ...events.map((e) => [...COLUMNS.map((c) => csvCell(e[c])), csvCell(e.payload), csvCell(e.free_text)].join(","))].join("\r\n") + "\r\n";
}

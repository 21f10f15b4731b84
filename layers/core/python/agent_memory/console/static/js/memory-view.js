// How one memory record is shown: its text (as text), provenance and the word-level diff.

import { el, facts, formatTime } from "./dom.js";

export function sourceText(source) {
  if (!source) return "—";
  return [source.kind, source.system, source.reference].filter(Boolean).join(" · ");
}

export function memoryText(record) {
  // Untrusted data: a text node inside a quoted block, never markup.
  return el("blockquote", { class: "memory-text" }, record.content);
}

export function provenance(record) {
  return facts([
    ["Source", sourceText(record.source)],
    ["Authority", record.authority],
    ["Confidence", `${Number(record.confidence).toFixed(2)}${record.confidence_basis ? ` (${record.confidence_basis})` : ""}`],
    ["Session", record.session_id || "—"],
    ["Extractor", record.extractor ? `${record.extractor} ${record.extractor_version || ""}`.trim() : undefined],
    ["Slot", record.slot || "—"],
    ["Sensitivity", record.sensitivity],
    ["Effective", formatTime(record.effective_at)],
    ["Created", formatTime(record.created_at)],
    ["Reasons", (record.reasons || []).join(", ") || "—"],
  ]);
}

/** The service's word diff ({op: equal|removed|added, text}) as <del>/<ins> runs. */
export function wordDiff(ops) {
  const p = el("p", { class: "diff", "aria-label": "Word-level changes from the active record to the candidate" });
  ops.forEach((op, i) => {
    if (i > 0) p.append(" ");
    if (op.op === "removed") p.append(el("del", { title: "only in the active record" }, op.text));
    else if (op.op === "added") p.append(el("ins", { title: "only in the candidate" }, op.text));
    else p.append(el("span", {}, op.text));
  });
  return p;
}

export function valueDiff(diff) {
  if (!diff) return null;
  const rows = [];
  for (const [k, v] of Object.entries(diff.added || {})) rows.push([k, "—", JSON.stringify(v)]);
  for (const [k, v] of Object.entries(diff.removed || {})) rows.push([k, JSON.stringify(v), "—"]);
  for (const [k, v] of Object.entries(diff.changed || {})) rows.push([k, JSON.stringify(v.active), JSON.stringify(v.candidate)]);
  if (!rows.length) return null;
  return el(
    "table",
    { class: "value-diff" },
    el("caption", {}, "Structured value"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Key"), el("th", { scope: "col" }, "Active"), el("th", { scope: "col" }, "Candidate"))),
    el("tbody", {}, rows.map(([k, a, c]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, a), el("td", {}, c)))),
  );
}

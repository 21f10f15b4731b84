// Screen 4, privacy (privacy_officer): erasure with its steps followed live and its receipt,
// a subject's export, and legal holds.

import { enc, get, post } from "./api.js";
import { download, el, field, facts, formatTime, replace, showError, showOk, statusRegion } from "./dom.js";

const POLL_MS = 1000;

export function privacyScreen(root) {
  replace(root,
    el("h1", { id: "screen-title", tabindex: "-1" }, "Privacy"),
    erasurePanel(), exportPanel(), holdsPanel());
}

function erasurePanel() {
  const subject = el("input", { type: "text", name: "subject_id", required: true, autocomplete: "off" });
  const reason = el("input", { type: "text", name: "reason", required: true, maxlength: "100", value: "gdpr_article_17", autocomplete: "off" });
  const reference = el("input", { type: "text", name: "request_reference", required: true, maxlength: "200", autocomplete: "off" });
  const confirm = el("input", { type: "checkbox", name: "confirm", required: true });
  const status = statusRegion();
  const steps = el("ol", { class: "steps", id: "erasure-steps", "aria-label": "Erasure steps" });
  const receipt = el("div", { class: "receipt", id: "erasure-receipt" });
  const submit = el("button", { type: "submit", class: "danger" }, "Erase subject");
  const form = el("form", { "aria-labelledby": "erasure-heading", novalidate: true },
    field("Subject id", subject), field("Reason", reason, "For example gdpr_article_17."),
    field("Request reference", reference, "The data subject request's id, e.g. DSR-991: a repeat with the same reference is the same erasure."),
    el("div", { class: "field checkbox" }, confirm, el("label", { for: (confirm.id = "erasure-confirm") }, "I understand every memory, session and derived record of this subject is erased for good.")),
    el("div", { class: "actions" }, submit), status);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    for (const [input, what] of [[subject, "a subject id"], [reason, "a reason"], [reference, "a request reference"]]) {
      if (!input.value.trim()) { showError(status, new Error(`The erasure needs ${what}.`)); input.focus(); return; }
    }
    if (!confirm.checked) { showError(status, new Error("Confirm the erasure first.")); confirm.focus(); return; }
    submit.disabled = true;
    replace(steps);
    replace(receipt);
    try {
      const started = await post(`/v1/subjects/${enc(subject.value.trim())}/erasure`, { reason: reason.value.trim(), request_reference: reference.value.trim() });
      showOk(status, `Erasure ${started.erasure_id} ${started.status}; deadline ${formatTime(started.deadline)}.`);
      await follow(started.erasure_id, status, steps, receipt);
    } catch (error) {
      showError(status, error);
    } finally {
      submit.disabled = false;
    }
  });
  return el("section", { class: "panel" }, el("h2", { id: "erasure-heading" }, "Erase a subject"), form, steps, receipt);
}

async function follow(erasureId, status, steps, receipt) {
  for (;;) {
    const view = await get(`/v1/erasures/${enc(erasureId)}`);
    replace(steps, (view.steps || []).map((s) => el("li", { class: `step ${s.status}`, "data-step": s.name },
      `${s.name}: ${s.status}${s.count !== undefined && s.count !== null ? ` (${s.count})` : ""}`)));
    if (view.status !== "running") {
      if (view.status === "verified" && view.receipt) {
        showOk(status, `Erasure ${erasureId} verified ${formatTime(view.receipt.verified_at)}.`);
        const text = JSON.stringify(view, null, 2);
        const button = el("button", { type: "button", class: "primary", id: "download-receipt", on: { click: () => download(`erasure-receipt-${erasureId}.json`, text, "application/json") } }, "Download receipt");
        replace(receipt, el("h3", {}, "Receipt"), facts(Object.entries(view.receipt).filter(([, v]) => typeof v !== "object").map(([k, v]) => [k, String(v)])),
          el("p", {}, "Left after erasure (every count must be 0): ", Object.entries(view.receipt.verification || {}).map(([k, v]) => `${k} ${v}`).join(", ")),
          button);
        button.focus();
      } else {
        showError(status, new Error(`Erasure ${erasureId} ${view.status}.`));
      }
      return view;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function exportPanel() {
  const subject = el("input", { type: "text", name: "subject_id", required: true, autocomplete: "off" });
  const status = statusRegion();
  const form = el("form", { class: "inline", "aria-labelledby": "export-heading", novalidate: true }, field("Subject id", subject), el("button", { type: "submit" }, "Export subject"), status);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!subject.value.trim()) { showError(status, new Error("The export needs a subject id.")); subject.focus(); return; }
    replace(status, "Exporting…");
    try {
      const id = subject.value.trim();
      const pages = [];
      let cursor = null;
      do {
        const page = await get(`/v1/subjects/${enc(id)}/export${cursor ? `?cursor=${enc(cursor)}` : ""}`);
        pages.push(page);
        cursor = page.next_cursor;
      } while (cursor && pages.length < 100);
      download(`subject-export-${id}.json`, JSON.stringify(pages.length === 1 ? pages[0] : pages, null, 2), "application/json");
      showOk(status, `Exported ${id} (${pages.length} page${pages.length === 1 ? "" : "s"}).`);
    } catch (error) {
      showError(status, error);
    }
  });
  return el("section", { class: "panel" }, el("h2", { id: "export-heading" }, "Export a subject"), form);
}

function holdsPanel() {
  const target = el("select", { name: "target" }, el("option", { value: "subject" }, "A subject"), el("option", { value: "memory" }, "One memory"));
  const id = el("input", { type: "text", name: "hold_id", required: true, autocomplete: "off" });
  const reason = el("input", { type: "text", name: "hold_reason", required: true, maxlength: "500", autocomplete: "off" });
  const status = statusRegion();
  const place = el("button", { type: "submit", value: "place", class: "primary" }, "Place hold");
  const lift = el("button", { type: "submit", value: "lift" }, "Lift hold");
  const form = el("form", { "aria-labelledby": "holds-heading", novalidate: true }, field("Hold on", target), field("Subject or memory id", id), field("Reason", reason, "For example the litigation or case reference."), el("div", { class: "actions" }, place, lift), status);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const hold = !e.submitter || e.submitter.value === "place";
    if (!id.value.trim() || !reason.value.trim()) { showError(status, new Error("A hold needs an id and a reason.")); (id.value.trim() ? reason : id).focus(); return; }
    const path = target.value === "subject" ? `/v1/subjects/${enc(id.value.trim())}/legal-hold` : `/v1/memories/${enc(id.value.trim())}/legal-hold`;
    try {
      const r = await post(path, { hold, reason: reason.value.trim() });
      showOk(status, `Legal hold ${hold ? "placed on" : "lifted from"} ${id.value.trim()}${r && r.records !== undefined ? ` (${r.records} records)` : ""}.`);
    } catch (error) {
      showError(status, error);
    }
  });
  return el("section", { class: "panel" }, el("h2", { id: "holds-heading" }, "Legal holds"), form);
}

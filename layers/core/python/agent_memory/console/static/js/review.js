// Screen 1, the review queue (reviewer): pending approvals and contested records, oldest first,
// each beside the active record it would supersede or contradicts.

import { enc, get, post, allPages } from "./api.js";
import { el, field, replace, showError, showOk, statusRegion, formatTime } from "./dom.js";
import { memoryText, provenance, valueDiff, wordDiff, sourceText } from "./memory-view.js";

export function reviewScreen(root, { navigate }) {
  const state = { items: [], filters: { subject: "", type: "", category: "" } };
  const result = statusRegion("decision-result");
  result.id = "decision-result";
  result.tabIndex = -1;
  const listStatus = statusRegion();
  const list = el("ol", { class: "queue", id: "review-queue", "aria-label": "Items waiting for review, oldest first" });

  const subject = el("input", { type: "search", name: "subject", autocomplete: "off" });
  const type = el("select", { name: "type" }, el("option", { value: "" }, "All types"));
  const category = el("select", { name: "category" }, el("option", { value: "" }, "All categories"));
  subject.addEventListener("input", () => { state.filters.subject = subject.value.trim(); render(); });
  type.addEventListener("change", () => { state.filters.type = type.value; render(); });
  category.addEventListener("change", () => { state.filters.category = category.value; render(); });
  const refresh = el("button", { type: "button", on: { click: () => load() } }, "Refresh");

  replace(
    root,
    el("h1", { id: "screen-title", tabindex: "-1" }, "Review queue"),
    el("p", { class: "lede" }, "Pending approvals and contested records, oldest first. Memory text below is data from conversations and systems: read it, never follow it."),
    el("form", { class: "filters", role: "search", "aria-label": "Filter the queue", on: { submit: (e) => e.preventDefault() } },
      field("Subject", subject), field("Type", type), field("Category", category), refresh),
    result,
    listStatus,
    list,
  );

  function options(select, values) {
    const keep = select.value;
    const first = select.firstChild;
    replace(select, first, [...values].sort().map((v) => el("option", { value: v }, v)));
    select.value = values.has(keep) ? keep : "";
  }

  // Near-identical items of one subject (the API's `similar_pending`) are reviewed as one: the newest
  // stands for the group, and the others are listed under it rather than as items of their own.
  function grouped() {
    const newest = new Map(state.items.map((it) => [it.memory.id, it]));
    const inGroup = new Set();
    for (const it of state.items) {
      for (const id of it.similar_pending || []) {
        const other = newest.get(id);
        if (other && other.memory.created_at < it.memory.created_at) inGroup.add(id);
      }
    }
    return state.items.filter((it) => !inGroup.has(it.memory.id));
  }

  function render() {
    const f = state.filters;
    const shown = grouped().filter(
      (it) =>
        (!f.subject || it.memory.subject_id.toLowerCase().includes(f.subject.toLowerCase())) &&
        (!f.type || it.memory.type === f.type) &&
        (!f.category || it.memory.category === f.category),
    );
    replace(list, shown.map(reviewItem));
    replace(listStatus, state.items.length
      ? `${shown.length} of ${state.items.length} item(s) shown.`
      : "Nothing is waiting for review.");
  }

  async function load() {
    replace(listStatus, "Loading…");
    try {
      const { items } = await allPages("/v1/review", { limit: 200 }, "items");
      items.sort((a, b) => (a.memory.created_at < b.memory.created_at ? -1 : a.memory.created_at > b.memory.created_at ? 1 : 0));
      state.items = items;
      options(type, new Set(items.map((i) => i.memory.type)));
      options(category, new Set(items.map((i) => i.memory.category)));
      render();
    } catch (error) {
      showError(listStatus, error);
    }
  }

  function reviewItem(item) {
    const m = item.memory;
    const active = item.active && item.active.id !== m.id ? item.active : null;
    const headingId = `item-${m.id}`;
    const evidenceRequired = item.evidence_required ?? m.category === "CONTRACT_COMMERCIAL";
    const evidence = el("input", { type: "text", name: "evidence_ref", autocomplete: "off", maxlength: "300", required: evidenceRequired });
    const note = el("textarea", { name: "note", rows: "2", maxlength: "2000" });
    const itemStatus = statusRegion();
    // One commercial truth per family: the account's other active terms of the same family
    // (price, discount and seat price; ...), each either superseded by this one or kept beside it.
    const family = item.family_active || [];
    const familyChecks = family.map((f) => el("input", { type: "checkbox", name: "supersedes", value: f.id }));
    const independent = el("textarea", { name: "independent_reason", rows: "2", maxlength: "2000" });
    const familyBox = family.length
      ? el("fieldset", { class: "family", "data-family": "commercial" },
          el("legend", {}, "Other active terms of this commercial family: tick those this one supersedes"),
          family.map((f, i) => el("label", { class: "family-term" }, familyChecks[i], " ", memoryText(f), provenance(f))),
          field("Why the unticked ones stand beside it (needed when any is left unticked)", independent))
      : null;
    // The group this item stands for: rejecting may decide the near-identical ones too (approving
    // decides this one only: each approval supersedes on its own).
    const similar = (item.similar_pending || []).filter((id) => state.items.some((it) => it.memory.id === id));
    const alsoReject = el("input", { type: "checkbox", name: "reject_similar", checked: true });
    const groupBox = similar.length
      ? el("fieldset", { class: "group", "data-group": String(similar.length) },
          el("legend", {}, `${similar.length} more item(s) of this subject say nearly the same`),
          el("ul", { class: "group-members" }, similar.map((id) => {
            const other = state.items.find((it) => it.memory.id === id);
            return el("li", {}, memoryText(other.memory), el("span", { class: "meta" }, ` ${id}`));
          })),
          el("label", {}, alsoReject, ` Reject these ${similar.length} too when rejecting`))
      : null;
    const approve = el("button", { type: "submit", class: "primary", value: "approve" }, "Approve");
    const reject = el("button", { type: "submit", class: "danger", value: "reject", formnovalidate: true }, "Reject");
    const form = el(
      "form",
      { class: "decision", "aria-labelledby": headingId, novalidate: true },
      field(evidenceRequired ? "Evidence reference (required for this category)" : "Evidence reference (optional)", evidence,
        evidenceRequired ? "For example the signed contract or order form id." : null),
      field("Note, or the reason when rejecting", note, "A rejection needs a reason."),
      familyBox,
      groupBox,
      el("div", { class: "actions" }, approve, reject),
      itemStatus,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const action = event.submitter ? event.submitter.value : "approve";
      if (action === "approve" && evidenceRequired && !evidence.value.trim()) {
        showError(itemStatus, new Error("Approving this needs an evidence reference."));
        evidence.setAttribute("aria-invalid", "true");
        evidence.focus();
        return;
      }
      const supersedes = familyChecks.filter((c) => c.checked).map((c) => c.value);
      if (action === "approve" && supersedes.length < family.length && !independent.value.trim()) {
        showError(itemStatus, new Error("Tick the family's terms this one supersedes, or say why the others stand beside it."));
        independent.setAttribute("aria-invalid", "true");
        independent.focus();
        return;
      }
      if (action === "reject" && !note.value.trim()) {
        showError(itemStatus, new Error("Rejecting needs a reason in the note."));
        note.setAttribute("aria-invalid", "true");
        note.focus();
        return;
      }
      approve.disabled = reject.disabled = true;
      try {
        const body = { note: note.value.trim() || null };
        if (action === "approve" && evidence.value.trim()) body.evidence_ref = evidence.value.trim();
        if (action === "approve" && family.length) {
          body.supersedes = supersedes;
          if (independent.value.trim()) body.independent_reason = independent.value.trim();
        }
        const reply = await post(`/v1/memories/${enc(m.id)}/${action}`, body);
        const alsoDecided = [];
        if (action === "reject" && similar.length && alsoReject.checked) {
          for (const id of similar) {
            await post(`/v1/memories/${enc(id)}/reject`, { note: body.note });
            alsoDecided.push(id);
          }
        }
        decided(item, action, reply, alsoDecided);
      } catch (error) {
        approve.disabled = reject.disabled = false;
        showError(itemStatus, error);
        if (error.field === "evidence_ref") evidence.focus();
      }
    });

    const kind = m.status === "contested" ? "contradicts" : "would supersede";
    return el(
      "li",
      { class: "review-item", "data-memory-id": m.id },
      el("article", { "aria-labelledby": headingId },
        el("h2", { id: headingId },
          el("span", { class: `badge ${m.status}` }, m.status === "contested" ? "Contested" : "Pending approval"), " ",
          `${m.category} · ${m.type} · `, el("span", { class: "subject-id" }, m.subject_id)),
        el("p", { class: "meta" }, `Waiting since ${formatTime(m.created_at)} · ${m.id}`),
        el("div", { class: "compare" },
          el("section", { class: "candidate", "aria-label": "Candidate" }, el("h3", {}, "Candidate"), memoryText(m), provenance(m)),
          el("section", { class: "active", "aria-label": "Active record" },
            el("h3", {}, active ? `Active record it ${kind}` : "Active record"),
            active ? [memoryText(active), provenance(active)] : el("p", { class: "muted" }, m.slot ? "No active record you may see holds this slot." : "This memory has no slot: it supersedes nothing."))),
        item.diff ? el("section", { class: "changes", "aria-label": "Changes" }, el("h3", {}, "What changes"), wordDiff(item.diff.content || []), valueDiff(item.diff.value), fieldChanges(item.diff)) : null,
        form,
      ),
    );
  }

  function fieldChanges(diff) {
    const rows = Object.entries(diff.fields || {}).map(([k, v]) => el("li", {}, `${k}: ${v.active} → ${v.candidate}`));
    if (diff.source && diff.source.active) rows.push(el("li", {}, `source: ${sourceText(diff.source.active)} → ${sourceText(diff.source.candidate)}`));
    return rows.length ? el("ul", { class: "field-changes" }, rows) : null;
  }

  async function decided(item, action, reply, alsoDecided = []) {
    const position = grouped().indexOf(item);
    state.items = state.items.filter((i) => i !== item && !alsoDecided.includes(i.memory.id));
    for (const it of state.items) {
      if (it.similar_pending) it.similar_pending = it.similar_pending.filter((id) => id !== item.memory.id && !alsoDecided.includes(id));
    }
    render();
    const superseded = reply.superseded || [];
    const parts = [
      el("strong", {}, action === "approve" ? "Approved" : "Rejected"), ` ${reply.memory.id} (now ${reply.memory.status}).`,
    ];
    if (alsoDecided.length) parts.push(` Also rejected: ${alsoDecided.join(", ")}.`);
    if (action === "approve") {
      parts.push(superseded.length ? ` Superseded: ${superseded.join(", ")}.` : " It superseded nothing.");
    }
    parts.push(" ", el("a", { href: `#/subject/${enc(reply.memory.subject_id)}` }, `Open ${reply.memory.subject_id}'s timeline`));
    showOk(result, ...parts);
    if (superseded.length) {
      try {
        const old = await get(`/v1/memories/${enc(superseded[0])}`);
        result.append(el("p", {}, "It replaced: "), memoryText(old));
      } catch {
        /* the result above stands */
      }
    }
    // Keyboard flow: move on to the next item's first field, the result announced meanwhile.
    const next = list.querySelectorAll(".review-item")[Math.min(position, list.children.length - 1)];
    const target = next ? next.querySelector("input, textarea") : result;
    target.focus();
  }

  load();
  return { navigate };
}

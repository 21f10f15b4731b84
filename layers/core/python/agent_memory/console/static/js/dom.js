// Building the page. Every piece of text, above all memory text (untrusted data), goes in through
// text nodes: nothing here parses HTML, so a memory holding "<script>" or a forged heading is
// shown as the characters it is.

/**
 * el("p", {class: "x", on: {click: fn}}, "text", child, ...) -> HTMLElement.
 * Attributes are set with setAttribute; "on..." attributes are refused (handlers go in `on`).
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else if (/^on/i.test(name)) {
      throw new Error(`inline handler attribute ${name} refused`);
    } else if (name === "text") {
      node.textContent = String(value);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace a node's children. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

let idCounter = 0;
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** A labelled form field: {label, input}. */
export function field(label, input, hint) {
  const id = input.id || uid("f");
  input.id = id;
  const hintNode = hint ? el("span", { class: "hint", id: `${id}-hint` }, hint) : null;
  if (hintNode) input.setAttribute("aria-describedby", hintNode.id);
  return el("div", { class: "field" }, el("label", { for: id }, label), input, hintNode);
}

export function formatTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** A message area screen readers announce. */
export function statusRegion(extraClass = "") {
  return el("div", { class: `status ${extraClass}`.trim(), role: "status", "aria-live": "polite" });
}

export function showError(region, error) {
  region.classList.add("error");
  region.classList.remove("ok");
  replace(region, error && error.message ? error.message : String(error));
}

export function showOk(region, ...content) {
  region.classList.remove("error");
  region.classList.add("ok");
  replace(region, ...content);
}

/** Offer data as a file download (a Blob URL: nothing leaves the page). */
export function download(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el("a", { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A definition list from [label, value] pairs (values as text, or nodes). */
export function facts(pairs) {
  const dl = el("dl", { class: "facts" });
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    dl.append(el("dt", {}, k), el("dd", {}, v === null || v === "" ? "—" : v));
  }
  return dl;
}

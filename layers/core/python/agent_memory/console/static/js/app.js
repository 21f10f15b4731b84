// The console's shell: sign-in, the navigation the user's roles allow, and the hash router.

import { onUnauthenticated } from "./api.js";
import { el, field, replace, showError, statusRegion } from "./dom.js";
import { auditScreen } from "./audit.js";
import { privacyScreen } from "./privacy.js";
import { reviewScreen } from "./review.js";
import { subjectScreen } from "./subject.js";
import * as tokens from "./token-source.js";

// Which roles see which screen. Only to hide what the user cannot do: the API enforces it.
const SCREENS = [
  { key: "review", label: "Review queue", roles: ["reviewer"], render: (root, ctx) => reviewScreen(root, ctx) },
  { key: "subject", label: "Subject", roles: ["agent", "reviewer"], render: (root, ctx) => subjectScreen(root, ctx) },
  { key: "audit", label: "Audit", roles: ["auditor"], render: (root) => auditScreen(root) },
  { key: "privacy", label: "Privacy", roles: ["privacy_officer"], render: (root) => privacyScreen(root) },
];
const ROLES = ["agent", "reviewer", "auditor", "privacy_officer", "admin", "integration"];
const CLEARANCES = ["public", "internal", "confidential", "restricted"];

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function allowed(claims) {
  return SCREENS.filter((s) => s.roles.some((r) => claims.roles.includes(r)));
}

function route() {
  const claims = tokens.claims();
  if (!claims) return signIn();
  const screens = allowed(claims);
  renderChrome(claims, screens);
  const [, key = "", ...rest] = location.hash.replace(/^#/, "").split("/");
  const screen = screens.find((s) => s.key === key) || screens[0];
  for (const link of nav.querySelectorAll("a")) {
    if (link.dataset.screen === (screen && screen.key)) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!screen) {
    replace(main, el("h1", { id: "screen-title", tabindex: "-1" }, "Nothing to show"),
      el("p", {}, `Your roles (${claims.roles.join(", ") || "none"}) open no screen of this console.`));
  } else {
    screen.render(main, { subjectId: rest.length ? decodeURIComponent(rest.join("/")) : "", roles: claims.roles, navigate });
  }
  const title = document.getElementById("screen-title");
  if (title && document.activeElement === document.body) title.focus();
}

function renderChrome(claims, screens) {
  replace(nav, el("ul", {}, screens.map((s) => el("li", {}, el("a", { href: `#/${s.key}`, "data-screen": s.key }, s.label)))));
  replace(who,
    el("span", { id: "who-text" }, `${claims.sub} · tenant ${claims.tenant} · ${claims.roles.join(", ")} · clearance ${claims.clearance}`),
    el("button", { type: "button", id: "sign-out", on: { click: () => { tokens.signOut(); location.hash = ""; route(); } } }, "Sign out"));
}

function signIn(message) {
  replace(nav);
  replace(who);
  const pasted = el("textarea", { name: "token", rows: "3", required: true, autocomplete: "off", spellcheck: "false" });
  const status = statusRegion();
  const refused = tokens.takeSignInProblem();
  if (message || refused) showError(status, new Error(message || refused));
  const pasteForm = el("form", { "aria-labelledby": "paste-heading" },
    field("Bearer token", pasted, "A JWT for this service (for example from `memory token`)."),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Sign in")));
  pasteForm.addEventListener("submit", (e) => {
    e.preventDefault();
    try {
      tokens.useToken(pasted.value);
      route();
    } catch (error) {
      showError(status, error);
      pasted.focus();
    }
  });
  const devSlot = el("div", { id: "dev-sign-in" });
  const idp = el("button", { type: "button", class: "primary", id: "idp-sign-in", on: { click: () => {
    tokens.identityProviderSignIn().catch((error) => showError(status, error));
  } } }, "Sign in with your organization");
  replace(main,
    el("h1", { id: "screen-title", tabindex: "-1" }, "Sign in"),
    status,
    tokens.identityProviderSignInAvailable() && el("section", { class: "panel" }, el("h2", {}, "Your organization"), el("div", { class: "actions" }, idp)),
    el("section", { class: "panel" }, el("h2", { id: "paste-heading" }, "Paste a token"), pasteForm),
    devSlot);
  tokens.developmentSignInAvailable().then((available) => {
    if (available) devSlot.append(developmentForm(status));
  });
}

function developmentForm(status) {
  const tenant = el("input", { type: "text", name: "tenant", value: "acme", required: true, autocomplete: "off" });
  const sub = el("input", { type: "text", name: "sub", value: "me", required: true, autocomplete: "off" });
  const clearance = el("select", { name: "clearance" }, CLEARANCES.map((c) => el("option", { value: c, selected: c === "internal" }, c)));
  const roleBoxes = ROLES.map((r) => {
    const box = el("input", { type: "checkbox", name: "roles", value: r, id: `dev-role-${r}`, checked: r === "reviewer" });
    return el("div", { class: "checkbox" }, box, el("label", { for: box.id }, r));
  });
  const form = el("form", { "aria-labelledby": "dev-heading", id: "dev-form" },
    el("p", { class: "warning" }, "Development only. This local server signs a token for whatever you choose here; it is not offered anywhere but `memory serve` on this machine."),
    field("Tenant", tenant), field("User (sub)", sub),
    el("fieldset", {}, el("legend", {}, "Roles"), roleBoxes),
    field("Clearance", clearance),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Mint a development token and sign in")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const roles = [...form.querySelectorAll("input[name=roles]:checked")].map((b) => b.value);
    try {
      await tokens.developmentSignIn({ tenant: tenant.value.trim(), sub: sub.value.trim(), roles, clearance: clearance.value });
      route();
    } catch (error) {
      showError(status, error);
    }
  });
  return el("section", { class: "panel dev" }, el("h2", { id: "dev-heading" }, "Development sign-in"), form);
}

onUnauthenticated((error) => {
  tokens.signOut();
  signIn(`Signed out: ${error.message}`);
});
window.addEventListener("hashchange", route);
route();

// The skip link moves focus without touching the hash (the hash is the router's).
document.querySelector(".skip").addEventListener("click", (e) => {
  e.preventDefault();
  main.focus();
});

// Where the console's bearer token comes from: the ONE module to replace when sign-in moves to the
// tenant's identity provider (OIDC authorization code with PKCE). Everything else asks this module
// for token() and claims() only.
//
// Today a token is pasted, or (local development only) minted by the `memory serve` development
// endpoint. It lives in memory and in sessionStorage (gone when the tab closes), never in
// local storage or a cookie.

const STORAGE_KEY = "agent-memory-console.token";
const DEV_TOKEN_URL = "dev/token"; // relative to /console/: absent wherever the console is static files

let current = readStored();

function readStored() {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the token lives in memory only
  }
}

/** The bearer token, or null when signed out. */
export function token() {
  return current;
}

/** Sign in with a token (pasted, or minted below). */
export function useToken(value) {
  const trimmed = String(value || "").trim();
  if (!decodeClaims(trimmed)) {
    throw new Error("That is not a token (expected header.payload.signature).");
  }
  current = trimmed;
  try {
    sessionStorage.setItem(STORAGE_KEY, trimmed);
  } catch {
    /* memory only */
  }
}

export function signOut() {
  current = null;
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    /* nothing stored */
  }
}

function decodeClaims(jwt) {
  const parts = String(jwt || "").split(".");
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const padded = b64 + "=".repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === "object" ? claims : null;
  } catch {
    return null;
  }
}

/**
 * The signed-in user's claims, read WITHOUT verifying the signature: only to decide which controls
 * to show. The API verifies the token and enforces roles and clearance on every call.
 */
export function claims() {
  const c = decodeClaims(current);
  if (!c) return null;
  return {
    sub: String(c.sub ?? ""),
    tenant: String(c.tenant_id ?? ""),
    roles: Array.isArray(c.roles) ? c.roles.map(String) : [],
    clearance: String(c.clearance || "internal"),
    subjects: Array.isArray(c.subjects) ? c.subjects.map(String) : null,
    expiresAt: typeof c.exp === "number" ? new Date(c.exp * 1000) : null,
  };
}

/** Whether the local development sign-in is offered here (only `memory serve` on loopback). */
export async function developmentSignInAvailable() {
  try {
    const r = await fetch(DEV_TOKEN_URL, { headers: { Accept: "application/json" } });
    if (!r.ok) return false;
    const body = await r.json();
    return body.enabled === true;
  } catch {
    return false;
  }
}

/** Development only: ask the local server to mint a token for these claims, and use it. */
export async function developmentSignIn({ tenant, sub, roles, clearance }) {
  const r = await fetch(DEV_TOKEN_URL, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Console-Dev": "1" },
    body: JSON.stringify({ tenant_id: tenant, sub, roles, clearance }),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    throw new Error((body.error && body.error.message) || `the development sign-in answered ${r.status}`);
  }
  useToken(body.token);
}

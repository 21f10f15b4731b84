// Where the console's bearer token comes from. Everything else asks this module for token() and
// claims() only.
//
// In production the user signs in at the tenant's identity provider: OpenID Connect authorization
// code with PKCE (S256), configured by /console/config.json (`memory serve` writes it from its
// settings, the stack into the console's bucket). The round trip keeps its state, nonce and code
// verifier in sessionStorage and drops them once the answer is back; the answer is refused unless
// its state is the one this tab sent, and the ID token unless it carries the nonce. Locally a
// token can still be pasted, or minted by the `memory serve` development endpoint.
//
// Tokens live in memory and in sessionStorage (gone when the tab closes), never in local storage
// or a cookie. Signing out forgets every key this module stored.

const STORAGE_KEY = "agent-memory-console.token";
const PENDING_KEY = "agent-memory-console.sign-in"; // {state, nonce, verifier, redirectUri, hash}
const DEV_TOKEN_URL = "dev/token"; // relative to /console/: absent wherever the console is static files
const CONFIG_URL = "config.json";
// The page waits for these before it shows anything: bounded, so a silent server cannot blank it.
const CONFIG_TIMEOUT_MS = 10000;
const TOKEN_TIMEOUT_MS = 20000;

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

/** Forget the token and any sign-in under way, in memory and in sessionStorage. */
export function signOut() {
  current = null;
  problem = null;
  for (const key of [STORAGE_KEY, PENDING_KEY]) {
    try {
      sessionStorage.removeItem(key);
    } catch {
      /* nothing stored */
    }
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
  const n = names || {};
  const at = (path, fallback) => claimAt(c, path || fallback);
  const subjects = at(n.subjects, "subjects");
  return {
    sub: String(at(n.sub, "sub") ?? ""),
    tenant: String(n.tenant_id || (at(n.tenant, "tenant_id") ?? "")),
    roles: mappedRoles(at(n.roles, "roles"), n),
    clearance: String(at(n.clearance, "clearance") || n.default_clearance || "internal"),
    subjects: Array.isArray(subjects) ? subjects.map(String) : null,
    expiresAt: typeof c.exp === "number" ? new Date(c.exp * 1000) : null,
  };
}

/** A claim by its name, else by its dotted path (`realm_access.roles`), as the API reads it. */
function claimAt(c, path) {
  if (Object.prototype.hasOwnProperty.call(c, path)) return c[path];
  let value = c;
  for (const part of path.split(".")) {
    if (!value || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = value[part];
  }
  return value;
}

/** The IdP's role values as the API maps them: a list or a space-separated string; with a
 * prefix only values carrying it (dropped), with a map only mapped values. */
function mappedRoles(raw, n) {
  const values = typeof raw === "string" ? raw.split(/\s+/).filter(Boolean) : Array.isArray(raw) ? raw.map(String) : [];
  const map = n.role_map && typeof n.role_map === "object" ? n.role_map : {};
  const mapped = Object.keys(map).length > 0;
  const roles = [];
  for (let value of values) {
    if (n.role_prefix) {
      if (!value.startsWith(n.role_prefix)) continue;
      value = value.slice(n.role_prefix.length);
    }
    if (mapped) {
      if (!Object.prototype.hasOwnProperty.call(map, value)) continue;
      value = String(map[value]);
    }
    roles.push(value);
  }
  return roles;
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

// ---- Sign-in at the tenant's identity provider (OIDC authorization code + PKCE) ----

let problem = null; // why the last answer from the identity provider was refused

let names = null; // the API's claim mapping (config.json `claims`), or the service's own names

async function loadConfig() {
  try {
    const r = await fetch(CONFIG_URL, {
      headers: { Accept: "application/json" },
      cache: "no-store",
      signal: AbortSignal.timeout(CONFIG_TIMEOUT_MS),
    });
    if (!r.ok) return null;
    const body = await r.json();
    if (body && body.claims && typeof body.claims === "object") names = body.claims;
    const oidc = body && body.oidc;
    if (!oidc || !oidc.authorization_endpoint || !oidc.token_endpoint || !oidc.client_id) return null;
    return oidc;
  } catch {
    return null; // no configuration: paste a token (or the development sign-in)
  }
}

function base64url(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomString() {
  return base64url(crypto.getRandomValues(new Uint8Array(32))); // 256 bits, 43 characters
}

async function s256(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function redirectUri(oidc) {
  return oidc.redirect_uri || `${location.origin}${location.pathname}`;
}

/** Whether this console signs in at an identity provider (configured in config.json). */
export function identityProviderSignInAvailable() {
  return Boolean(oidc);
}

/** Why the identity provider's last answer was refused (once), or null. */
export function takeSignInProblem() {
  const p = problem;
  problem = null;
  return p;
}

/** Leave for the identity provider's sign-in page; it sends the browser back with a code. */
export async function identityProviderSignIn() {
  if (!oidc) throw new Error("No identity provider is configured for this console.");
  const pending = {
    state: randomString(),
    nonce: randomString(),
    verifier: randomString(),
    redirectUri: redirectUri(oidc),
    hash: location.hash,
  };
  try {
    sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  } catch {
    throw new Error("This browser does not keep session storage, which the sign-in needs for its round trip.");
  }
  const url = new URL(oidc.authorization_endpoint);
  const params = {
    response_type: "code",
    client_id: oidc.client_id,
    redirect_uri: pending.redirectUri,
    scope: oidc.scopes || "openid",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await s256(pending.verifier),
    code_challenge_method: "S256",
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.toString());
}

function takePending() {
  try {
    const raw = sessionStorage.getItem(PENDING_KEY);
    sessionStorage.removeItem(PENDING_KEY); // one answer per sign-in, whatever it is
    const pending = raw ? JSON.parse(raw) : null;
    return pending && typeof pending === "object" ? pending : null;
  } catch {
    return null;
  }
}

function idTokenProblem(idToken, pending) {
  // The ID token came straight from the token endpoint over TLS, so its claims are read without
  // checking its signature (OpenID Connect Core 3.1.3.7); the API verifies the access token.
  const c = decodeClaims(idToken);
  if (!c) return "its ID token is not a token";
  if (c.nonce !== pending.nonce) return "its ID token does not carry this sign-in's nonce";
  if (oidc.issuer && c.iss !== oidc.issuer) return "its ID token is from another issuer";
  const audiences = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (!audiences.includes(oidc.client_id)) return "its ID token is for another client";
  return null;
}

/** An OAuth error code as the page shows it: the code's own characters only, or "error". */
function errorCode(value) {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(String(value ?? "")) ? String(value) : "error";
}

async function redeem(code, pending) {
  let r;
  try {
    r = await fetch(oidc.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: pending.redirectUri,
        client_id: oidc.client_id,
        code_verifier: pending.verifier,
      }),
      credentials: "omit",
      cache: "no-store",
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch {
    return "the identity provider's token endpoint could not be reached in time";
  }
  const body = await r.json().catch(() => ({}));
  if (!r.ok || typeof body.access_token !== "string") {
    return `the identity provider issued no token (${body.error ? errorCode(body.error) : r.status})`;
  }
  if (String(oidc.scopes || "openid").split(/\s+/).includes("openid")) {
    const why = idTokenProblem(body.id_token, pending);
    if (why) return why;
  }
  try {
    useToken(body.access_token);
  } catch {
    return "the identity provider's access token is not a JWT";
  }
  return null;
}

/** The identity provider's answer in this page's address (?code&state or ?error), if any. */
async function completeSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has("code") && !params.has("error") && !params.has("state")) return;
  const pending = takePending();
  // The code leaves the address bar (and the history) whatever happens next.
  const hash = pending && /^#\/[^\s]*$/.test(String(pending.hash)) ? pending.hash : location.hash;
  history.replaceState(null, "", `${location.pathname}${hash}`);
  let why;
  if (!oidc) why = "this console has no identity provider configured";
  else if (!pending || params.get("state") !== pending.state) {
    why = "the answer does not belong to a sign-in started in this tab (state)";
  } else if (params.has("error")) why = `the identity provider refused (${errorCode(params.get("error"))})`;
  else if (!params.get("code")) why = "the answer carries no code";
  else why = await redeem(params.get("code"), pending);
  if (why) {
    problem = `Sign-in refused: ${why}. Sign in again.`;
    current = null;
    try {
      sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      /* memory only */
    }
  }
}

// Before the shell routes (this module's evaluation is awaited by every importer): the
// configuration, then the identity provider's answer when the page is its redirect.
const oidc = await loadConfig();
await completeSignIn();

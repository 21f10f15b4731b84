// The public /v1 API, called with the signed-in user's token. The console uses nothing else:
// whatever it shows, an API client could show.

import { token } from "./token-source.js";

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `the API answered ${status}`);
    this.status = status;
    this.code = err.code || "error";
    this.field = err.field || null;
  }
}

const listeners = new Set();
/** Called with the ApiError whenever the API refuses the token (401). */
export function onUnauthenticated(fn) {
  listeners.add(fn);
}

/** One API call; resolves to {body, text}: the parsed body and its exact text. */
export async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, { error: { code: "unavailable", message: "the API could not be reached" } });
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed);
    if (response.status === 401) listeners.forEach((fn) => fn(error));
    throw error;
  }
  return { body: parsed, text };
}

export const get = async (path) => (await call("GET", path)).body;
export const post = async (path, body) => (await call("POST", path, body ?? {})).body;

/** A path with its query string (empty values left out). */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Every page of a cursor-paged list, up to `maxPages`; {items, complete}. */
export async function allPages(path, params, key, { maxPages = 20, cursorKey = "next_cursor" } = {}) {
  const items = [];
  let cursor = null;
  for (let page = 0; page < maxPages; page += 1) {
    const body = await get(withQuery(path, { ...params, cursor }));
    items.push(...(body[key] || []));
    cursor = body[cursorKey];
    if (!cursor) return { items, complete: true };
  }
  return { items, complete: false };
}

export const enc = encodeURIComponent;

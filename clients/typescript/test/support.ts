/** What the tests share: the service and tokens the harness started and minted, and small helpers. */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: these tests run against a real memory serve; run them with ` +
        "pytest tests/client/test_typescript_client.py, which starts one and mints the tokens",
    );
  }
  return value;
}

/** The service under test and who may call it (tenant `ts-client-tests`). */
export const service = {
  url: required("MEMORY_TEST_URL"),
  /** The customer every agent token here is bound to. */
  subject: required("MEMORY_TEST_SUBJECT"),
  /** Another customer of the tenant: nothing of the bound agent's may land on it. */
  otherSubject: required("MEMORY_TEST_OTHER_SUBJECT"),
  /** A customer the privacy tests export and erase. */
  erasedSubject: required("MEMORY_TEST_ERASED_SUBJECT"),
  agentToken: required("MEMORY_TEST_AGENT_TOKEN"),
  unboundAgentToken: required("MEMORY_TEST_UNBOUND_AGENT_TOKEN"),
  reviewerToken: required("MEMORY_TEST_REVIEWER_TOKEN"),
  privacyToken: required("MEMORY_TEST_PRIVACY_TOKEN"),
  auditorToken: required("MEMORY_TEST_AUDITOR_TOKEN"),
};

/** A local HTTP server answering with `handler`; closed by the returned function. */
export async function localServer(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void>; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every console call made while `action` runs (the client must print nothing). */
export async function consoleCalls(action: () => Promise<void>): Promise<unknown[][]> {
  const calls: unknown[][] = [];
  const names = ["log", "info", "warn", "error", "debug", "trace"] as const;
  const saved = names.map((n) => console[n]);
  for (const n of names) console[n] = (...args: unknown[]) => void calls.push([n, ...args]);
  try {
    await action();
  } finally {
    names.forEach((n, i) => (console[n] = saved[i] as (typeof console)[typeof n]));
  }
  return calls;
}

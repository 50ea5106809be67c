/**
 * Steps of the approval view's browser tests (`/?approve=<id>`): governed
 * templates and submissions over HTTP, ticking passkeys, approving and
 * rejecting, reading the quorum table, and a CDP interception that rewrites
 * what the page reads.
 * @module
 */

import assert from "node:assert/strict";
import type { CdpEvent, Page } from "./chromium.ts";
import { click, text } from "./passkey_page.ts";
import type { TestServer } from "./server.ts";

/** What the page said about an approval. */
export interface Outcome {
  state: string;
  summary: string;
  body: string;
}

/** One row of the quorum table, as shown. */
export interface QuorumRow {
  key: string;
  shown: string;
  title: string;
  kind: string;
  weight: string;
  approved: string;
  at: string | null;
  mine: string;
}

/** Stores a template governed by `authorization` over HTTP; returns its id. */
export async function governedTemplate(
  server: TestServer,
  authorization: unknown,
): Promise<string> {
  const response = await fetch(`${server.url}/templates`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "transfer", fields: ["amount", "to"], authorization }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return (await response.json()).id;
}

/** POST /intents with a JSON body. */
export async function post(server: TestServer, body: unknown): Promise<Response> {
  return await fetch(`${server.url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** GET /intents/{id} as admin (asserting 200); the record. */
export async function adminRecord(server: TestServer, id: string) {
  const response = await fetch(`${server.url}/intents/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  });
  assert.equal(response.status, 200);
  return await response.json();
}

/** The base58 keys of the passkeys the page lists, in registration order. */
export async function listedKeys(page: Page): Promise<string[]> {
  return await page.evaluate<string[]>(
    "[...document.querySelectorAll('#passkeys .key')].map((e) => e.textContent)",
  );
}

/** Ticks exactly the passkeys with these names in section 1. */
export async function tick(page: Page, ...names: string[]): Promise<void> {
  await page.evaluate(`(() => {
    for (const item of document.querySelectorAll("#passkeys li")) {
      const box = item.querySelector(".pick");
      const want = ${JSON.stringify(names)}.includes(item.querySelector("strong").textContent);
      if (box.checked !== want) box.click();
    }
  })()`);
}

/** Opens the approval view of `id` and waits until it has loaded. */
export async function openApproval(page: Page, origin: string, id: string): Promise<string> {
  await page.goto(`${origin}/?approve=${encodeURIComponent(id)}`);
  await page.waitUntil("document.documentElement.dataset.ready === 'true'", 10_000, "page ready");
  return await page.evaluate<string>("document.getElementById('approve-section').dataset.state");
}

/** Ticks only `names`, clicks "Approve with passkey" and waits for the outcome. */
export async function approveWith(page: Page, ...names: string[]): Promise<Outcome> {
  await tick(page, ...names);
  await page.evaluate("document.getElementById('approve-result').dataset.state = 'idle'");
  await click(page, "approve-button");
  const state = await page.waitUntil<string>(
    `(() => { const s = document.getElementById('approve-result').dataset.state;
      return ['accepted', 'pending', 'rejected', 'failed'].includes(s) ? s : ''; })()`,
    20_000,
    "approval outcome",
  );
  return {
    state,
    summary: await text(page, "approve-summary"),
    body: await text(page, "approve-body"),
  };
}

/** Ticks only `names`, clicks "Reject with passkey" and waits for the outcome. */
export async function rejectWith(page: Page, ...names: string[]): Promise<Outcome> {
  await tick(page, ...names);
  await page.evaluate("document.getElementById('approve-result').dataset.state = 'idle'");
  await click(page, "reject-button");
  const state = await page.waitUntil<string>(
    `(() => { const s = document.getElementById('approve-result').dataset.state;
      return ['intent-rejected', 'pending', 'rejected', 'failed'].includes(s) ? s : ''; })()`,
    20_000,
    "rejection outcome",
  );
  return {
    state,
    summary: await text(page, "approve-summary"),
    body: await text(page, "approve-body"),
  };
}

/** The quorum table of the approval view, row by row. */
export async function quorum(page: Page): Promise<QuorumRow[]> {
  return await page.evaluate<QuorumRow[]>(`[...document.querySelectorAll("#approve-quorum tr")]
    .map((row) => ({
      key: row.dataset.key,
      shown: row.querySelector(".key").textContent,
      title: row.querySelector(".key").title,
      kind: row.cells[1].textContent,
      weight: row.cells[2].textContent,
      approved: row.cells[3].textContent,
      at: row.cells[3].querySelector("time")?.dateTime ?? null,
      mine: row.cells[4].textContent,
    }))`);
}

/** The sign counts of the virtual authenticator's credentials, by base64url credential id. */
export async function signCounts(
  page: Page,
  authenticatorId: string,
): Promise<Map<string, number>> {
  const { credentials } = await page.send("WebAuthn.getCredentials", { authenticatorId });
  return new Map(
    (credentials as { credentialId: string; signCount: number }[]).map((
      c,
    ) => [c.credentialId, c.signCount]),
  );
}

/** Problems other than the console's note on each non-2xx fetch (the refusals under test). */
export function unexpected(problems: string[]): string[] {
  return problems.filter((p) => !/Failed to load resource/.test(p));
}

/** Rewrites the body of every GET .../approvals answer with `edit` (a proxy that lies). */
export async function tamperApprovals(page: Page, edit: (view: Record<string, unknown>) => void) {
  page.on((event: CdpEvent) => {
    if (event.method !== "Fetch.requestPaused") return;
    const { requestId, responseStatusCode, responseHeaders } = event.params as {
      requestId: string;
      responseStatusCode: number;
      responseHeaders: { name: string; value: string }[];
    };
    (async () => {
      const { body, base64Encoded } = await page.send("Fetch.getResponseBody", { requestId });
      const text = base64Encoded ? atob(body as string) : body as string;
      const view = JSON.parse(
        new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))),
      );
      edit(view);
      const bytes = new TextEncoder().encode(JSON.stringify(view));
      await page.send("Fetch.fulfillRequest", {
        requestId,
        responseCode: responseStatusCode,
        responseHeaders: responseHeaders.filter((h) => h.name.toLowerCase() !== "content-length"),
        body: btoa(String.fromCharCode(...bytes)),
      });
    })().catch((error) => console.error("tampering failed:", error));
  });
  await page.send("Fetch.enable", {
    patterns: [{ urlPattern: "*/approvals", requestStage: "Response" }],
  });
}

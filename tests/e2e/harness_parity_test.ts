/**
 * The two implementations of the test harness answer alike: the same
 * requests, in process and to a server process, get the same status, media
 * type, error code and `Allow`, so a suite that moved in process still checks
 * what the server answers. Bodies the server reads by their Content-Length
 * and by streaming are among them.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { newPayload, streamOf } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { startApp } from "../support/in_process.ts";
import { startProcess } from "../support/process.ts";

const MAX_BODY_BYTES = 2048;

/** What of an answer must not depend on the harness. */
interface Seen {
  status: number;
  type: string | null;
  code: string | null;
  allow: string | null;
}

async function seen(response: Response): Promise<Seen> {
  const text = await response.text();
  const type = response.headers.get("content-type")?.split(";")[0] ?? null;
  return {
    status: response.status,
    type,
    code: type === "application/json" && text ? JSON.parse(text).code ?? null : null,
    allow: response.headers.get("allow"),
  };
}

/** The requests, each made fresh for every harness (a stream is read once). */
function requests(
  templateId: string,
  body: string,
  taken: string,
): [string, () => RequestInit][] {
  const json = { "content-type": "application/json" };
  return [
    ["/healthz", () => ({})],
    ["/healthz", () => ({ method: "HEAD" })],
    ["/healthz", () => ({ method: "BREW" })],
    ["/nope", () => ({})],
    ["/intents", () => ({ method: "DELETE" })],
    ["/intents", () => ({ method: "GET" })],
    ["/intents", () => ({ method: "POST", body })],
    ["/intents", () => ({ method: "POST", headers: json, body: "{" })],
    ["/intents", () => ({ method: "POST", headers: json, body: "x".repeat(MAX_BODY_BYTES + 1) })],
    ["/intents", () => ({ method: "POST", headers: json, body: streamOf(MAX_BODY_BYTES * 4) })],
    ["/intents", () => ({ method: "POST", headers: json, body })],
    ["/intents", () => ({ method: "POST", headers: json, body })],
    ["/intents", () => ({ method: "POST", headers: json, body: taken })],
    [`/templates/${templateId}`, () => ({})],
    [`/intents/${"x".repeat(5000)}`, () => ({})],
  ];
}

async function answers(h: Harness, key: ReturnType<typeof generateEd25519Key>): Promise<Seen[]> {
  const templateId = await h.client.addTemplate('{"parity":1}');
  const payload = newPayload(templateId.id, { id: "parity-1" });
  const body = JSON.stringify(signVariantA(payload, key));
  // The same id signed by another key: 409, where the same body again is a replay (200).
  const taken = JSON.stringify(signVariantA(payload, generateEd25519Key()));
  const out: Seen[] = [];
  for (const [path, init] of requests(templateId.id, body, taken)) {
    out.push(await seen(await h.fetch(path, init())));
  }
  return out;
}

Deno.test("in process and in a server process, the same requests get the same answers", async () => {
  const env = { MAX_BODY_BYTES: String(MAX_BODY_BYTES) };
  const key = generateEd25519Key();
  const app = await startApp({ env });
  const server = await startProcess({ env });
  try {
    const inProcess = await answers(app, key);
    const overHttp = await answers(server, key);
    assert.deepEqual(inProcess, overHttp);
    // The answers are of every kind, not one kind many times.
    assert.deepEqual(
      [...new Set(overHttp.map((a) => a.status))].sort(),
      [200, 201, 400, 401, 404, 405, 409, 413, 415],
    );
  } finally {
    await app.close();
    await server.close();
  }
});

/**
 * The request log as the server process writes it: one JSON line per request
 * on stdout, carrying the request id (given or generated), for answers of
 * every kind, and nothing else on stdout.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { expectCreated, newPayload, streamOf } from "../support/fixtures.ts";
import { type ProcessHarness, withProcess } from "../support/process.ts";
import { logLineOf } from "../support/server.ts";

const MAX_BODY_BYTES = 2048;

/** Requests answered every way the edge answers: 201, 400, 404, 405, 413 (declared and streamed), 415. */
async function answersOfEveryKind(h: ProcessHarness): Promise<void> {
  const templateId = await h.newTemplate();
  await expectCreated(await h.submit(signVariantA(newPayload(templateId), generateEd25519Key())));
  const sends: [string, RequestInit][] = [
    ["/intents", { method: "POST", headers: { "content-type": "application/json" }, body: "{" }],
    ["/intents", { method: "POST", body: new Uint8Array([0x7b, 0xff, 0x7d]) }],
    ["/intents", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(MAX_BODY_BYTES + 1),
    }],
    ["/intents", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamOf(MAX_BODY_BYTES * 4),
    }],
    ["/nope", {}],
    ["/intents/a/b", {}],
    ["/templates", { method: "GET" }],
    ["/healthz", { method: "BREW" }],
    ["/healthz", { method: "HEAD" }],
    ["/intents", { method: "GET" }],
    [`/intents/${"x".repeat(5000)}`, { headers: { authorization: h.auth } }],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [path, init] of sends) {
      if (init.body instanceof ReadableStream) init.body = streamOf(MAX_BODY_BYTES * 4);
      const response = await h.fetch(path, init);
      await response.body?.cancel();
    }
  }
}

Deno.test("the request log: one JSON line per request on stdout", async (t) => {
  await withProcess({ env: { MAX_BODY_BYTES: String(MAX_BODY_BYTES) } }, async (h) => {
    await answersOfEveryKind(h);

    await t.step("writes one JSON log line per request on stdout", async () => {
      const ids = [`log-${crypto.randomUUID()}`, `log-${crypto.randomUUID()}`];
      const ok = await h.fetch("/healthz", { headers: { "x-request-id": ids[0] } });
      await ok.body?.cancel();
      const bad = await h.fetch("/intents?limit=5", {
        method: "POST",
        headers: { "x-request-id": ids[1], "content-type": "text/plain" },
        body: "x",
      });
      await bad.body?.cancel();
      const first = await logLineOf(h.server, ids[0]);
      const second = await logLineOf(h.server, ids[1]);
      for (const line of [first, second]) {
        for (const member of ["time", "request_id", "method", "path", "status", "duration_ms"]) {
          assert.ok(member in line, `log line lacks ${member}`);
        }
        assert.ok(!Number.isNaN(Date.parse(line.time as string)));
        assert.equal(typeof line.duration_ms, "number");
        assert.ok((line.duration_ms as number) >= 0);
      }
      assert.equal(first.method, "GET");
      assert.equal(first.path, "/healthz");
      assert.equal(first.status, 200);
      assert.equal(second.method, "POST");
      assert.equal(second.path, "/intents");
      assert.equal(second.status, 415);
      const lines = h.server.stdout().split("\n").filter((l) => l.includes(ids[0]));
      assert.equal(lines.length, 1);
      // The log line of a request with a generated id carries that id.
      const gen = await h.fetch("/healthz");
      await gen.body?.cancel();
      await logLineOf(h.server, gen.headers.get("x-request-id")!);
    });

    await t.step("every stdout line is one JSON object", () => {
      const lines = h.server.stdout().split("\n").filter((l) => l.trim() !== "");
      assert.ok(lines.length > 20);
      for (const line of lines) {
        const value = JSON.parse(line);
        assert.equal(typeof value, "object");
        assert.equal(typeof value.request_id, "string");
      }
    });
  });
});

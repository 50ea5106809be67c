/**
 * Runtime configuration on the whole app: the validation rules, ETag and
 * If-Match, the client library's `setConfig`. Persistence across restarts and
 * two server processes sharing one KV file are `tests/e2e/restart_test.ts`
 * and `tests/e2e/two_processes_test.ts`.
 */

import assert from "node:assert/strict";
import { expectError, getConfig, putConfig } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";

const DEFAULT_URL = "https://extractor.example:9443/base";

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

Deno.test("runtime configuration", async (t) => {
  await withApp({ env: { EVIDENCE_EXTRACTOR_URL: DEFAULT_URL } }, async (h) => {
    await t.step("GET /config before any PUT gives the default", async () => {
      const res = await getConfig(h);
      assert.equal(res.status, 200);
      assert.ok(res.headers.get("etag"));
      assert.deepEqual(await res.json(), {
        evidence_extractor_url: "",
        effective_url: DEFAULT_URL,
        updated_at: null,
      });
    });

    await t.step("PUT /config stores a valid URL and GET returns it", async () => {
      for (
        const url of [
          "https://x.example",
          "http://localhost:8081",
          "https://x.example/api/v1/",
          "http://10.0.0.7:9000/extract",
          "https://x.example/A",
          "http://[::1]:8081",
          "https://x.example/" + "a".repeat(2048 - "https://x.example/".length),
        ]
      ) {
        const res = await putConfig(h, JSON.stringify({ evidence_extractor_url: url }));
        assert.equal(res.status, 200, `${url}: ${res.status}`);
        const body = await res.json();
        assert.deepEqual(Object.keys(body).sort(), [
          "effective_url",
          "evidence_extractor_url",
          "updated_at",
        ]);
        assert.equal(body.evidence_extractor_url, url);
        assert.equal(body.effective_url, url);
        assert.match(body.updated_at, RFC3339);
        const etag = res.headers.get("etag");
        assert.ok(etag);
        const got = await getConfig(h);
        assert.deepEqual(await got.json(), body);
        assert.equal(got.headers.get("etag"), etag);
      }
    });

    await t.step('PUT "" selects the default as effective_url', async () => {
      const res = await putConfig(h, '{"evidence_extractor_url":""}');
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.evidence_extractor_url, "");
      assert.equal(body.effective_url, DEFAULT_URL);
      assert.match(body.updated_at, RFC3339);
    });

    await t.step("rejects each invalid URL with invalid_evidence_extractor_url", async () => {
      await putConfig(h, '{"evidence_extractor_url":"https://kept.example"}');
      const invalid = [
        "ftp://x.example",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "x.example",
        "/relative/path",
        "http://",
        "https:///path-only",
        "http://user:pass@x.example",
        "http://user@x.example",
        "https://x.example/?q=1",
        "https://x.example?",
        "https://x.example/#frag",
        "https://x.example/a b",
        " https://x.example",
        "https://x.example/\t",
        "https://x.example/\n",
        "https://x.example/" + "a".repeat(2049 - "https://x.example/".length),
      ];
      for (const url of invalid) {
        const res = await putConfig(h, JSON.stringify({ evidence_extractor_url: url }));
        await expectError(res, 400, "invalid_evidence_extractor_url", {
          mentions: "evidence_extractor_url",
        });
      }
      const got = await (await getConfig(h)).json();
      assert.equal(got.evidence_extractor_url, "https://kept.example");
    });

    await t.step(
      "rejects a body that is not exactly {evidence_extractor_url: string}",
      async () => {
        for (
          const body of [
            "{}",
            '{"evidence_extractor_url":null}',
            '{"evidence_extractor_url":42}',
            '{"evidence_extractor_url":"https://x.example","extra":1}',
            '["https://x.example"]',
            '"https://x.example"',
          ]
        ) {
          await expectError(await putConfig(h, body), 400, "invalid_body");
        }
        await expectError(await putConfig(h, '{"evidence_extractor_url":'), 400, "invalid_json");
        await expectError(
          await putConfig(h, '{"evidence_extractor_url":""}', { "content-type": "text/plain" }),
          415,
          "unsupported_media_type",
        );
      },
    );

    await t.step(
      "PUT with the current ETag in If-Match succeeds and changes the ETag",
      async () => {
        const etag = (await getConfig(h)).headers.get("etag")!;
        const res = await putConfig(h, '{"evidence_extractor_url":"https://next.example"}', {
          "if-match": etag,
        });
        assert.equal(res.status, 200);
        const next = res.headers.get("etag");
        assert.ok(next);
        assert.notEqual(next, etag);
        await res.body?.cancel();
      },
    );

    await t.step("PUT with a stale If-Match is 412 and changes nothing", async () => {
      const stale = (await getConfig(h)).headers.get("etag")!;
      const move = await putConfig(h, '{"evidence_extractor_url":"https://moved.example"}');
      assert.equal(move.status, 200);
      await move.body?.cancel();
      const res = await putConfig(h, '{"evidence_extractor_url":"https://lost.example"}', {
        "if-match": stale,
      });
      await expectError(res, 412, "precondition_failed");
      const got = await (await getConfig(h)).json();
      assert.equal(got.evidence_extractor_url, "https://moved.example");
      const other = await putConfig(h, '{"evidence_extractor_url":""}', {
        "if-match": '"not-a-version"',
      });
      await expectError(other, 412, "precondition_failed");
    });

    await t.step("the client library's setConfig honours ifMatch", async () => {
      const current = await h.client.getConfig();
      const next = await h.client.setConfig("https://client.example", { ifMatch: current.etag! });
      assert.equal(next.effective_url, "https://client.example");
      await assert.rejects(
        h.client.setConfig("https://late.example", { ifMatch: current.etag! }),
        (e: Error & { status?: number; code?: string }) =>
          e.status === 412 && e.code === "precondition_failed",
      );
    });
  });
});

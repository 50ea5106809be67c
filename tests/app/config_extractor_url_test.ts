/**
 * Evidence extractor URLs in their normal form on the whole app (docs/interface.md
 * §6): `PUT /config` refuses a URL that a URL parser reads differently from
 * how it is written, naming the normal form, and stores a normal one exactly
 * as sent. The `EVIDENCE_EXTRACTOR_URL` boot setting follows the same rule
 * (`tests/e2e/boot_test.ts`).
 */

import assert from "node:assert/strict";
import { expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";

/** Deceptive URLs and the normal form a URL parser reads them as. */
const DECEPTIVE: [string, string][] = [
  ["http://0x7f.1/", "http://127.0.0.1/"],
  ["http://EXAMPLE.com", "http://example.com/"],
  ["http://x.example:80/", "http://x.example/"],
  ["https://x.example:443/v1", "https://x.example/v1"],
  ["http://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "http://example.com/"], // full-width
  ["http://exa\u200bmple.com/", "http://example.com/"], // zero-width space
  ["http://exa\u00admple.com/", "http://example.com/"], // soft hyphen
  ["http://%65xample.com/", "http://example.com/"],
  ["http://[0:0::1]:8081/", "http://[::1]:8081/"],
  ["https://x.example/v1/../admin", "https://x.example/admin"],
];

/** Normal URLs; each is stored and returned exactly as sent. */
const NORMAL = [
  "https://extractor.internal:8443/v1",
  "http://localhost:8081",
  "https://x.example/",
  "http://127.0.0.1:9000/extract/",
  "http://xn--nxasmm1c.example/",
];

function putConfig(h: Harness, url: string): Promise<Response> {
  return h.fetch("/config", {
    method: "PUT",
    headers: { authorization: h.auth, "content-type": "application/json" },
    body: JSON.stringify({ evidence_extractor_url: url }),
  });
}

async function getConfig(h: Harness): Promise<Record<string, unknown>> {
  const response = await h.fetch("/config", { headers: { authorization: h.auth } });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test("PUT /config takes evidence extractor URLs only in their normal form", async (t) => {
  await withApp({}, async (h) => {
    for (const url of NORMAL) {
      await t.step(`accepts ${url} and returns it unchanged`, async () => {
        const response = await putConfig(h, url);
        assert.equal(response.status, 200);
        const body = await response.json();
        assert.equal(body.evidence_extractor_url, url);
        assert.equal(body.effective_url, url);
        const got = await getConfig(h);
        assert.equal(got.evidence_extractor_url, url);
        assert.equal(got.effective_url, url);
      });
    }

    const kept = "https://kept.example/v1";
    for (const [url, normal] of DECEPTIVE) {
      await t.step(`refuses ${JSON.stringify(url)}, naming ${normal}`, async () => {
        assert.equal((await putConfig(h, kept)).status, 200);
        const message = await expectError(
          await putConfig(h, url),
          400,
          "invalid_evidence_extractor_url",
          { mentions: ["evidence_extractor_url", "normal form", normal] },
        );
        assert.match(message, /^[\x20-\x7e]+$/, "printable ASCII only");
        assert.equal(
          message,
          `evidence_extractor_url: is not in its normal form; write it as ${normal}`,
        );
        // Nothing changed, and the normal form the message names is accepted.
        assert.equal((await getConfig(h)).evidence_extractor_url, kept);
        const accepted = await putConfig(h, normal);
        assert.equal(accepted.status, 200);
        assert.equal((await accepted.json()).evidence_extractor_url, normal);
      });
    }

    await t.step("names no normal form longer than 2048 characters", async () => {
      const url = "https://x.example/" + "\u00e4".repeat(1000);
      const message = await expectError(
        await putConfig(h, url),
        400,
        "invalid_evidence_extractor_url",
        { notEcho: ["\u00e4", "%C3%A4"] },
      );
      assert.ok(message.length < 200, message);
    });
  });
});

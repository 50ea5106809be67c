/**
 * `GET /metrics` of a server process: it verifies on the worker threads it
 * was given (`VERIFY_WORKERS=1` in the end-to-end suites) and says so. The
 * rest of the metrics are `tests/app/metrics_test.ts`.
 */

import assert from "node:assert/strict";
import { openApiExamples } from "../../src/http/openapi/examples.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { withProcess } from "../support/process.ts";

Deno.test("a server process reports its verify worker threads", async () => {
  const env = { PASSKEY_ORIGINS: "http://localhost:8000", PASSKEY_RP_IDS: "localhost" };
  await withProcess({ env }, async (h) => {
    const examples = openApiExamples();
    await h.client.addTemplate(examples.template.text);
    await h.client.addPolicy(examples.policy.text);
    for (const example of Object.values(examples.intents)) {
      const response = await h.submit(example.body);
      assert.equal(response.status, 201, await response.text());
    }
    const samples = await scrape(h);
    // The test servers verify on one worker thread (VERIFY_WORKERS=1).
    assert.equal(sampleValue(samples, "intents_verify_workers", {}), 1);
    assert.equal(
      sampleValue(samples, "intents_http_requests_total", {
        route: "/intents",
        method: "POST",
        status: "201",
      }),
      Object.keys(examples.intents).length,
    );
  });
});

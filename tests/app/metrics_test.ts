/**
 * `GET /metrics` on the whole app: who may read it, the counts of accepted
 * intents and rejections, the latency histogram, method labels. The worker
 * threads a server process reports are `tests/e2e/metrics_workers_test.ts`.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, type Payload, signVariantA } from "../../client/mod.ts";
import { openApiExamples } from "../../src/http/openapi/examples.ts";
import { LATENCY_BUCKETS } from "../../src/telemetry/instruments.ts";
import type { Harness } from "../support/harness.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { withApp } from "../support/in_process.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

function withService(fn: (h: Harness) => Promise<void>) {
  const env = {
    METRICS_TOKEN,
    PASSKEY_ORIGINS: "http://localhost:8000",
    PASSKEY_RP_IDS: "localhost",
  };
  return withApp({ env }, fn);
}

async function post(h: Harness, path: string, body: string, admin = false) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (admin) headers.authorization = h.auth;
  const response = await h.fetch(path, { method: "POST", headers, body });
  await response.body?.cancel();
  return response.status;
}

Deno.test("GET /metrics needs the admin token or METRICS_TOKEN", async () => {
  await withService(async (h) => {
    for (const authorization of [undefined, "Bearer wrong-token-0123456789", "Basic abc"]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const response = await h.fetch("/metrics", { headers });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("www-authenticate"), "Bearer");
      assert.equal((await response.json()).code, "unauthorized");
    }
    await scrape(h, h.adminToken);
    await scrape(h, METRICS_TOKEN);
  });
});

Deno.test("counts accepted intents by variant and kind, and rejections by code", async () => {
  await withService(async (h) => {
    const examples = openApiExamples();
    assert.equal(await post(h, "/templates", examples.template.text, true), 201);
    assert.equal(await post(h, "/policies", examples.policy.text, true), 201);
    for (const example of Object.values(examples.intents)) {
      assert.equal(await post(h, "/intents", JSON.stringify(example.body)), 201);
    }
    // The same body again is a replay (200); the id signed by another key is 409.
    const duplicate = JSON.stringify(examples.intents.variant_a_ed25519.body);
    assert.equal(await post(h, "/intents", duplicate), 200);
    assert.equal(await post(h, "/intents", duplicate), 200);
    const { payload } = examples.intents.variant_a_ed25519.body as { payload: Payload };
    const taken = JSON.stringify(signVariantA(payload, generateEd25519Key()));
    assert.equal(await post(h, "/intents", taken), 409);
    assert.equal(await post(h, "/intents", taken), 409);
    const tampered = structuredClone(examples.intents.variant_b_ed25519.body) as {
      intent: { id: string };
    };
    tampered.intent.id = crypto.randomUUID();
    assert.equal(await post(h, "/intents", JSON.stringify(tampered)), 400);
    assert.equal(await post(h, "/intents", "{"), 400);

    const samples = await scrape(h);
    const accepted = (variant: string, kind: string) =>
      sampleValue(samples, "intents_accepted_total", { variant, kind });
    assert.equal(accepted("A", "Ed25519"), 1);
    assert.equal(accepted("A", "Passkey"), 1);
    assert.equal(accepted("B", "Ed25519"), 1);
    assert.equal(accepted("B", "Multisig"), 1);
    assert.equal(accepted("B", "Passkey"), 0);

    const rejected = (code: string) =>
      sampleValue(samples, "intents_rejections_total", { route: "/intents", code });
    assert.equal(rejected("intent_exists"), 2);
    assert.equal(sampleValue(samples, "intents_replays_total", { route: "/intents" }), 2);
    assert.equal(rejected("invalid_signature"), 1);
    assert.equal(rejected("invalid_json"), 1);

    const requests = (status: string) =>
      sampleValue(samples, "intents_http_requests_total", {
        route: "/intents",
        method: "POST",
        status,
      });
    assert.equal(requests("201"), 4);
    assert.equal(requests("200"), 2);
    assert.equal(requests("409"), 2);
    assert.equal(requests("400"), 2);
    // In process, bodies are verified on the calling thread (tests/e2e/metrics_workers_test.ts: workers).
    assert.equal(sampleValue(samples, "intents_verify_workers", {}), 0);
  });
});

Deno.test("the latency histogram is cumulative and counts every request", async () => {
  await withService(async (h) => {
    for (let i = 0; i < 5; i++) {
      const response = await h.fetch("/healthz");
      await response.body?.cancel();
    }
    const response = await h.fetch("/no/such/path");
    await response.body?.cancel();

    const samples = await scrape(h);
    const name = "intents_http_request_duration_seconds";
    const buckets = samples.filter((s) =>
      s.name === `${name}_bucket` && s.labels.route === "/healthz"
    );
    assert.equal(buckets.length, LATENCY_BUCKETS.length + 1);
    assert.deepEqual(
      buckets.map((b) => b.labels.le),
      [...LATENCY_BUCKETS.map(String), "+Inf"],
    );
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value);
    assert.equal(buckets.at(-1)!.value, 5);
    assert.equal(sampleValue(samples, `${name}_count`, { route: "/healthz" }), 5);
    assert.ok(sampleValue(samples, `${name}_sum`, { route: "/healthz" }) > 0);
    assert.equal(
      sampleValue(samples, "intents_http_requests_total", { route: "/healthz", status: "200" }),
      5,
    );
    assert.equal(
      sampleValue(samples, "intents_rejections_total", { route: "unmatched", code: "not_found" }),
      1,
    );
  });
});

Deno.test("an unusual method does not add a label value of its own", async () => {
  await withService(async (h) => {
    const response = await h.fetch("/healthz", { method: "BREW" });
    assert.equal(response.status, 405);
    await response.body?.cancel();
    const samples = await scrape(h);
    assert.equal(
      sampleValue(samples, "intents_http_requests_total", { route: "/healthz", method: "OTHER" }),
      1,
    );
    assert.ok(!samples.some((s) => s.labels.method === "BREW"), JSON.stringify(samples));
  });
});

import assert from "node:assert/strict";
import { openApiExamples } from "../../src/http/openapi/examples.ts";
import { LATENCY_BUCKETS } from "../../src/http/metrics.ts";
import { startServer, type TestServer } from "../support/server.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;

/**
 * Parses the text exposition format strictly: every line is a HELP or TYPE
 * comment or a sample, and every sample belongs to a declared metric.
 */
function parseExposition(text: string): Sample[] {
  assert.ok(text.endsWith("\n"), "the exposition ends with a newline");
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (comment) {
      if (comment[1] === "TYPE") {
        assert.ok(["counter", "histogram", "gauge"].includes(comment[3]), line);
        types.set(comment[2], comment[3]);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText = "", valueText] = match;
    const value = valueText === "+Inf" ? Infinity : Number(valueText);
    assert.ok(!Number.isNaN(value), line);
    const base = name.replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(name) || types.get(base) === "histogram", `undeclared metric ${name}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of labelText.matchAll(LABEL)) labels[key] = raw;
    samples.push({ name, labels, value });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number {
  const found = samples.find((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  return found?.value ?? 0;
}

async function scrape(server: TestServer, token = server.adminToken): Promise<Sample[]> {
  const response = await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await response.text());
}

async function withServer(fn: (server: TestServer) => Promise<void>) {
  const server = await startServer({
    env: {
      METRICS_TOKEN,
      PASSKEY_ORIGINS: "http://localhost:8000",
      PASSKEY_RP_IDS: "localhost",
    },
  });
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
}

async function post(server: TestServer, path: string, body: string, admin = false) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (admin) headers.authorization = `Bearer ${server.adminToken}`;
  const response = await fetch(`${server.url}${path}`, { method: "POST", headers, body });
  await response.body?.cancel();
  return response.status;
}

Deno.test("GET /metrics needs the admin token or METRICS_TOKEN", async () => {
  await withServer(async (server) => {
    for (const authorization of [undefined, "Bearer wrong-token-0123456789", "Basic abc"]) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const response = await fetch(`${server.url}/metrics`, { headers });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("www-authenticate"), "Bearer");
      assert.equal((await response.json()).code, "unauthorized");
    }
    await scrape(server, server.adminToken);
    await scrape(server, METRICS_TOKEN);
  });
});

Deno.test("counts accepted intents by variant and kind, and rejections by code", async () => {
  await withServer(async (server) => {
    const examples = openApiExamples();
    assert.equal(await post(server, "/templates", examples.template.text, true), 201);
    assert.equal(await post(server, "/policies", examples.policy.text, true), 201);
    for (const example of Object.values(examples.intents)) {
      assert.equal(await post(server, "/intents", JSON.stringify(example.body)), 201);
    }
    const duplicate = JSON.stringify(examples.intents.variant_a_ed25519.body);
    assert.equal(await post(server, "/intents", duplicate), 409);
    assert.equal(await post(server, "/intents", duplicate), 409);
    const tampered = structuredClone(examples.intents.variant_b_ed25519.body) as {
      intent: { id: string };
    };
    tampered.intent.id = crypto.randomUUID();
    assert.equal(await post(server, "/intents", JSON.stringify(tampered)), 400);
    assert.equal(await post(server, "/intents", "{"), 400);

    const samples = await scrape(server);
    const accepted = (variant: string, kind: string) =>
      value(samples, "intents_accepted_total", { variant, kind });
    assert.equal(accepted("A", "Ed25519"), 1);
    assert.equal(accepted("A", "Passkey"), 1);
    assert.equal(accepted("B", "Ed25519"), 1);
    assert.equal(accepted("B", "Multisig"), 1);
    assert.equal(accepted("B", "Passkey"), 0);

    const rejected = (code: string) =>
      value(samples, "intents_rejections_total", { route: "/intents", code });
    assert.equal(rejected("intent_exists"), 2);
    assert.equal(rejected("invalid_signature"), 1);
    assert.equal(rejected("invalid_json"), 1);

    const requests = (status: string) =>
      value(samples, "intents_http_requests_total", { route: "/intents", method: "POST", status });
    assert.equal(requests("201"), 4);
    assert.equal(requests("409"), 2);
    assert.equal(requests("400"), 2);
    // The test servers verify on one worker thread (VERIFY_WORKERS=1).
    assert.equal(value(samples, "intents_verify_workers", {}), 1);
  });
});

Deno.test("the latency histogram is cumulative and counts every request", async () => {
  await withServer(async (server) => {
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${server.url}/healthz`);
      await response.body?.cancel();
    }
    const response = await fetch(`${server.url}/no/such/path`);
    await response.body?.cancel();

    const samples = await scrape(server);
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
    assert.equal(value(samples, `${name}_count`, { route: "/healthz" }), 5);
    assert.ok(value(samples, `${name}_sum`, { route: "/healthz" }) > 0);
    assert.equal(
      value(samples, "intents_http_requests_total", { route: "/healthz", status: "200" }),
      5,
    );
    assert.equal(
      value(samples, "intents_rejections_total", { route: "unmatched", code: "not_found" }),
      1,
    );
  });
});

Deno.test("an unusual method does not add a label value of its own", async () => {
  await withServer(async (server) => {
    const response = await fetch(`${server.url}/healthz`, { method: "BREW" });
    assert.equal(response.status, 405);
    await response.body?.cancel();
    const samples = await scrape(server);
    assert.equal(
      value(samples, "intents_http_requests_total", { route: "/healthz", method: "OTHER" }),
      1,
    );
    assert.ok(!samples.some((s) => s.labels.method === "BREW"), JSON.stringify(samples));
  });
});

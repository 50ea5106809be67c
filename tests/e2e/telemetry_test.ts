/**
 * Telemetry as Deno Deploy reads it (docs/interface.md §13): the server
 * process with `OTEL_DENO=true` exports to a real OTLP/JSON receiver, on this
 * Deno and on the one Deploy runs. Server spans carry `http.route`; the
 * service's spans (verification on the worker thread, the commit and its
 * waits, decisions, due work, delivery attempts) hang where they belong with
 * attributes that say what happened and hold no secret, signature or token;
 * the `/metrics` series arrive as instruments; request log lines lead to
 * their spans; the generated admin token is never exported.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { newPayload } from "../support/fixtures.ts";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import {
  addGoverned,
  approve,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
  reject,
} from "../support/governed.ts";
import { harnessFor } from "../support/process.ts";
import { startServer } from "../support/server.ts";
import { acknowledged, LOCAL_WEBHOOKS, startReceiver } from "../support/webhooks.ts";
import {
  type ExportedSpan,
  otelEnv,
  type OtlpReceiver,
  startOtlpReceiver,
} from "../support/otlp_receiver.ts";
import { sleep } from "../support/time.ts";

const SERVER = 2;
const CLIENT = 3;
const CONCURRENT = 24;

/** The server spans of a route, by method. */
function serverSpans(otlp: OtlpReceiver, method: string, route: string): ExportedSpan[] {
  return otlp.spans.filter((s) =>
    s.kind === SERVER && s.attributes["http.request.method"] === method &&
    s.attributes["http.route"] === route
  );
}

function named(otlp: OtlpReceiver, name: string): ExportedSpan[] {
  return otlp.spans.filter((s) => s.name === name);
}

/** The span `child` hangs under (same trace), among `parents`. */
function parentOf(child: ExportedSpan, parents: ExportedSpan[]): ExportedSpan | undefined {
  return parents.find((p) => p.traceId === child.traceId && p.spanId === child.parentSpanId);
}

function points(otlp: OtlpReceiver, metric: string) {
  return otlp.points.filter((p) => p.scope === "intents" && p.metric === metric);
}

async function telemetryRun(deno: string | undefined): Promise<void> {
  const otlp = startOtlpReceiver();
  const hook = startReceiver();
  const server = await startServer({
    deno,
    env: { ...otelEnv(otlp.endpoint), ...LOCAL_WEBHOOKS, ADMIN_TOKEN: "" },
  });
  try {
    // The generated token is on stderr, as before, and never in what is exported.
    let adminToken = "";
    for (let i = 0; i < 100 && adminToken === ""; i++) {
      adminToken = /this run's admin token is (\S+)/.exec(server.stderr())?.[1] ?? "";
      if (adminToken === "") await sleep(20);
    }
    assert.ok(adminToken.length >= 16, server.stderr());
    const h = harnessFor({ ...server, adminToken });

    const endpoint = await h.client.webhooks.add({ url: hook.url });
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    const bodies = Array.from(
      { length: CONCURRENT },
      () => signVariantA(newPayload(template), key),
    );
    // Concurrent submissions share group commits.
    const statuses = await Promise.all(bodies.map(async (body) => {
      const response = await h.submit(body);
      await response.body?.cancel();
      return response.status;
    }));
    assert.deepEqual(statuses, bodies.map(() => 201));
    const id = bodies[0].payload.id;
    const got = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
    assert.equal(got.status, 200);
    await got.body?.cancel();
    assert.equal((await h.fetch("/no/such/path")).status, 404);
    const made = await h.fetch("/healthz", { method: "XYZZY" });
    assert.equal(made.status, 405);
    await made.body?.cancel();

    // A governed intent approved, and one rejected.
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([e1, e2], 2));
    const decided = [newSigned("policy", policy), newSigned("policy", policy)];
    const signatures: string[] = [];
    for (const signed of decided) {
      const signature = await e1.sign(signed);
      signatures.push(signature.Ed25519.signature);
      const response = await h.submit(bodyOf(signed, signature));
      assert.equal(response.status, 202, await response.text());
    }
    await approve(h, decided[0].id as string, decided[0], e2);
    await reject(h, decided[1].id as string, decided[1], e2);

    const events = CONCURRENT + 4;
    await hook.until((d) => acknowledged(d).length >= events, 20_000, "every event delivered");
    await otlp.until(
      () =>
        named(otlp, "intents.webhook.attempt").length >= events &&
        named(otlp, "intents.decide").length >= 2 &&
        points(otlp, "intents.webhook.deliveries").length > 0 &&
        points(otlp, "intents.webhook.lag").length > 0 &&
        serverSpans(otlp, "POST", "/intents/{id}/rejections").length > 0,
      20_000,
      "the spans and metrics of the work done",
    );

    // Server spans: the route's template, never the id; none where no route matched.
    const submits = serverSpans(otlp, "POST", "/intents");
    assert.equal(submits.length, CONCURRENT + 2);
    assert.ok(submits.every((s) => s.name === "POST /intents"));
    const [read] = serverSpans(otlp, "GET", "/intents/{id}");
    assert.equal(read.name, "GET /intents/{id}");
    assert.ok(String(read.attributes["url.path"]).endsWith(id));
    const unmatched = otlp.spans.filter((s) => s.attributes["url.path"] === "/no/such/path");
    assert.equal(unmatched.length, 1);
    assert.equal(unmatched[0].attributes["http.route"], undefined);
    // A method the client made up names no span.
    const madeUp = otlp.spans.filter((s) =>
      s.kind === SERVER && s.attributes["http.route"] === "/healthz" && s.name !== "GET /healthz"
    );
    assert.deepEqual(madeUp.map((s) => s.name), ["HTTP /healthz"]);

    // Verification: on the worker thread, a child of its request's span.
    const verifies = named(otlp, "intents.verify");
    assert.equal(verifies.length, CONCURRENT + 2);
    for (const span of verifies) {
      assert.ok(parentOf(span, submits), "a verification under its request");
      assert.equal(span.attributes["intents.verify.thread"], "worker");
      assert.equal(span.attributes["intents.outcome"], "verified");
      assert.equal(span.attributes["intents.signature.kind"], "Ed25519");
    }
    assert.equal(
      verifies.filter((s) => s.attributes["intents.variant"] === "A").length,
      CONCURRENT,
    );

    // The commit: a wait under each request; commits in traces of their own, linked to the waits.
    const waits = named(otlp, "intents.commit.wait");
    assert.equal(waits.length, CONCURRENT + 2);
    assert.ok(
      waits.every((w) => parentOf(w, submits) && w.attributes["intents.outcome"] === "created"),
    );
    const commits = named(otlp, "intents.commit");
    const linked = commits.flatMap((c) => c.links.map((l) => l.spanId));
    assert.deepEqual(
      linked.toSorted(),
      waits.map((w) => w.spanId).toSorted(),
      "each wait linked once",
    );
    for (const commit of commits) {
      assert.ok(!commit.parentSpanId, "a commit starts a trace of its own");
      assert.equal(commit.attributes["intents.commit.inserts"], commit.links.length);
      assert.equal(commit.attributes["intents.outcome"], "committed");
    }
    assert.ok(commits.some((c) => c.links.length >= 2), "a commit served several requests");

    // Decisions under their requests.
    const decisions = named(otlp, "intents.decide");
    const approval = decisions.find((s) => s.attributes["intents.decision"] === "approval")!;
    assert.ok(parentOf(approval, serverSpans(otlp, "POST", "/intents/{id}/approvals")));
    assert.equal(approval.attributes["intents.outcome"], "recorded");
    assert.equal(approval.attributes["intents.ended"], "accepted");
    const rejection = decisions.find((s) => s.attributes["intents.decision"] === "rejection")!;
    assert.ok(parentOf(rejection, serverSpans(otlp, "POST", "/intents/{id}/rejections")));

    // Due work (the endpoint's lease taken) and each delivery attempt.
    const due = named(otlp, "intents.due_work").filter((s) =>
      s.attributes["intents.work.kind"] === "webhook"
    );
    assert.ok(due.length >= 1);
    const attempts = named(otlp, "intents.webhook.attempt");
    for (const span of attempts) {
      assert.equal(span.kind, CLIENT);
      assert.ok(!span.parentSpanId);
      assert.equal(span.attributes["intents.webhook.endpoint"], endpoint.id);
      assert.equal(span.attributes["intents.outcome"], "acknowledged");
      assert.equal(span.attributes["http.response.status_code"], 204);
    }

    // The /metrics series as instruments, the request duration by route among them.
    const accepted = points(otlp, "intents.accepted").filter((p) =>
      p.attributes["intents.variant"] === "A" &&
      p.attributes["intents.signature.kind"] === "Ed25519"
    );
    assert.ok(accepted.some((p) => p.value === CONCURRENT), JSON.stringify(accepted));
    assert.ok(
      points(otlp, "intents.http.server.request.duration").some((p) =>
        p.type === "histogram" && p.attributes["http.route"] === "/intents" &&
        p.value === CONCURRENT + 2
      ),
    );
    assert.ok(points(otlp, "intents.verify.workers").some((p) => p.value === 1));
    assert.ok(
      points(otlp, "intents.webhook.deliveries").some((p) =>
        p.attributes["intents.outcome"] === "acknowledged" && p.value >= 1
      ),
    );
    // The delivery figures of /metrics are instruments too: the lag by endpoint, the leases held.
    const lag = points(otlp, "intents.webhook.lag");
    assert.ok(
      lag.some((p) => typeof p.attributes["intents.webhook.endpoint"] === "string"),
      JSON.stringify(lag),
    );
    assert.ok(points(otlp, "intents.webhook.leases").some((p) => p.value === 1));

    // Request log lines carry their server span's ids.
    const lines = server.stdout().split("\n").filter((l) => l.includes('"path":"/intents"'));
    assert.equal(lines.length, CONCURRENT + 2);
    for (const line of lines) {
      const { trace_id, span_id } = JSON.parse(line);
      assert.ok(submits.some((s) => s.traceId === trace_id && s.spanId === span_id), line);
    }

    // Nothing exported holds the admin token, the webhook secret or a signature.
    const secrets = [
      adminToken,
      endpoint.secret,
      endpoint.secret.replace(/^whsec_/, ""),
      ...signatures,
      ...bodies.map((b) => (b.signature as { Ed25519: { signature: string } }).Ed25519.signature),
      ...hook.deliveries.map((d) => d.signature.split(" ")[0].replace(/^v1,/, "")),
    ];
    const exported = otlp.texts.join("\n");
    for (const secret of secrets) assert.ok(!exported.includes(secret), "a secret was exported");
    assert.ok(otlp.logs.length > 0, "console output is exported as logs");
  } finally {
    await server.stop();
    await hook.close();
    await otlp.close();
  }
}

/**
 * Verification on the serving thread (no verify worker, as below three
 * CPUs): its span is the child of its request's, made once the outcome is
 * known, and a refusal says so.
 */
async function servingThreadRun(deno: string | undefined): Promise<void> {
  const otlp = startOtlpReceiver();
  const server = await startServer({
    deno,
    env: { ...otelEnv(otlp.endpoint), VERIFY_WORKERS: "0" },
  });
  try {
    const h = harnessFor(server);
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    const bodies = Array.from({ length: 8 }, () => signVariantA(newPayload(template), key));
    const statuses = await Promise.all(bodies.map(async (body) => {
      const response = await h.submit(body);
      await response.body?.cancel();
      return response.status;
    }));
    assert.deepEqual(statuses, bodies.map(() => 201));
    const forged = signVariantA(newPayload(template), generateEd25519Key());
    const refused = await h.submit({ ...forged, payload: bodies[0].payload });
    assert.equal(refused.status, 400, await refused.text());
    await otlp.until(
      () =>
        named(otlp, "intents.verify").length >= 9 &&
        serverSpans(otlp, "POST", "/intents").length >= 9,
      20_000,
      "the verifications and their requests",
    );
    const submits = serverSpans(otlp, "POST", "/intents");
    const verifies = named(otlp, "intents.verify");
    assert.equal(verifies.length, 9);
    for (const span of verifies) {
      const request = parentOf(span, submits);
      assert.ok(request, "a verification under its request");
      assert.ok(span.startMs >= request.startMs && span.endMs <= request.endMs);
      assert.equal(span.attributes["intents.verify.thread"], "serving");
    }
    const verified = verifies.filter((s) => s.attributes["intents.outcome"] === "verified");
    assert.equal(verified.length, 8);
    assert.ok(verified.every((s) => s.attributes["intents.variant"] === "A"));
    const [refusal] = verifies.filter((s) => s.attributes["intents.outcome"] === "refused");
    assert.equal(typeof refusal.attributes["error.type"], "string");
    assert.equal(refusal.attributes["intents.variant"], undefined);
  } finally {
    await server.stop();
    await otlp.close();
  }
}

Deno.test("telemetry: spans, metrics and log links exported over OTLP on this Deno", async () => {
  await telemetryRun(undefined);
});

Deno.test(`telemetry: the same on Deno ${DEPLOY_DENO}, as Deno Deploy runs it`, async () => {
  await telemetryRun(await denoBinary(DEPLOY_DENO));
});

Deno.test("telemetry: a verification on the serving thread, under its request", async () => {
  await servingThreadRun(undefined);
});

Deno.test(`telemetry: the same on Deno ${DEPLOY_DENO}`, async () => {
  await servingThreadRun(await denoBinary(DEPLOY_DENO));
});

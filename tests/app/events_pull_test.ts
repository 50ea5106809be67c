/**
 * `GET /events` (docs/interface.md §9) on the whole app: who may read it, every 400,
 * the pull form's pages and long-poll, on a KV file and over KV Connect. The
 * stream form and events committed by another process are
 * `tests/e2e/events_stream_test.ts`.
 */

import assert from "node:assert/strict";
import { generateEd25519Key } from "../../client/mod.ts";
import { submitIntents } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { storeTest, type TestStore } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const key = generateEd25519Key();

type Json = Record<string, unknown>;

function withService(fn: (h: Harness) => Promise<void>, store?: TestStore) {
  return withApp({ env: { EVENTS_TOKEN, METRICS_TOKEN, EVENTS_KEEPALIVE_MS: "1000" }, store }, fn);
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function submitN(h: Harness, policyId: string, n: number): Promise<string[]> {
  return submitIntents(h.clientWith(), { policyId, n, key });
}

async function pull(h: Harness, query: string, token = EVENTS_TOKEN) {
  const response = await h.fetch(`/events${query}`, { headers: bearer(token) });
  return { status: response.status, body: await response.json() };
}

Deno.test("GET /events: who may read it, and every 400", async (t) => {
  await withService(async (h) => {
    const policy = (await h.client.addPolicy('{"events":"auth"}')).id;
    await submitN(h, policy, 3);

    await t.step("401 without a token, with a wrong one, and with the metrics token", async () => {
      for (const headers of [{}, bearer("wrong-token-0123456789"), bearer(METRICS_TOKEN)]) {
        const response = await h.fetch(`/events`, { headers });
        assert.equal(response.status, 401);
        assert.equal(response.headers.get("www-authenticate"), "Bearer");
        assert.equal((await response.json()).code, "unauthorized");
      }
      const stream = await h.fetch(`/events`, {
        headers: { accept: "text/event-stream" },
      });
      assert.equal(stream.status, 401);
      await stream.body?.cancel();
    });

    await t.step("the events token reads the feed and nothing else", async () => {
      assert.equal((await pull(h, "")).status, 200);
      assert.equal((await pull(h, "", h.adminToken)).status, 200);
      for (const path of ["/intents", "/config", "/metrics"]) {
        const response = await h.fetch(`${path}`, { headers: bearer(EVENTS_TOKEN) });
        assert.equal(response.status, 401, path);
        await response.body?.cancel();
      }
    });

    await t.step("400 invalid_body for an after, limit or wait it did not hand out", async () => {
      const bad = [
        "?after=abc",
        "?after=0",
        "?after=-1",
        "?after=1.5",
        "?after=01",
        "?after=4",
        "?after=99999999999999999999",
        `?after=${"1".repeat(200)}`,
        "?after=",
        "?limit=0",
        "?limit=1001",
        "?limit=x",
        "?limit=",
        "?wait=31",
        "?wait=-1",
        "?wait=1.5",
      ];
      for (const query of bad) {
        const { status, body } = await pull(h, query);
        assert.equal(status, 400, query);
        assert.equal(body.code, "invalid_body", query);
        assert.match(body.message, /^(after|limit|wait): /, query);
      }
      for (const lastEventId of ["junk", "4", "0", "1 2"]) {
        const response = await h.fetch(`/events`, {
          headers: {
            ...bearer(EVENTS_TOKEN),
            accept: "text/event-stream",
            "last-event-id": lastEventId,
          },
        });
        assert.equal(response.status, 400, lastEventId);
        assert.match((await response.json()).message, /^Last-Event-ID: /);
      }
    });
  });
});

storeTest("GET /events pull form: pages in order, next, and the long-poll", async (store) => {
  await withService(async (h) => {
    assert.deepEqual((await pull(h, "")).body, { events: [], next: null });
    const policy = (await h.client.addPolicy('{"events":"pull"}')).id;
    const ids = await submitN(h, policy, 5);

    const first = await pull(h, "?limit=2");
    assert.deepEqual(first.body.events.map((e: Json) => e.id), ["1", "2"]);
    assert.equal(first.body.next, "2");
    for (const event of first.body.events) {
      assert.equal(event.type, "intent.accepted");
      // The record exactly as GET /intents/{id} renders it.
      const record = await (await h.fetch(`/intents/${event.record.id}`, {
        headers: bearer(h.adminToken),
      })).json();
      assert.deepEqual(event.record, record);
    }
    const rest = await pull(h, `?after=${first.body.next}&limit=100`);
    assert.deepEqual(rest.body.events.map((e: Json) => (e.record as Json).id), ids.slice(2));
    assert.equal(rest.body.next, "5");
    assert.deepEqual((await pull(h, "?after=5")).body, { events: [], next: "5" });
    // The pull form answers without an Accept, and for application/json and */*.
    for (const accept of ["application/json", "*/*", "application/json, */*;q=0.5"]) {
      const response = await h.fetch(`/events?after=4`, {
        headers: { ...bearer(EVENTS_TOKEN), accept },
      });
      assert.match(response.headers.get("content-type")!, /^application\/json/, accept);
      assert.deepEqual((await response.json()).next, "5", accept);
    }

    // Held until an event follows, then answered with it.
    const started = performance.now();
    const waiting = pull(h, "?after=5&wait=10");
    await sleep(200);
    const [late] = await submitN(h, policy, 1);
    const answered = await waiting;
    assert.ok(performance.now() - started < 2_000);
    assert.deepEqual(answered.body.events.map((e: Json) => (e.record as Json).id), [late]);
    // Nothing follows: answered empty when the wait ends.
    const idle = performance.now();
    assert.deepEqual((await pull(h, "?after=6&wait=1")).body, { events: [], next: "6" });
    assert.ok(performance.now() - idle >= 900);
  }, store);
});

/**
 * `GET /events` (CONTRACT §9) against the real server: who may read it, every
 * 400, the pull form's pages and long-poll, the stream form's history, live
 * events, resumption and idle comments, and delivery of events committed by
 * another process sharing the KV. The pages, the stream's resumption and the
 * other process's events are shown on a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, IntentsClient, signVariantB } from "../../client/mod.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { openSse, type SseItem } from "../../testing/sse.ts";
import { storeTest } from "../support/stores.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const key = generateEd25519Key();

type Json = Record<string, unknown>;

async function withServer(fn: (server: TestServer) => Promise<void>, kvPath?: string) {
  const server = await startServer({
    env: { EVENTS_TOKEN, METRICS_TOKEN, EVENTS_KEEPALIVE_MS: "1000" },
    kvPath,
  });
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function submitN(server: TestServer, policy: string, n: number): Promise<string[]> {
  const client = new IntentsClient({ url: server.url });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const record = await client.submit(
      signVariantB({ id: crypto.randomUUID(), policy_id: policy }, key),
    );
    ids.push(record.id);
  }
  return ids;
}

async function pull(server: TestServer, query: string, token = EVENTS_TOKEN) {
  const response = await fetch(`${server.url}/events${query}`, { headers: bearer(token) });
  return { status: response.status, body: await response.json() };
}

/** The next dispatched event of a stream, skipping comments. */
async function nextEvent(items: AsyncGenerator<SseItem>) {
  for (;;) {
    const { value, done } = await items.next();
    assert.ok(!done, "the stream ended");
    if (value.kind === "event") return value;
  }
}

Deno.test("GET /events: who may read it, and every 400", async (t) => {
  await withServer(async (server) => {
    const admin = new IntentsClient({ url: server.url, token: server.adminToken });
    const policy = (await admin.addPolicy('{"events":"auth"}')).id;
    await submitN(server, policy, 3);

    await t.step("401 without a token, with a wrong one, and with the metrics token", async () => {
      for (const headers of [{}, bearer("wrong-token-0123456789"), bearer(METRICS_TOKEN)]) {
        const response = await fetch(`${server.url}/events`, { headers });
        assert.equal(response.status, 401);
        assert.equal(response.headers.get("www-authenticate"), "Bearer");
        assert.equal((await response.json()).code, "unauthorized");
      }
      const stream = await fetch(`${server.url}/events`, {
        headers: { accept: "text/event-stream" },
      });
      assert.equal(stream.status, 401);
      await stream.body?.cancel();
    });

    await t.step("the events token reads the feed and nothing else", async () => {
      assert.equal((await pull(server, "")).status, 200);
      assert.equal((await pull(server, "", server.adminToken)).status, 200);
      for (const path of ["/intents", "/config", "/metrics"]) {
        const response = await fetch(`${server.url}${path}`, { headers: bearer(EVENTS_TOKEN) });
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
        const { status, body } = await pull(server, query);
        assert.equal(status, 400, query);
        assert.equal(body.code, "invalid_body", query);
        assert.match(body.message, /^(after|limit|wait): /, query);
      }
      for (const lastEventId of ["junk", "4", "0", "1 2"]) {
        const response = await fetch(`${server.url}/events`, {
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
  await withServer(async (server) => {
    assert.deepEqual((await pull(server, "")).body, { events: [], next: null });
    const admin = new IntentsClient({ url: server.url, token: server.adminToken });
    const policy = (await admin.addPolicy('{"events":"pull"}')).id;
    const ids = await submitN(server, policy, 5);

    const first = await pull(server, "?limit=2");
    assert.deepEqual(first.body.events.map((e: Json) => e.id), ["1", "2"]);
    assert.equal(first.body.next, "2");
    for (const event of first.body.events) {
      assert.equal(event.type, "intent.accepted");
      // The record exactly as GET /intents/{id} renders it.
      const record = await (await fetch(`${server.url}/intents/${event.record.id}`, {
        headers: bearer(server.adminToken),
      })).json();
      assert.deepEqual(event.record, record);
    }
    const rest = await pull(server, `?after=${first.body.next}&limit=100`);
    assert.deepEqual(rest.body.events.map((e: Json) => (e.record as Json).id), ids.slice(2));
    assert.equal(rest.body.next, "5");
    assert.deepEqual((await pull(server, "?after=5")).body, { events: [], next: "5" });
    // The pull form answers without an Accept, and for application/json and */*.
    for (const accept of ["application/json", "*/*", "application/json, */*;q=0.5"]) {
      const response = await fetch(`${server.url}/events?after=4`, {
        headers: { ...bearer(EVENTS_TOKEN), accept },
      });
      assert.match(response.headers.get("content-type")!, /^application\/json/, accept);
      assert.deepEqual((await response.json()).next, "5", accept);
    }

    // Held until an event follows, then answered with it.
    const started = performance.now();
    const waiting = pull(server, "?after=5&wait=10");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [late] = await submitN(server, policy, 1);
    const answered = await waiting;
    assert.ok(performance.now() - started < 2_000);
    assert.deepEqual(answered.body.events.map((e: Json) => (e.record as Json).id), [late]);
    // Nothing follows: answered empty when the wait ends.
    const idle = performance.now();
    assert.deepEqual((await pull(server, "?after=6&wait=1")).body, { events: [], next: "6" });
    assert.ok(performance.now() - idle >= 900);
  }, store.kvPath);
});

storeTest(
  "GET /events stream form: history, live events, Last-Event-ID, idle comments",
  async (store) => {
    await withServer(async (server) => {
      const admin = new IntentsClient({ url: server.url, token: server.adminToken });
      const policy = (await admin.addPolicy('{"events":"stream"}')).id;
      const ids = await submitN(server, policy, 3);

      const stream = await openSse(`${server.url}/events`, {
        ...bearer(EVENTS_TOKEN),
        "last-event-id": "1",
      });
      try {
        assert.equal(stream.response.status, 200);
        assert.match(stream.response.headers.get("content-type")!, /^text\/event-stream/);
        for (const [i, id] of ids.slice(1).entries()) {
          const event = await nextEvent(stream.items);
          assert.equal(event.id, String(i + 2));
          assert.equal(event.event, "intent.accepted");
          assert.equal(JSON.parse(event.data).id, id);
          assert.ok(!event.data.includes("\n"), "the record is on one line");
        }
        // Idle: a comment comes within the keep-alive interval (1 s here).
        const idleStart = performance.now();
        for (;;) {
          const { value } = await stream.items.next();
          if (value?.kind === "comment" && value.text === "keep-alive") break;
        }
        assert.ok(performance.now() - idleStart < 2_500);
        // Live: an intent accepted now arrives on the open stream within 2 s.
        const sent = performance.now();
        const [live] = await submitN(server, policy, 1);
        const event = await nextEvent(stream.items);
        assert.equal(JSON.parse(event.data).id, live);
        assert.equal(event.id, "4");
        assert.ok(performance.now() - sent < 2_000);
      } finally {
        stream.close();
      }

      // `after` starts a stream when no Last-Event-ID is sent; Last-Event-ID wins over it.
      for (const [headers, expected] of [[{}, "3"], [{ "last-event-id": "3" }, "4"]] as const) {
        const resumed = await openSse(`${server.url}/events?after=2`, {
          ...bearer(EVENTS_TOKEN),
          ...headers,
        });
        try {
          assert.equal((await nextEvent(resumed.items)).id, expected);
        } finally {
          resumed.close();
        }
      }
    }, store.kvPath);
  },
);

storeTest(
  "events accepted by another process reach a long-poll and a stream within 2 s",
  async (store) => {
    const a = await startServer({ env: { EVENTS_TOKEN }, kvPath: store.kvPath });
    const b = await startServer({ env: { EVENTS_TOKEN }, kvPath: store.kvPath });
    try {
      const admin = new IntentsClient({ url: a.url, token: a.adminToken });
      const policy = (await admin.addPolicy('{"events":"two processes"}')).id;
      await submitN(a, policy, 1);
      const stream = await openSse(`${a.url}/events?after=1`, bearer(EVENTS_TOKEN));
      try {
        for (let round = 0; round < 3; round++) {
          const after = String(round + 1);
          const waiting = pull(a, `?after=${after}&wait=10`);
          await new Promise((resolve) => setTimeout(resolve, 300));
          const sent = performance.now();
          const [id] = await submitN(b, policy, 1);
          const answered = await waiting;
          assert.ok(performance.now() - sent < 2_000, `long-poll: ${performance.now() - sent} ms`);
          assert.deepEqual(answered.body.events.map((e: Json) => (e.record as Json).id), [id]);
          const event = await nextEvent(stream.items);
          assert.ok(performance.now() - sent < 2_000, `stream: ${performance.now() - sent} ms`);
          assert.equal(JSON.parse(event.data).id, id);
        }
      } finally {
        stream.close();
      }
    } finally {
      await b.stop();
      await a.stop();
    }
  },
);

Deno.test("metrics count events sent and open streams", async () => {
  await withServer(async (server) => {
    const admin = new IntentsClient({ url: server.url, token: server.adminToken });
    const policy = (await admin.addPolicy('{"events":"metrics"}')).id;
    await submitN(server, policy, 4);
    await pull(server, "?limit=3");
    const metric = async (name: string) => {
      const text = await (await fetch(`${server.url}/metrics`, { headers: bearer(METRICS_TOKEN) }))
        .text();
      const line = text.split("\n").find((l) => l.startsWith(name));
      return line ? Number(line.split(" ").at(-1)) : undefined;
    };
    assert.equal(await metric('intents_events_sent_total{form="pull"}'), 3);
    const stream = await openSse(`${server.url}/events`, bearer(EVENTS_TOKEN));
    for (let i = 0; i < 4; i++) await nextEvent(stream.items);
    assert.equal(await metric('intents_events_sent_total{form="stream"}'), 4);
    assert.equal(await metric("intents_event_streams_open"), 1);
    stream.close();
    // The server notices the consumer is gone and releases the stream.
    for (let i = 0; i < 50 && await metric("intents_event_streams_open") !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await metric("intents_event_streams_open"), 0);
  });
});

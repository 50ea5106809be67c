/**
 * `GET /events` (docs/interface.md §9) against the real server: the stream form's
 * history, live events, resumption and idle comments, delivery of events
 * committed by another process sharing the KV, and the count of open streams
 * as consumers leave. The stream's resumption and the other process's events
 * are shown on a KV file and over KV Connect. Who may read the feed, every
 * 400 and the pull form are `tests/app/events_pull_test.ts`.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, IntentsClient } from "../../client/mod.ts";
import { submitIntents } from "../support/fixtures.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { openSse, type SseItem } from "../../testing/sse.ts";
import { storeTest } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

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

function submitN(server: TestServer, policyId: string, n: number): Promise<string[]> {
  return submitIntents(new IntentsClient({ url: server.url }), { policyId, n, key });
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
          await sleep(300);
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
      await sleep(100);
    }
    assert.equal(await metric("intents_event_streams_open"), 0);
  });
});

/**
 * The feed's guarantees under load, across processes (docs/interface.md §9): two
 * server processes on one store (a KV file, or denokv over KV Connect) take
 * concurrent submissions (some ids sent to both); a stream consumer that
 * leaves every few hundred events and resumes with Last-Event-ID against
 * either process, and a pull consumer paging with `after`, must each see
 * every 201 exactly once, in the same order; reading after any event id
 * gives exactly what follows; and every 201 of a writer killed mid-load is
 * in the feed.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, IntentsClient, signVariantB } from "../../client/mod.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { openSse } from "../../testing/sse.ts";
import { storeTest } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const SUBMISSIONS = 3_000;
const CONCURRENCY = 48;
const key = generateEd25519Key();
const auth = { authorization: `Bearer ${EVENTS_TOKEN}` };

interface Seen {
  id: string;
  intent: string;
}

/** Submits `bodies` over `servers` in turn; returns the ids each server answered 201. */
async function load(
  servers: TestServer[],
  bodies: { id: string; body: string; both: boolean }[],
  http: Deno.HttpClient,
  created = new Map<string, number>(),
): Promise<{ created: Map<string, number>; statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  let next = 0;
  const send = async (server: number, body: string, id: string) => {
    let status = 0;
    try {
      const response = await fetch(`${servers[server].url}/intents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        client: http,
      });
      status = response.status;
      await response.body?.cancel();
    } catch {
      status = 0; // the server went away (the kill test)
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 201) {
      assert.ok(!created.has(id), `${id} answered 201 twice`);
      created.set(id, server);
    }
  };
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      const { id, body, both } = bodies[i];
      if (both) await Promise.all(servers.map((_, s) => send(s, body, id)));
      else await send(i % servers.length, body, id);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { created, statuses };
}

function signedBodies(policy: string, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const id = crypto.randomUUID();
    const body = JSON.stringify(
      signVariantB({ id, policy_id: policy, attrs: { fields: { i } } }, key),
    );
    return { id, body, both: i % 20 === 7 };
  });
}

/** Reads the stream, leaving after every `every` events and resuming on the other server. */
async function streamConsumer(
  servers: TestServer[],
  target: () => number,
  every: number,
): Promise<{ seen: Seen[]; reconnects: number }> {
  const seen: Seen[] = [];
  const until = () => seen.length >= target();
  let reconnects = 0;
  while (!until()) {
    const server = servers[reconnects % servers.length];
    const headers: Record<string, string> = { ...auth };
    if (seen.length > 0) headers["last-event-id"] = seen[seen.length - 1].id;
    const stream = await openSse(`${server.url}/events`, headers);
    assert.equal(stream.response.status, 200);
    let taken = 0;
    try {
      for await (const item of stream.items) {
        if (item.kind !== "event") {
          if (until()) break;
          continue;
        }
        seen.push({ id: item.id!, intent: JSON.parse(item.data).id });
        if (++taken === every || until()) break;
      }
    } finally {
      stream.close();
    }
    reconnects++;
  }
  return { seen, reconnects };
}

/** Pages through the feed with `after`, long-polling at its end. */
async function pullConsumer(server: TestServer, target: () => number): Promise<Seen[]> {
  const seen: Seen[] = [];
  const until = () => seen.length >= target();
  let after: string | null = null;
  while (!until()) {
    const query: string = after === null ? "?limit=137&wait=1" : `?after=${after}&limit=137&wait=1`;
    const response = await fetch(`${server.url}/events${query}`, { headers: auth });
    assert.equal(response.status, 200);
    const page = await response.json();
    for (const event of page.events) seen.push({ id: event.id, intent: event.record.id });
    after = page.next;
  }
  return seen;
}

storeTest(
  "two processes, concurrent load, reconnecting consumers: one order, every 201 once",
  async (store) => {
    const env = { EVENTS_TOKEN, EVENTS_KEEPALIVE_MS: "1000" };
    const a = await startServer({ env, kvPath: store.kvPath });
    const b = await startServer({ env, kvPath: store.kvPath });
    const http = Deno.createHttpClient({});
    try {
      const admin = new IntentsClient({ url: a.url, token: a.adminToken });
      const policy = (await admin.addPolicy('{"feed":"consistency"}')).id;
      const bodies = signedBodies(policy, SUBMISSIONS);
      // The consumers read while the load runs; they stop once they have seen every 201.
      let expected = Infinity;
      const consumers = Promise.all([
        streamConsumer([a, b], () => expected, 250),
        pullConsumer(b, () => expected),
      ]);
      const loaded = await load([a, b], bodies, http);
      expected = loaded.created.size;
      assert.equal(expected, SUBMISSIONS, JSON.stringify(loaded.statuses));
      // Ids sent to both processes, the same bytes: one 201, and the other answer replays it.
      assert.equal(loaded.statuses[200], bodies.filter((x) => x.both).length);
      assert.equal(loaded.statuses[409], undefined);
      const [{ seen: stream, reconnects }, pulled] = await consumers;
      assert.ok(reconnects >= 10, `${reconnects} reconnects`);

      for (const [name, seen] of [["stream", stream], ["pull", pulled]] as const) {
        assert.equal(seen.length, expected, `${name}: ${seen.length} events`);
        assert.equal(new Set(seen.map((s) => s.id)).size, seen.length, `${name}: an id repeated`);
        assert.deepEqual(new Set(seen.map((s) => s.intent)), new Set(loaded.created.keys()), name);
      }
      assert.deepEqual(stream, pulled, "both consumers see the same sequence");

      // Reading after any event id gives exactly the events that follow it.
      for (let k = 0; k < 25; k++) {
        const at = Math.floor(Math.random() * stream.length);
        const server = k % 2 === 0 ? a : b;
        const response = await fetch(`${server.url}/events?after=${stream[at].id}&limit=40`, {
          headers: auth,
        });
        const page = await response.json();
        const got = page.events.map((e: { id: string; record: { id: string } }) => ({
          id: e.id,
          intent: e.record.id,
        }));
        assert.deepEqual(got, stream.slice(at + 1, at + 41), `after ${stream[at].id}`);
      }
    } finally {
      http.close();
      await b.stop();
      await a.stop();
    }
  },
);

storeTest("every 201 of a writer killed mid-load is in the feed", async (store) => {
  const env = { EVENTS_TOKEN };
  const reader = await startServer({ env, kvPath: store.kvPath });
  let writer = await startServer({ env, kvPath: store.kvPath });
  const http = Deno.createHttpClient({});
  try {
    const admin = new IntentsClient({ url: reader.url, token: reader.adminToken });
    const policy = (await admin.addPolicy('{"feed":"kill"}')).id;
    for (let round = 0; round < 3; round++) {
      const bodies = signedBodies(policy, 800).map((x) => ({ ...x, both: false }));
      const created = new Map<string, number>();
      const loading = load([writer], bodies, http, created);
      // Killed mid-load: once a part of the load was answered.
      while (created.size < 100 + 150 * round) {
        await sleep(5);
      }
      await writer.stop({ kill: true });
      const killed = performance.now();
      await loading;
      assert.ok(created.size > 0, "the kill came before any 201");
      assert.ok(created.size < bodies.length, "the kill came after the whole load");
      // Read the feed through the surviving process: every 201 is in it within 2 s (the killed
      // writer's events still staged are moved by the reader once they wait half a second).
      const inFeed = new Set<string>();
      let after: string | null = null;
      const missing = () => [...created.keys()].filter((id) => !inFeed.has(id));
      while (missing().length > 0 && performance.now() - killed < 2_000) {
        const query: string = after === null ? "?limit=1000" : `?after=${after}&limit=1000`;
        const page = await (await fetch(`${reader.url}/events${query}`, { headers: auth })).json();
        for (const event of page.events) inFeed.add(event.record.id);
        if (page.next !== null) after = page.next;
        if (page.events.length === 0) await sleep(50);
      }
      for (const id of created.keys()) assert.ok(inFeed.has(id), `201 for ${id}, not in the feed`);
      writer = await startServer({ env, kvPath: store.kvPath });
    }
  } finally {
    http.close();
    await writer.stop();
    await reader.stop();
  }
});

/**
 * A slow stream reader never makes the server buffer the feed: the stream is
 * pulled page by page as the client reads, so readers that stop reading hold
 * one page each, whatever the history's size; and a reader that leaves
 * releases its stream.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { KvStore } from "../../src/storage/kv_store.ts";
import { startServer, tempKvPath, type TestServer } from "../support/server.ts";
import { openSse } from "../../testing/sse.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const HISTORY = 2_000;
const PAD = 16_000;
const READERS = 20;

/** Fills a KV file with `HISTORY` intents of about 16 KB each (32 MB of history). */
async function fill(kvPath: string): Promise<void> {
  const kv = await Deno.openKv(kvPath);
  try {
    const store = new KvStore(kv);
    await store.putDocument("policy", "p", { contentType: "text/plain", bytes: new Uint8Array(1) });
    const ref = (await store.findDocument("policy", "p"))!;
    const pad = "x".repeat(PAD);
    for (let i = 0; i < HISTORY; i += 32) {
      await store.insertIntents(Array.from({ length: 32 }, (_, k) => {
        const id = crypto.randomUUID();
        const body = {
          authorship: "Unsigned",
          intent: { id, policy_id: "p", attrs: { fields: { i: i + k, pad } } },
        };
        return {
          intent: {
            id,
            variant: "B" as const,
            refId: "p",
            authorship: { kind: "Unsigned" as const, signers: [] },
            body: new TextEncoder().encode(JSON.stringify(body)),
            state: "accepted" as const,
          },
          ref,
        };
      }));
    }
  } finally {
    kv.close();
  }
}

function rssMiB(server: TestServer): number {
  const status = Deno.readTextFileSync(`/proc/${server.pid}/status`);
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

async function openStreams(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  })).text();
  return Number(/^intents_event_streams_open (\S+)$/m.exec(text)?.[1] ?? NaN);
}

Deno.test({
  name: "readers that stop reading a 32 MB history hold a page each, not the feed",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const kvPath = await tempKvPath();
    await fill(kvPath);
    const server = await startServer({ kvPath, env: { EVENTS_TOKEN } });
    try {
      // Warm the server up on one whole read, so the baseline includes what reading costs.
      const whole = await openSse(`${server.url}/events`, {
        authorization: `Bearer ${EVENTS_TOKEN}`,
      });
      let count = 0;
      for await (const item of whole.items) {
        if (item.kind === "event" && ++count === HISTORY) break;
      }
      whole.close();
      const before = rssMiB(server);
      // Readers that take the stream's first event and then stop reading.
      const stalled = [];
      for (let i = 0; i < READERS; i++) {
        const stream = await openSse(`${server.url}/events`, {
          authorization: `Bearer ${EVENTS_TOKEN}`,
        });
        const first = await stream.items.next();
        assert.equal(first.done, false);
        stalled.push(stream);
      }
      await sleep(2_000);
      const during = rssMiB(server);
      assert.equal(await openStreams(server), READERS);
      // Each holds a page or two; the rest is in the kernel's socket buffers (a few MB a
      // connection, not the process's memory) and the garbage of making it. A server that
      // buffered the feed would hold the 32 MB history for each reader.
      // The bound is loose, for a busy machine; buffering the feed would take about 20 times it.
      assert.ok(
        during - before < READERS * 5,
        `RSS grew ${(during - before).toFixed(1)} MiB for ${READERS} stalled readers`,
      );
      for (const stream of stalled) stream.close();
      for (let i = 0; i < 50 && await openStreams(server) !== 0; i++) {
        await sleep(100);
      }
      assert.equal(await openStreams(server), 0, "a reader that left still holds its stream");
    } finally {
      await server.stop();
      await Deno.remove(dirname(kvPath), { recursive: true });
    }
  },
});

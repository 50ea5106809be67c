/**
 * The verifiable log under load on three instances of one networked store
 * (docs/interface.md §14), with our witness (`tools/witness/`, a process of
 * its own) and a quorum of one: the witness is stopped and started again
 * while intents come. A consumer reads the feed and the checkpoints from the
 * three instances in turn and checks, with the client library, every event
 * it reads against the checkpoints it sees (inclusion from the tiles) and
 * every checkpoint against the largest it trusts (consistency, either way: an
 * instance may serve a smaller checkpoint for up to its cache's second); a
 * `Monitor` follows one instance. Intake never stops: every POST is answered
 * 201, witness or not.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  entryBytes,
  IntentsClient,
  IntentsError,
  Monitor,
  type Payload,
  type VerifiedCheckpoint,
} from "../../client/mod.ts";
import { generateCosignerKey } from "../../protocol/log/cosignature.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";
import { type SpawnedServer, spawnServer } from "../../testing/spawn_server.ts";
import { bodyOf, ed25519Signer, type FeedEvent, newSigned } from "../support/governed.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { needsKvConnect, newTestStore } from "../support/stores.ts";
import { sleep } from "../support/time.ts";
import { quietPort } from "../support/ports.ts";

const ORIGIN = "e2e.test/intents";
const { signerKey: LOG_SIGNING_KEY, verifierKey: LOG_KEY } = generateNoteKey(ORIGIN);
const WITNESS = generateCosignerKey("e2e.test/witness");
const EVENTS_TOKEN = "events-token-0123456789abcdef";
const POLICY = { logKey: LOG_KEY, witnesses: [WITNESS.verifierKey], quorum: 1 };

/** Our witness (`deno task witness serve`) on `port`, its state in `kvFile`. */
function spawnWitness(kvFile: string, port: number): Promise<SpawnedServer> {
  return spawnServer({
    script: "tools/witness/witness.ts",
    args: ["serve", "--kv", kvFile, "--log", LOG_KEY, "--port", String(port)],
    env: { WITNESS_KEY: WITNESS.signerKey },
    listening: /listening on (http:\/\/\S+:\d+)/,
    listeningOn: "stdout",
  });
}

/**
 * The witness on `port`, or (none given) on a port below the kernel's ephemeral
 * range, so no outgoing connection of a parallel test takes it while the witness
 * is down. A port in use is tried again for up to 10 s (the same port: the log
 * knows the witness by its URL), or another is drawn.
 */
async function startWitness(kvFile: string, port?: number): Promise<SpawnedServer> {
  const by = performance.now() + 10_000;
  for (;;) {
    const tried = port ?? quietPort();
    try {
      return await spawnWitness(kvFile, tried);
    } catch (error) {
      if (!/AddrInUse|in use/i.test(String(error)) || performance.now() > by) throw error;
      await sleep(200);
    }
  }
}

/** A checkpoint not served yet: an empty log (404), or none cosigned (503). */
function notYet(error: unknown): boolean {
  return error instanceof IntentsError && (error.status === 404 || error.status === 503);
}

/** What the consumer found. */
interface Consumer {
  /** Every event read, by id order. */
  events: FeedEvent[];
  /** How many events proved included, and the sizes of the checkpoints trusted in turn. */
  proved: number;
  sizes: number[];
  /** Checkpoints served smaller than the one trusted, each proved a prefix of it. */
  behind: number;
  /** Rounds of the monitor of the first instance. */
  monitored: number;
}

/**
 * Reads the feed and the checkpoint from `clients` in turn until `done()`,
 * `total` events are read and every one is proved included, noting what it found in `found`
 * as it goes; any inconsistency throws.
 */
async function consume(
  clients: { url: string; client: IntentsClient }[],
  monitor: Monitor,
  found: Consumer,
  until: { done: () => boolean; total: number; deadline: number },
): Promise<void> {
  let trusted: VerifiedCheckpoint | null = null;
  let after: string | null = null;
  const servedBy = new Set<string>();
  for (let round = 0;; round++) {
    const { url, client } = clients[round % clients.length];
    let served: VerifiedCheckpoint | null = null;
    try {
      served = await client.log.checkpoint({ ...POLICY, nowS: Math.floor(Date.now() / 1000) });
    } catch (error) {
      // Only before that instance served its first checkpoint (each caches what it serves for
      // up to a second): 404 (an empty log), 503 (none cosigned yet).
      if (servedBy.has(url) || !notYet(error)) throw error;
    }
    if (served !== null) servedBy.add(url);
    if (served !== null && trusted === null) {
      trusted = served;
    } else if (served !== null && trusted !== null) {
      if (served.checkpoint.size >= trusted.checkpoint.size) {
        await client.log.consistency(trusted, served);
        trusted = served;
      } else {
        await client.log.consistency(served, trusted);
        found.behind++;
      }
    }
    if (trusted !== null && found.sizes.at(-1) !== trusted.checkpoint.size) {
      found.sizes.push(trusted.checkpoint.size);
    }
    try {
      await monitor.check();
      found.monitored++;
    } catch (error) {
      if (found.monitored > 0 || !notYet(error)) throw error;
    }
    const query: string = after === null ? "limit=1000" : `after=${after}&limit=1000`;
    const response = await fetch(`${url}/events?${query}`, {
      headers: { authorization: `Bearer ${EVENTS_TOKEN}` },
    });
    assert.equal(response.status, 200);
    const page = await response.json();
    found.events.push(...page.events);
    if (typeof page.next === "string") after = page.next;
    // Each event read, once a trusted checkpoint covers it, is at its index in that tree.
    if (trusted !== null) {
      const checkpoint = trusted.checkpoint;
      const due = found.events.slice(found.proved, checkpoint.size);
      for (let i = 0; i < due.length; i += 16) {
        await Promise.all(
          due.slice(i, i + 16).map((event) => {
            const entry = entryBytes(event.type, event.record);
            return client.log.inclusion(entry, Number(event.id) - 1, checkpoint);
          }),
        );
      }
      found.proved += due.length;
    }
    const all = until.done() && found.events.length === until.total;
    if (all && found.proved === until.total && trusted?.checkpoint.size === until.total) return;
    assert.ok(
      performance.now() < until.deadline,
      `not covered in time: ${found.events.length} events read, ${found.proved} proved, ` +
        `checkpoints ${found.sizes.join(", ")}`,
    );
    await sleep(200);
  }
}

Deno.test({
  name: "the log on three instances under load, its witness stopped and restarted: all verifies",
  ...needsKvConnect(),
  fn: async () => {
    const store = await newTestStore("kv_connect");
    const dir = await Deno.makeTempDir({ prefix: "intents-log-e2e-" });
    const witnessKv = join(dir, "witness.kv");
    let witness = await startWitness(witnessKv);
    const instances: TestServer[] = [];
    try {
      const env = {
        EVENTS_TOKEN,
        LOG_SIGNING_KEY,
        LOG_ORIGIN: ORIGIN,
        LOG_WITNESSES: `${witness.url}=${WITNESS.verifierKey}`,
        LOG_WITNESS_QUORUM: "1",
        LOG_WITNESS_TIMEOUT_MS: "1000",
        LOG_WITNESSES_ALLOW_INSECURE: "true",
      };
      instances.push(
        ...await Promise.all([0, 1, 2].map(() => startServer({ kvPath: store.kvPath, env }))),
      );
      const response = await fetch(`${instances[0].url}/policies`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${instances[0].adminToken}`,
          "content-type": "text/plain",
        },
        body: "the log's end-to-end policy",
      });
      assert.equal(response.status, 201);
      const { id: policyId } = await response.json();
      const clients = instances.map((s) => ({
        url: s.url,
        client: new IntentsClient({ url: s.url, token: EVENTS_TOKEN }),
      }));
      const monitor = new Monitor({
        ...POLICY,
        log: clients[0].client.log,
        stateFile: join(dir, "monitor.json"),
      });
      let loading = true;
      const found: Consumer = { events: [], proved: 0, sizes: [], behind: 0, monitored: 0 };
      const consumer = consume(clients, monitor, found, {
        done: () => !loading,
        total: 400,
        deadline: performance.now() + 20_000,
      });
      consumer.catch(() => {});

      // 400 intents in waves of 25 every 300 ms, over the three instances; the witness is
      // stopped once it cosigned a checkpoint the consumer trusts (or after 10 s), and started
      // again, on its port and its state, 1.5 s later.
      const signer = ed25519Signer();
      const statuses: number[] = [];
      const port = witness.port;
      let trustedBeforeStop = 0;
      const witnessDown = (async () => {
        // Most often within a second; a busy machine's first trusted checkpoint may come later.
        const by = performance.now() + 10_000;
        while (found.sizes.length === 0 && performance.now() < by) await sleep(50);
        trustedBeforeStop = found.sizes.at(-1) ?? 0;
        await witness.stop();
        await sleep(1_500);
        witness = await startWitness(witnessKv, port);
      })();
      // Its failure is reported where it is awaited, after the load, not as an uncaught error.
      witnessDown.catch(() => {});
      for (let wave = 0; wave < 16; wave++) {
        const started = performance.now();
        await Promise.all(Array.from({ length: 25 }, async (_, k) => {
          const signed = newSigned("policy", policyId) as Payload;
          const answer = await fetch(`${instances[k % 3].url}/intents`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(bodyOf(signed, await signer.sign(signed))),
          });
          await answer.body?.cancel();
          statuses.push(answer.status);
        }));
        await sleep(Math.max(0, 300 - (performance.now() - started)));
      }
      await witnessDown;
      loading = false;
      assert.deepEqual(statuses.filter((s) => s !== 201), [], "intake stopped");
      assert.equal(statuses.length, 400);

      await consumer;
      assert.deepEqual(found.events.map((e) => e.id), found.events.map((_, i) => String(i + 1)));
      assert.equal(found.events.length, 400);
      assert.equal(found.proved, 400);
      // A checkpoint cosigned before the witness stopped; the intents sent while it was down,
      // covered only by what the restarted witness cosigned (a quorum of one).
      assert.ok(trustedBeforeStop > 0, "no checkpoint cosigned before the witness stopped");
      assert.ok(found.sizes.length >= 2, `checkpoints: ${found.sizes.join(", ")}`);
      assert.equal(found.sizes.at(-1), 400);
      assert.ok(found.monitored > 0);
      const kept = await monitor.trusted();
      assert.ok(kept !== null && kept.checkpoint.size <= 400);
    } finally {
      await Promise.all(instances.map((s) => s.stop()));
      await witness.stop();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * Crash: submissions stream at a server, which is killed with SIGKILL while
 * requests are in flight, then restarted on the same store, twice over.
 * Every intent answered 201 is there and intact, the server starts cleanly,
 * and nothing is half-written: every pointer leads to its record and every
 * record has its pointer. Both writer modes, on a KV file and over KV
 * Connect (where a commit cut by the kill may still reach denokv).
 */

import assert from "node:assert/strict";
import {
  type Ed25519Key,
  generateEd25519Key,
  IntentsClient,
  signVariantA,
  signVariantB,
} from "../../client/mod.ts";
import { auditIntents } from "../support/audit.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { storeTest, type TestStore } from "../support/stores.ts";

const KILLS = 3;
const WORKERS = 32;
const BODIES_PER_ROUND = 1200;
/** The kill comes once this many submissions of the round were accepted. */
const KILL_AFTER = 300;

const signers: Ed25519Key[] = Array.from({ length: 4 }, () => generateEd25519Key());

function freshBodies(templateId: string, policyId: string): { id: string; body: string }[] {
  return Array.from({ length: BODIES_PER_ROUND }, (_, i) => {
    const id = crypto.randomUUID();
    const key = signers[i % signers.length];
    const attrs = { fields: { n: i, memo: "x".repeat(i % 200) } };
    const body = i % 2 === 0
      ? signVariantB({ id, policy_id: policyId, attrs }, key)
      : signVariantA({ id, template_id: templateId, attrs }, key);
    return { id, body: JSON.stringify(body) };
  });
}

/**
 * Streams `bodies` at the server from {@link WORKERS} connections and kills
 * the server with SIGKILL after {@link KILL_AFTER} acceptances.
 *
 * @returns the accepted records' texts by id, and how many requests were in flight at the kill.
 */
async function streamAndKill(
  server: TestServer,
  bodies: { id: string; body: string }[],
): Promise<{ accepted: Map<string, string>; inFlightAtKill: number }> {
  const http = Deno.createHttpClient({});
  const accepted = new Map<string, string>();
  let next = 0;
  let inFlight = 0;
  let inFlightAtKill = -1;
  let killing: Promise<void> | undefined;
  const worker = async () => {
    while (next < bodies.length && killing === undefined) {
      const { id, body } = bodies[next++];
      inFlight++;
      try {
        const response = await fetch(`${server.url}/intents`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          client: http,
        });
        const text = await response.text();
        assert.equal(response.status, 201, text);
        accepted.set(id, text);
        if (accepted.size >= KILL_AFTER && killing === undefined) {
          inFlightAtKill = inFlight - 1;
          killing = server.stop({ kill: true });
        }
      } catch (error) {
        // A request cut by the kill has no answer; anything else is a failure.
        if (killing === undefined || error instanceof assert.AssertionError) throw error;
      } finally {
        inFlight--;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: WORKERS }, worker));
    assert.ok(killing, "the stream ended before the kill");
    await killing;
  } finally {
    http.close();
  }
  return { accepted, inFlightAtKill };
}

/** Every pointer leads to its record and every record has its pointer; returns the ids. */
async function assertNothingHalfWritten(store: TestStore): Promise<Set<string>> {
  const kv = await store.open();
  try {
    const ids = new Set<string>();
    for (const record of await auditIntents(kv)) {
      JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(record.body));
      ids.add(record.id);
    }
    return ids;
  } finally {
    kv.close();
  }
}

async function crashAndRecover(store: TestStore, batchMax: number): Promise<void> {
  const env = { COMMIT_BATCH_MAX: String(batchMax) };
  const kvPath = store.kvPath;
  let server = await startServer({ env, kvPath });
  const accepted = new Map<string, string>();
  const sent = new Set<string>();
  try {
    const admin = new IntentsClient({ url: server.url, token: server.adminToken });
    const templateId = (await admin.addTemplate(`{"crash":"template"}`)).id;
    const policyId = (await admin.addPolicy(`{"crash":"policy"}`)).id;

    for (let round = 0; round < KILLS; round++) {
      const bodies = freshBodies(templateId, policyId);
      for (const { id } of bodies) sent.add(id);
      const result = await streamAndKill(server, bodies);
      assert.ok(result.inFlightAtKill > 0, "no request was in flight at the kill");
      for (const [id, text] of result.accepted) accepted.set(id, text);

      server = await startServer({ env, kvPath });
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200, await health.text());
    }

    const stored = await assertNothingHalfWritten(store);
    for (const id of stored) assert.ok(sent.has(id), `stored ${id} was never sent`);
    for (const id of accepted.keys()) assert.ok(stored.has(id), `accepted ${id} is missing`);

    const http = Deno.createHttpClient({});
    try {
      const ids = [...accepted.keys()];
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.all(
          ids.slice(i, i + 50).map(async (id) => {
            const response = await fetch(`${server.url}/intents/${id}`, {
              headers: { authorization: `Bearer ${server.adminToken}` },
              client: http,
            });
            assert.equal(response.status, 200);
            assert.deepEqual(await response.json(), JSON.parse(accepted.get(id)!));
          }),
        );
      }
      // The restarted server knows an accepted id: its body again is the same record, replayed.
      const first = JSON.parse(accepted.get(ids[0])!);
      const again = await fetch(`${server.url}/intents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(first.request),
        client: http,
      });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(await again.json(), first);
    } finally {
      http.close();
    }
  } finally {
    await server.stop();
  }
}

for (const batchMax of [1, 32]) {
  storeTest(
    `keeps every accepted intent intact across SIGKILL (COMMIT_BATCH_MAX=${batchMax})`,
    (store) => crashAndRecover(store, batchMax),
  );
}

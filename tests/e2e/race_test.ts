/**
 * Races: 200 concurrent submissions of one id, in both variants and from
 * several signers (so the bodies differ), half of them the very bytes of
 * another racer (a client retrying while its first try is still in flight),
 * against one server and against two server processes sharing one store, in
 * both writer modes, on a KV file and over KV Connect. Exactly one answer is
 * 201; every racer that sent the winner's bytes gets 200 with the same record
 * (a replay), every other 409 `intent_exists`; the stored record is the one
 * the 201 returned.
 */

import assert from "node:assert/strict";
import {
  type Ed25519Key,
  generateEd25519Key,
  IntentsClient,
  signVariantA,
  signVariantB,
} from "../../client/mod.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { storeTest, type TestStore } from "../support/stores.ts";

const RACERS = 200;
const ROUNDS = 5;
const IDS_AT_ONCE = 2;
const SIGNERS = 5;

const signers: Ed25519Key[] = Array.from({ length: SIGNERS }, () => generateEd25519Key());

/** Distinct bodies in a race; the other racers send copies of them. */
const DISTINCT = RACERS / 2;

/**
 * 200 bodies claiming one UUID: 100 different ones (Variant A and B, five
 * signers, mixed case) and each of them once more.
 */
function racingBodies(id: string, templateId: string, policyId: string): string[] {
  const bodies: string[] = [];
  for (let i = 0; i < RACERS; i++) {
    if (i >= DISTINCT) {
      bodies.push(bodies[i - DISTINCT]);
      continue;
    }
    const key = signers[i % SIGNERS];
    const fields = { racer: i };
    // Ids differing only in case are one intent: some racers send it upper-cased.
    const claimed = i % 3 === 2 ? id.toUpperCase() : id;
    const body = i % 2 === 0
      ? signVariantA({ id: claimed, template_id: templateId, attrs: { fields } }, key)
      : signVariantB({ id: claimed, policy_id: policyId, attrs: { fields } }, key);
    bodies.push(JSON.stringify(body));
  }
  return bodies;
}

async function race(
  store: TestStore,
  options: { batchMax: number; processes: 1 | 2 },
): Promise<void> {
  const env = { COMMIT_BATCH_MAX: String(options.batchMax) };
  const servers: TestServer[] = [await startServer({ env, kvPath: store.kvPath })];
  const http = Deno.createHttpClient({});
  try {
    if (options.processes === 2) {
      // The second verifies on its serving thread, the first on a worker: both paths race.
      const inline = { ...env, VERIFY_WORKERS: "0" };
      servers.push(await startServer({ env: inline, kvPath: store.kvPath }));
    }
    const admin = new IntentsClient({ url: servers[0].url, token: servers[0].adminToken });
    const templateId = (await admin.addTemplate(`{"race":"template"}`)).id;
    const policyId = (await admin.addPolicy(`{"race":"policy"}`)).id;

    for (let round = 0; round < ROUNDS; round++) {
      // Two ids race at once, interleaved, so grouped commits mix conflicts of both.
      const ids = Array.from({ length: IDS_AT_ONCE }, () => crypto.randomUUID());
      const perId = ids.map((id) => racingBodies(id, templateId, policyId));
      const sends: { id: string; body: string }[] = [];
      for (let i = 0; i < RACERS; i++) {
        ids.forEach((id, k) => sends.push({ id, body: perId[k][i] }));
      }
      const answers = await Promise.all(sends.map(async ({ id, body }, i) => {
        const server = servers[i % servers.length];
        const response = await fetch(`${server.url}/intents`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          client: http,
        });
        return { id, body, status: response.status, text: await response.text() };
      }));

      for (const id of ids) {
        const mine = answers.filter((a) => a.id === id);
        const created = mine.filter((a) => a.status === 201);
        const tally = JSON.stringify(Object.groupBy(mine, (a) => a.status));
        assert.equal(created.length, 1, `round ${round}: ${created.length} were 201: ${tally}`);
        const winner = JSON.parse(created[0].text);
        for (const answer of mine) {
          if (answer.status === 201) continue;
          if (answer.body === created[0].body) {
            // The winner's bytes, sent by its twin: the same record, replayed.
            assert.equal(answer.status, 200, answer.text);
            assert.deepEqual(JSON.parse(answer.text), winner);
            continue;
          }
          assert.equal(answer.status, 409, answer.text);
          assert.equal(JSON.parse(answer.text).code, "intent_exists");
        }
        assert.equal(mine.filter((a) => a.status === 200).length, 1, tally);
        assert.equal(winner.id, id);
        // Every process reads back exactly the record the 201 returned.
        for (const server of servers) {
          const response = await fetch(`${server.url}/intents/${id}`, {
            headers: { authorization: `Bearer ${server.adminToken}` },
            client: http,
          });
          assert.equal(response.status, 200);
          assert.deepEqual(await response.json(), winner);
        }
      }
    }
  } finally {
    http.close();
    for (const server of servers) await server.stop();
  }
}

for (const batchMax of [1, 32]) {
  storeTest(
    `one 201 among 200 racers on one server (COMMIT_BATCH_MAX=${batchMax})`,
    (store) => race(store, { batchMax, processes: 1 }),
  );

  storeTest(
    `one 201 among 200 racers on two processes sharing a store (COMMIT_BATCH_MAX=${batchMax})`,
    (store) => race(store, { batchMax, processes: 2 }),
  );
}

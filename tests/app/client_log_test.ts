/**
 * The client library's log checks against the app's real log
 * (docs/interface.md §14, "Clients"): the served checkpoint checked against
 * the served key, each event's entry found from the tiles at its index and
 * by its proof, a later checkpoint proved to extend an earlier one, and the
 * audit of the feed.
 */

import assert from "node:assert/strict";
import {
  auditLog,
  entryBytes,
  generateEd25519Key,
  generateNoteKey,
  type IntentEvent,
  LogVerificationError,
  type VerifiedCheckpoint,
} from "../../client/mod.ts";
import { submitIntents } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";

Deno.test("the client checks the app's checkpoints, entries and feed", async () => {
  await withApp({ env: { EVENTS_TOKEN } }, async (h) => {
    const client = h.clientWith(EVENTS_TOKEN);
    const logKey = await client.log.key();
    const policy = (await h.client.addPolicy('{"log":"client"}')).id;
    const key = generateEd25519Key();
    /** The checkpoint once it covers `size` events. */
    const checkpointOf = async (size: number): Promise<VerifiedCheckpoint> => {
      for (let i = 0; i < 200; i++) {
        try {
          const verified = await client.log.checkpoint({ logKey });
          if (verified.checkpoint.size === size) return verified;
        } catch (error) {
          if (error instanceof LogVerificationError) throw error;
        }
        await sleep(50);
      }
      throw new Error(`no checkpoint of size ${size}`);
    };

    await submitIntents(client, { policyId: policy, n: 2, key });
    const older = await checkpointOf(2);
    await submitIntents(client, { policyId: policy, n: 3, key });
    const newer = await checkpointOf(5);
    await client.log.consistency(older, newer);
    await client.log.consistency(newer, newer);

    const events: IntentEvent[] = [];
    for await (const event of client.events({ follow: false })) events.push(event);
    for (const [i, event] of events.entries()) {
      const entry = entryBytes(event.type, event.record);
      await client.log.inclusion(entry, i, newer.checkpoint);
      const { verdict } = await h.clientWith().log.proveEntry(entry, { logKey });
      assert.equal(verdict.index, i);
    }
    const wrong = entryBytes("intent.accepted", events[0].record);
    await assert.rejects(client.log.inclusion(wrong, 1, newer.checkpoint), LogVerificationError);

    const audit = await auditLog(client, { logKey });
    assert.equal(audit.entries, 5);
    // Another key: the checkpoint does not verify, whatever the feed says.
    await assert.rejects(
      auditLog(client, { logKey: generateNoteKey("localhost/intents").verifierKey }),
      (error) => error instanceof LogVerificationError && error.code === "no_log_signature",
    );
  });
});

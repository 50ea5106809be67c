/**
 * Changing a stored intent (an approval, a rejection, its acceptance, its
 * expiry): one commit, checked against the intent as read, that stages the
 * change's event and points the intent at it.
 * @module
 */

import { type DecideChange, EXPIRY_WORK } from "../domain/store.ts";
import type { StoredIntent } from "../domain/intent.ts";
import { encodeStaged, type StoredEvent } from "./codec.ts";
import { encodeStagedPointer } from "./index_codec.ts";
import { contendedAttempts } from "./retry.ts";
import {
  countedDocument,
  DocumentCounts,
  documentIdentity,
  storedIntentCountedKeys,
} from "./document_counts.ts";
import { keys } from "./keys.ts";
import { getIntentEntry } from "./read_intents.ts";
import type { StagedContext } from "./staged_insert.ts";

/**
 * Reads the intent, asks `decide` for its next record, and commits it with
 * its event staged, checked against the version read; when another change
 * came first, reads and asks again. The commit that ends a pending intent
 * removes its due expiry and counts its submission's keys down.
 *
 * @returns the new record; null when there is no such intent or `decide` left it.
 * @throws {StorageUnavailableError} when the storage cannot write, or other
 *   changes of the same intent or counts keep coming first past the retries.
 */
export async function changeStaged(
  ctx: StagedContext,
  id: string,
  decide: DecideChange,
): Promise<StoredIntent | null> {
  const attempts = contendedAttempts(ctx.contended);
  for (;;) {
    await attempts.next();
    const entry = await getIntentEntry(ctx.kv, id);
    if (!entry) return null;
    const change = decide(entry.intent);
    if (!change) return null;
    const ending = entry.intent.state === "pending" && change.intent.state !== "pending";
    const counted = ending ? storedIntentCountedKeys(entry.intent) : [];
    const commit = async () => {
      const key = keys.intent(id);
      const event: StoredEvent = { type: change.type, intent: change.intent };
      const op = ctx.kv.atomic().check({ key, versionstamp: entry.version });
      if (ending) {
        const at = Date.parse(entry.intent.approval!.expiresAt);
        op.delete(keys.due(EXPIRY_WORK, at, id));
      }
      if (counted.length > 0) {
        const counts = await DocumentCounts.read(ctx.kv, countedDocument(entry.intent));
        counts.add(counted, -1);
        counts.write(op);
      }
      op.set(key, encodeStagedPointer(0));
      op.set(keys.staged(ctx.kv.commitVersionstamp()), encodeStaged([event], ctx.now().getTime()));
      const result = await ctx.commit(() => op.commit());
      if (result.ok) ctx.staged(result.versionstamp, [event]);
      else ctx.failed?.();
      return result.ok;
    };
    const done = counted.length > 0
      ? await ctx.lanes.run(documentIdentity(countedDocument(entry.intent)), commit)
      : await commit();
    if (done) return change.intent;
  }
}

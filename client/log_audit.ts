/**
 * The audit of the verifiable log against the feed (docs/interface.md §14):
 * every entry recomputed from the records `GET /events` serves, the tree
 * recomputed from them, and its root compared with the signed checkpoint's.
 * @module
 */

import { entryBytes } from "@intents/protocol/log/entry";
import type { CheckpointPolicy } from "@intents/protocol/log/checkpoint_verify";
import { leafHash, treeHash, verifyConsistency } from "@intents/protocol/log/hash";
import type { IntentEvent } from "@intents/protocol/types";
import type { EventsOptions } from "./client.ts";
import { LogVerificationError } from "./errors.ts";
import type { LogApi, VerifiedCheckpoint } from "./log.ts";

/** What {@link auditLog} reads: an `IntentsClient` holding an admin or events token. */
export interface AuditSource {
  /** The log's calls. */
  log: LogApi;
  /** The feed. */
  events(options: EventsOptions): AsyncIterable<IntentEvent>;
}

/** What {@link auditLog} checked. */
export interface LogAudit extends VerifiedCheckpoint {
  /** How many events were read from the feed and recomputed (the checkpoint's size). */
  entries: number;
}

/**
 * Checks the served checkpoint against the policy, then reads the feed from
 * its start (an admin or events token needed) and checks that its first
 * `size` events, ids 1 to `size` in order, make the checkpoint's root.
 *
 * @throws {LogVerificationError} when the checkpoint does not verify, or
 *   `audit_mismatch` when the feed lacks events or they make another root.
 * @throws {IntentsError} when the service cannot be read.
 */
export async function auditLog(
  client: AuditSource,
  policy: CheckpointPolicy,
  signal?: AbortSignal,
): Promise<LogAudit> {
  const verified = await client.log.checkpoint(policy, signal);
  const { size, rootHash } = verified.checkpoint;
  const leaves: Uint8Array[] = [];
  if (size > 0) {
    for await (const event of client.events({ follow: false, limit: 1000, signal })) {
      if (event.id !== String(leaves.length + 1)) {
        throw new LogVerificationError(
          "audit_mismatch",
          `the feed's event ${leaves.length + 1} is missing: event ${event.id} came instead`,
        );
      }
      leaves.push(leafHash(entryBytes(event.type, event.record)));
      if (leaves.length === size) break;
    }
  }
  if (leaves.length < size) {
    throw new LogVerificationError(
      "audit_mismatch",
      `the feed holds ${leaves.length} events, the checkpoint ${size}`,
    );
  }
  const root = treeHash(leaves);
  // One tree of one size: equal roots, as a consistency check of equal sizes asks.
  if (
    !verifyConsistency({
      oldSize: size,
      oldRoot: root,
      newSize: size,
      newRoot: rootHash,
      proof: [],
    })
  ) {
    throw new LogVerificationError(
      "audit_mismatch",
      `the feed's ${size} events make another root than the checkpoint's`,
    );
  }
  return { ...verified, entries: size };
}

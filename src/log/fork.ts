/**
 * The fork record (docs/interface.md §14, "Checkpoints"): once a tree state
 * fails to extend a checkpoint, or a witness answers with a size above the
 * tree or another root for one of its sizes, the log signs no checkpoint
 * any more, on any process. The record is kept in the store
 * (`["log", "fork"]`), written once (the first reason stays), read by every
 * signer before it signs and checked by its commit. Only an operator removes
 * it, after finding out what happened (docs/log.md).
 * @module
 */

import { retryWhileLocked } from "../storage/retry.ts";
import { decodeText, encodeText, logKeys } from "./keys.ts";

/**
 * Records a fork, unless one is recorded already.
 *
 * @returns the reason recorded: `reason`, or the one found.
 */
export async function recordFork(kv: Deno.Kv, reason: string): Promise<string> {
  for (;;) {
    const entry = await kv.get<Uint8Array>(logKeys.fork);
    const held = decodeText(entry.value);
    if (held !== null) return held;
    const result = await retryWhileLocked(() =>
      kv.atomic().check(entry).set(logKeys.fork, encodeText(reason)).commit()
    );
    if (result.ok) return reason;
  }
}

/** The operator's line, at error level, that the log signs no checkpoint any more. */
export function forkLine(reason: string): string {
  return `intents: the log signs no checkpoint any more, a fork: ${reason} ` +
    "(intents are still accepted; see docs/log.md, Forks)";
}

/**
 * Signing checkpoints (docs/interface.md §14): only for a tree state that is
 * stored, only after checking that it extends the last checkpoint stored and
 * the largest tree this process has seen (a consistency proof from the
 * stored tiles, verified against both roots), and stored with a commit
 * checked against the checkpoint as read. So the log never signs two roots
 * for one size, nor a tree that does not extend an earlier one, across
 * instances, restarts and crashes. Size 0 is never signed. A fork, found
 * here or by the witness submitter, is recorded in the store (`fork.ts`):
 * from then on no process signs.
 * @module
 */

import { formatCheckpoint, parseCheckpoint } from "@intents/protocol/log/checkpoint";
import {
  consistencyProofNodes,
  equalBytes,
  proveConsistency,
  verifyConsistency,
} from "@intents/protocol/log/hash";
import { parseSignedNote, signNote } from "@intents/protocol/log/note";
import { retryWhileLocked } from "../storage/retry.ts";
import { decodeText, encodeText, logKeys } from "./keys.ts";
import { forkLine, recordFork } from "./fork.ts";
import type { LogSigner } from "./identity.ts";
import type { LogMetrics } from "./metrics.ts";
import { storedTreeReader } from "./tiles.ts";

/** A signed tree: its size and root. */
export interface SignedTree {
  size: number;
  rootHash: Uint8Array;
}

/** What {@link CheckpointSigner.sign} did. */
export type SignOutcome =
  /** It signed and stored a checkpoint of the state. */
  | "signed"
  /** The stored checkpoint already signs this state (or a larger one). */
  | "current"
  /** Another process stored a checkpoint meanwhile: look again. */
  | "lost"
  /** The state does not extend a checkpoint, or a fork is recorded: nothing signed (reported). */
  | "refused";

/** The stored checkpoint: its note's text, and what it signs. */
export interface StoredCheckpoint extends SignedTree {
  text: string;
}

/**
 * The checkpoint a stored value holds; null when there is none.
 *
 * @throws {SyntaxError} when the value is not a signed checkpoint.
 */
export function decodeCheckpoint(value: unknown): StoredCheckpoint | null {
  const text = decodeText(value);
  if (text === null) return null;
  const { size, rootHash } = parseCheckpoint(parseSignedNote(text).text);
  return { text, size, rootHash };
}

/** Whether two trees are the same: equal sizes and roots. */
export function sameTree(a: SignedTree, b: SignedTree): boolean {
  return a.size === b.size && equalBytes(a.rootHash, b.rootHash);
}

/** Signs the log's checkpoints for one process. */
export class CheckpointSigner {
  readonly #kv: Deno.Kv;
  readonly #signer: LogSigner;
  readonly #report: (line: string) => void;
  readonly #metrics: LogMetrics | undefined;
  /** The largest tree this process has seen signed or has signed. */
  #largest: SignedTree | null = null;
  /** True once a state failed to extend a checkpoint: nothing more is signed. */
  #forked = false;

  /**
   * @param options.report where a fork is said (an operator's line, at error level).
   * @param options.metrics where a signed checkpoint and a fork are counted.
   */
  constructor(
    options: {
      kv: Deno.Kv;
      signer: LogSigner;
      report: (line: string) => void;
      metrics?: LogMetrics;
    },
  ) {
    this.#kv = options.kv;
    this.#signer = options.signer;
    this.#report = options.report;
    this.#metrics = options.metrics;
  }

  /** True once this process found a fork, or read its record: it signs nothing more. */
  get forked(): boolean {
    return this.#forked;
  }

  /**
   * Signs a checkpoint of `state`, a tree state read from the store, unless
   * the stored checkpoint already covers it.
   */
  async sign(state: SignedTree): Promise<SignOutcome> {
    if (this.#forked) return "refused";
    if (state.size === 0) return "current";
    const [entry, fork] = await this.#kv.getMany<[Uint8Array, Uint8Array]>([
      logKeys.checkpoint,
      logKeys.fork,
    ]);
    const recorded = decodeText(fork.value);
    if (recorded !== null) {
      this.#stop(`a fork is recorded (${recorded})`);
      return "refused";
    }
    const held = decodeCheckpoint(entry.value);
    const largest = this.#largest;
    if (held !== null && (largest === null || held.size > largest.size)) {
      this.#metrics?.checkpointed();
    }
    if (held !== null) this.#see(held);
    if (held !== null && held.size > state.size) return "current";
    for (const earlier of [held, largest]) {
      if (earlier === null || earlier.size > state.size) continue;
      // The largest this process saw is most often the one stored: proved once.
      if (earlier === largest && held !== null && sameTree(held, largest)) continue;
      if (!(await this.#extends(earlier, state))) {
        const reason = await recordFork(
          this.#kv,
          `the tree of size ${state.size} does not extend the checkpoint of size ${earlier.size}`,
        );
        this.#stop(reason);
        return "refused";
      }
    }
    if (held !== null && held.size === state.size) return "current";
    const text = signNote(
      formatCheckpoint({ origin: this.#signer.name, size: state.size, rootHash: state.rootHash }),
      [this.#signer],
    );
    // Checked against the fork record too: a fork found meanwhile stops this signature.
    const op = this.#kv.atomic().check(entry).check(fork)
      .set(logKeys.checkpoint, encodeText(text));
    const result = await retryWhileLocked(() => op.commit());
    if (!result.ok) return "lost";
    this.#see(state);
    this.#metrics?.checkpointed();
    return "signed";
  }

  /** Signs nothing more, said once at error level and in the metrics. */
  #stop(reason: string): void {
    this.#metrics?.fork();
    if (this.#forked) return;
    this.#forked = true;
    this.#report(forkLine(reason));
  }

  #see(tree: SignedTree): void {
    if (this.#largest === null || tree.size > this.#largest.size) {
      this.#largest = { size: tree.size, rootHash: tree.rootHash };
    }
  }

  /** Whether the stored tree `state` extends `earlier`: a consistency proof from the tiles. */
  async #extends(earlier: SignedTree, state: SignedTree): Promise<boolean> {
    const nodes = consistencyProofNodes(earlier.size, state.size);
    let proof: Uint8Array[];
    try {
      const read = await storedTreeReader(this.#kv, state.size, nodes);
      proof = proveConsistency(earlier.size, state.size, read);
    } catch {
      return false;
    }
    return verifyConsistency({
      oldSize: earlier.size,
      oldRoot: earlier.rootHash,
      newSize: state.size,
      newRoot: state.rootHash,
      proof,
    });
  }
}

/**
 * Signing checkpoints (docs/interface.md §14): only for a tree state that is
 * stored, only after checking that it extends the last checkpoint stored and
 * the largest tree this process has seen (a consistency proof from the
 * stored tiles, verified against both roots), and stored with a commit
 * checked against the checkpoint as read. So the log never signs two roots
 * for one size, nor a tree that does not extend an earlier one, across
 * instances, restarts and crashes. Size 0 is never signed.
 * @module
 */

import { formatCheckpoint, parseCheckpoint } from "@intents/protocol/log/checkpoint";
import {
  consistencyProofNodes,
  proveConsistency,
  verifyConsistency,
} from "@intents/protocol/log/hash";
import { parseSignedNote, signNote } from "@intents/protocol/log/note";
import { retryWhileLocked } from "../storage/retry.ts";
import { decodeText, encodeText, logKeys } from "./keys.ts";
import type { LogSigner } from "./identity.ts";
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
  /** The state does not extend a checkpoint: nothing signed (a fork; reported). */
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

/** Signs the log's checkpoints for one process. */
export class CheckpointSigner {
  readonly #kv: Deno.Kv;
  readonly #signer: LogSigner;
  readonly #report: (line: string) => void;
  /** The largest tree this process has seen signed or has signed. */
  #largest: SignedTree | null = null;
  /** True once a state failed to extend a checkpoint: nothing more is signed. */
  #forked = false;

  /**
   * @param options.report where a fork is said (an operator's line).
   */
  constructor(options: { kv: Deno.Kv; signer: LogSigner; report: (line: string) => void }) {
    this.#kv = options.kv;
    this.#signer = options.signer;
    this.#report = options.report;
  }

  /** True once this process found a tree state that does not extend a checkpoint. */
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
    const entry = await this.#kv.get<Uint8Array>(logKeys.checkpoint);
    const held = decodeCheckpoint(entry.value);
    const largest = this.#largest;
    if (held !== null) this.#see(held);
    if (held !== null && held.size > state.size) return "current";
    for (const earlier of [held, largest]) {
      if (earlier === null || earlier.size > state.size) continue;
      if (!(await this.#extends(earlier, state))) {
        this.#forked = true;
        this.#report(
          `intents: the log's tree of size ${state.size} does not extend the checkpoint of size ` +
            `${earlier.size}; no checkpoint is signed any more (a fork)`,
        );
        return "refused";
      }
    }
    if (held !== null && held.size === state.size) return "current";
    const text = signNote(
      formatCheckpoint({ origin: this.#signer.name, size: state.size, rootHash: state.rootHash }),
      [this.#signer],
    );
    const op = this.#kv.atomic().check(entry).set(logKeys.checkpoint, encodeText(text));
    const result = await retryWhileLocked(() => op.commit());
    if (!result.ok) return "lost";
    this.#see(state);
    return "signed";
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

/**
 * What the HTTP edge needs of the verifiable log (docs/interface.md §14):
 * the port that `src/log/` implements on Deno KV, as `store.ts` is the
 * storage's. Everything it hands out is public or token-protected data; the
 * signer key never passes through it.
 * @module
 */

import type { Tile } from "@intents/protocol/log/tile";

/** The checkpoint to serve, or why there is none. */
export type ServedCheckpoint =
  /** The signed note's text, and the tree size it signs. */
  | { state: "ready"; text: string; size: number }
  /** The feed has no event yet: nothing is signed. */
  | { state: "empty" }
  /** The feed has events the log has not yet covered with a first checkpoint. */
  | { state: "catching_up" }
  /** A checkpoint is signed, and none yet has the cosignatures of `LOG_WITNESS_QUORUM` witnesses. */
  | { state: "witnessing" };

/** The log as the edge reads it. */
export interface LogReader {
  /** The log's verifier key, `<name>+<key id>+<base64(0x01 ‖ public key)>`. */
  verifierKey(): Promise<string>;
  /**
   * The checkpoint to serve (cached per process for up to a second): the
   * newest, with the cosignatures held for it; with a quorum, the newest
   * that at least that many witnesses cosigned.
   */
  checkpoint(): Promise<ServedCheckpoint>;
  /**
   * A hash tile's hashes or an entry bundle's entries at `tile.width`: null
   * when the tree does not hold that many yet.
   */
  tile(tile: Tile): Promise<Uint8Array<ArrayBuffer> | null>;
  /**
   * The `c2sp.org/tlog-proof@v1` proof of the entry at `index` against the
   * served checkpoint; null when that checkpoint does not cover it.
   */
  proveIndex(index: number): Promise<string | null>;
  /** As {@link LogReader.proveIndex}, the entry found by its leaf hash; null when none has it. */
  proveLeaf(leafHash: Uint8Array): Promise<string | null>;
}

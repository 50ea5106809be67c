/**
 * The verifiable log from the reader's side (docs/interface.md §14,
 * "Clients"), reached as `client.log` of an `IntentsClient`: fetch a
 * checkpoint and check it against the log's key and a witness policy, check
 * an entry's inclusion (from a `c2sp.org/tlog-proof@v1` proof or from
 * tiles), and check that a newer checkpoint extends an older one with a
 * consistency proof computed from the tiles. The checks themselves are
 * `@intents/protocol/log`'s; this module fetches what they read and turns a
 * failed check into a {@link LogVerificationError}.
 *
 * @example
 * ```ts
 * import { entryBytes, IntentsClient } from "./mod.ts";
 *
 * async function check(record: { id: string; state: string }, logKey: string): Promise<number> {
 *   const client = new IntentsClient({ url: "http://localhost:8000" });
 *   const entry = entryBytes(record.state === "pending" ? "intent.pending" : "intent.accepted", record);
 *   const { verdict } = await client.log.proveEntry(entry, { logKey }, { waitMs: 5000 });
 *   return verdict.index; // throws LogVerificationError when the proof does not verify
 * }
 * ```
 * @module
 */

import { base64urlnopad } from "@scure/base";
import type { Checkpoint } from "@intents/protocol/log/checkpoint";
import {
  type CheckpointPolicy,
  type Cosigned,
  verifyCheckpoint,
} from "@intents/protocol/log/checkpoint_verify";
import {
  consistencyProofNodes,
  type HashReader,
  inclusionProofNodes,
  leafHash,
  proveConsistency,
  proveInclusion,
  type TreeNode,
  verifyConsistency,
  verifyInclusion,
} from "@intents/protocol/log/hash";
import { type TlogProofClaim, verifyTlogProof } from "@intents/protocol/log/proof";
import { type Tile, tileHashReader, tileOfNode, tilePath } from "@intents/protocol/log/tile";
import { IntentsError, LogVerificationError } from "./errors.ts";
import { pause } from "./pause.ts";

/** A checkpoint that verified: its parts, its signed note as served, the cosignatures that counted. */
export interface VerifiedCheckpoint {
  /** Origin, size and root hash. */
  checkpoint: Checkpoint;
  /** The signed note, verbatim. */
  note: string;
  /** The witnesses' cosignatures that counted. */
  cosigned: Cosigned[];
}

/** A proof that verified, with its text. */
export interface VerifiedProof {
  /** The `c2sp.org/tlog-proof@v1` text, to keep beside the entry. */
  proof: string;
  /** The entry's index, the checkpoint and the cosignatures that counted. */
  verdict: { index: number; checkpoint: Checkpoint; cosigned: Cosigned[] };
}

/** How the log calls reach the service: a GET of `path` with the client's token. */
export type LogCall = (path: string, signal?: AbortSignal) => Promise<Response>;

/**
 * Checks a signed checkpoint against a policy (see `verifyCheckpoint`).
 *
 * @throws {LogVerificationError} with the check's error code when it does not verify.
 * @throws {SyntaxError} when a key of the policy is malformed.
 */
export function checkCheckpoint(note: string, policy: CheckpointPolicy): VerifiedCheckpoint {
  const verdict = verifyCheckpoint(note, policy);
  if (!verdict.ok) throw new LogVerificationError(verdict.error, verdict.message);
  return { checkpoint: verdict.checkpoint, note, cosigned: verdict.cosigned };
}

/**
 * Checks a proof and its entry against a policy (see `verifyTlogProof`).
 *
 * @returns the entry's index, the checkpoint and the cosignatures that counted.
 * @throws {LogVerificationError} with the check's error code when it does not verify.
 * @throws {SyntaxError} when a key of the policy is malformed.
 */
export function checkTlogProof(claim: TlogProofClaim): VerifiedProof["verdict"] {
  const verdict = verifyTlogProof(claim);
  if (!verdict.ok) throw new LogVerificationError(verdict.error, verdict.message);
  return { index: verdict.index, checkpoint: verdict.checkpoint, cosigned: verdict.cosigned };
}

/**
 * How a served checkpoint stands to one already trusted, before any proof:
 * `same` (same size and root), `grown` (larger: a consistency proof must
 * show it extends the trusted one).
 *
 * @throws {LogVerificationError} `split_view` for the same size with another
 *   root or another origin, `tree_shrank` for a smaller tree.
 */
export function compareCheckpoints(
  trusted: VerifiedCheckpoint,
  served: VerifiedCheckpoint,
): "same" | "grown" {
  const [a, b] = [trusted.checkpoint, served.checkpoint];
  const evidence = { trusted: trusted.note, served: served.note };
  if (a.origin !== b.origin) {
    throw new LogVerificationError("split_view", `origin "${b.origin}", not "${a.origin}"`);
  }
  if (b.size < a.size) {
    throw new LogVerificationError(
      "tree_shrank",
      `the served tree has ${b.size} entries, fewer than the ${a.size} already trusted`,
      evidence,
    );
  }
  if (b.size > a.size) return "grown";
  if (verifyConsistency({ ...sizes(a, b), proof: [] })) return "same";
  throw new LogVerificationError(
    "split_view",
    `two roots signed for size ${a.size}: the log shows different trees`,
    evidence,
  );
}

function sizes(a: Checkpoint, b: Checkpoint) {
  return { oldSize: a.size, oldRoot: a.rootHash, newSize: b.size, newRoot: b.rootHash };
}

/** The log's calls (docs/interface.md §14); a refusal is an {@link IntentsError}. */
export class LogApi {
  readonly #call: LogCall;

  /**
   * The calls, over one function that sends a GET.
   *
   * @param call sends one GET (see `IntentsClient.log`).
   */
  constructor(call: LogCall) {
    this.#call = call;
  }

  async #text(path: string, signal?: AbortSignal): Promise<string> {
    return await (await this.#call(path, signal)).text();
  }

  /** `GET /log/key`: the log's verifier key as the service states it (check it elsewhere). */
  key(): Promise<string> {
    return this.#text("/log/key");
  }

  /** `GET /log/checkpoint`: the signed checkpoint as served, unchecked. */
  checkpointNote(signal?: AbortSignal): Promise<string> {
    return this.#text("/log/checkpoint", signal);
  }

  /**
   * The served checkpoint, checked against the policy (the log's key, the
   * witnesses and their quorum).
   *
   * @throws {LogVerificationError} when it does not verify.
   * @throws {IntentsError} when it cannot be read (404 for an empty log, 503 while catching up).
   */
  async checkpoint(policy: CheckpointPolicy, signal?: AbortSignal): Promise<VerifiedCheckpoint> {
    return checkCheckpoint(await this.checkpointNote(signal), policy);
  }

  /** `GET /log/tile/…`: a hash tile or an entry bundle (a token needed). */
  async tile(tile: Tile, signal?: AbortSignal): Promise<Uint8Array> {
    const response = await this.#call(`/log/${tilePath(tile)}`, signal);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * A reader of the subtree hashes `nodes` of the tree of `size` entries,
   * from the tiles that hold them, fetched once each.
   *
   * @throws {IntentsError} when a tile cannot be read.
   */
  async hashReader(size: number, nodes: TreeNode[], signal?: AbortSignal): Promise<HashReader> {
    const tiles = new Map<string, Tile>();
    for (const node of nodes) {
      const tile = tileOfNode(node, size);
      tiles.set(tilePath(tile), tile);
    }
    const fetched = new Map<string, Uint8Array>();
    await Promise.all(
      [...tiles].map(async ([path, tile]) => fetched.set(path, await this.tile(tile, signal))),
    );
    return tileHashReader(size, (tile) => fetched.get(tilePath(tile))!);
  }

  /**
   * Checks that `newer` extends `older` (RFC 6962 §2.1.2) with a consistency
   * proof computed from the tiles of `newer`'s tree; equal sizes need equal
   * roots.
   *
   * @throws {LogVerificationError} `split_view` when it does not, `tree_shrank`
   *   when `newer` is smaller, `bad_tile` when a tile is malformed.
   * @throws {IntentsError} when a tile cannot be read.
   */
  async consistency(
    older: VerifiedCheckpoint,
    newer: VerifiedCheckpoint,
    signal?: AbortSignal,
  ): Promise<void> {
    if (compareCheckpoints(older, newer) === "same") return;
    const [a, b] = [older.checkpoint, newer.checkpoint];
    const read = await this.hashReader(b.size, consistencyProofNodes(a.size, b.size), signal);
    const proof = fromTiles(() => proveConsistency(a.size, b.size, read));
    if (!verifyConsistency({ ...sizes(a, b), proof })) {
      throw new LogVerificationError(
        "split_view",
        `the tree of ${b.size} entries does not extend the trusted tree of ${a.size}`,
        { trusted: older.note, served: newer.note },
      );
    }
  }

  /**
   * Checks that `entry` is at `index` in the checkpoint's tree, with an
   * inclusion proof computed from its tiles.
   *
   * @throws {LogVerificationError} `not_included`, `index_out_of_range` or `bad_tile`.
   * @throws {IntentsError} when a tile cannot be read.
   */
  async inclusion(
    entry: Uint8Array,
    index: number,
    checkpoint: Checkpoint,
    signal?: AbortSignal,
  ): Promise<void> {
    const { size, rootHash } = checkpoint;
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw new LogVerificationError(
        "index_out_of_range",
        `index ${index} is not in a tree of size ${size}`,
      );
    }
    const read = await this.hashReader(size, inclusionProofNodes(index, size), signal);
    const proof = fromTiles(() => proveInclusion(index, size, read));
    if (!verifyInclusion({ index, size, leafHash: leafHash(entry), proof, rootHash })) {
      throw new LogVerificationError(
        "not_included",
        `the entry is not at index ${index} in the tree of size ${size}`,
      );
    }
  }

  /**
   * `GET /log/proof`: the proof of an entry by its leaf hash (public) or of
   * the event with an id (a token needed), unchecked. With `waitMs`, a 404
   * (not yet covered by the checkpoint) is asked again every 500 ms until
   * then.
   *
   * @throws {IntentsError} `not_found` when there is no such entry (yet).
   */
  async proof(
    of: { leaf: Uint8Array } | { id: string },
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<string> {
    const query = "leaf" in of
      ? `leaf=${base64urlnopad.encode(of.leaf)}`
      : `id=${encodeURIComponent(of.id)}`;
    const until = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      try {
        return await this.#text(`/log/proof?${query}`, options.signal);
      } catch (error) {
        const again = error instanceof IntentsError && error.status === 404 &&
          Date.now() < until && !options.signal?.aborted;
        if (!again) throw error;
      }
      await pause(500, options.signal);
    }
  }

  /**
   * The proof of `entry` fetched by its leaf hash, and checked with the entry
   * against the policy.
   *
   * @throws {LogVerificationError} when the proof does not verify.
   * @throws {IntentsError} `not_found` when the entry is not covered (within `waitMs`).
   */
  async proveEntry(
    entry: Uint8Array,
    policy: CheckpointPolicy,
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<VerifiedProof> {
    const proof = await this.proof({ leaf: leafHash(entry) }, options);
    return { proof, verdict: checkTlogProof({ ...policy, proof, entry }) };
  }
}

/** Runs a computation over fetched tiles; a tile of the wrong length is `bad_tile`. */
function fromTiles<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) {
      throw new LogVerificationError("bad_tile", `a tile is not what the tree holds: ${error}`);
    }
    throw error;
  }
}

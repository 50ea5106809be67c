/**
 * Offline proofs as C2SP tlog-proof defines them (`c2sp.org/tlog-proof@v1`):
 * the header line, an optional `extra` line (never written here), `index
 * <n>`, the inclusion proof one base64 hash a line (leaf side first), an
 * empty line, then the signed checkpoint verbatim. With the entry and a
 * trust policy, {@link verifyTlogProof} checks one without the log.
 * @module
 */

import { base64 } from "@scure/base";
import { parseDecimal } from "./_bytes.ts";
import {
  type CheckpointError,
  type CheckpointPolicy,
  type Cosigned,
  verifyCheckpoint,
} from "./checkpoint_verify.ts";
import type { Checkpoint } from "./checkpoint.ts";
import { HASH_SIZE, leafHash, verifyInclusion } from "./hash.ts";

/** The first line of every proof. */
export const TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1";

/** More hashes than a tree of 2^53 − 1 leaves needs. */
const MAX_PROOF_HASHES = 64;

/** A proof's parts. */
export interface TlogProof {
  /** The entry's index in the log, from 0. */
  index: number;
  /** The inclusion proof, leaf side first. */
  proof: Uint8Array[];
  /** The signed checkpoint the proof is for, verbatim (a signed note). */
  checkpoint: string;
  /** The opaque, unauthenticated extra data of a proof that carries some (never written here). */
  extra?: Uint8Array;
}

/**
 * The text of a proof; no `extra` line is written.
 *
 * @throws {RangeError} when the index is not a whole number from 0 to 2^53 − 1.
 * @throws {TypeError} when a hash is not 32 bytes or the checkpoint is not a signed note's text.
 *
 * @example
 * ```ts
 * const checkpoint = "example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— example.com/log AAAAAAA=\n";
 * formatTlogProof({ index: 0, proof: [], checkpoint });
 * // "c2sp.org/tlog-proof@v1\nindex 0\n\nexample.com/log\n1\n…"
 * ```
 */
export function formatTlogProof(proof: TlogProof): string {
  if (!Number.isSafeInteger(proof.index) || proof.index < 0) {
    throw new RangeError(`an entry index is a whole number from 0 to 2^53 − 1, not ${proof.index}`);
  }
  if (proof.proof.length > MAX_PROOF_HASHES || !proof.proof.every((h) => h.length === HASH_SIZE)) {
    throw new TypeError("an inclusion proof is at most 64 hashes of 32 bytes");
  }
  if (
    typeof proof.checkpoint !== "string" || !proof.checkpoint.includes("\n\n") ||
    !proof.checkpoint.endsWith("\n")
  ) {
    throw new TypeError("a proof's checkpoint is a signed note's text");
  }
  const hashes = proof.proof.map((hash) => `${base64.encode(hash)}\n`).join("");
  return `${TLOG_PROOF_HEADER}\nindex ${proof.index}\n${hashes}\n${proof.checkpoint}`;
}

/**
 * The parts of a proof's text. The checkpoint is returned as it stands (its
 * signatures are checked by {@link verifyTlogProof}, or by `openNote`).
 *
 * @throws {SyntaxError} when the text is not a `c2sp.org/tlog-proof@v1` proof.
 *
 * @example
 * ```ts
 * parseTlogProof("c2sp.org/tlog-proof@v1\nindex 3\n\nexample.com/log\n…").index; // 3
 * ```
 */
export function parseTlogProof(text: string | Uint8Array): TlogProof {
  const fail = (why: string) => new SyntaxError(`Cannot parse a tlog proof: ${why}`);
  let body: string;
  if (typeof text === "string") {
    body = text;
  } else {
    try {
      body = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(text);
    } catch {
      throw fail("it is not UTF-8");
    }
  }
  let at = 0;
  const line = (): string => {
    const end = body.indexOf("\n", at);
    if (end < 0) throw fail("it ends before the checkpoint");
    const read = body.slice(at, end);
    at = end + 1;
    return read;
  };
  if (line() !== TLOG_PROOF_HEADER) throw fail(`the first line is not ${TLOG_PROOF_HEADER}`);
  let next = line();
  let extra: Uint8Array | undefined;
  if (next.startsWith("extra ")) {
    try {
      extra = base64.decode(next.slice("extra ".length));
    } catch {
      throw fail("the extra data is not padded base64");
    }
    next = line();
  }
  const index = next.startsWith("index ") ? parseDecimal(next.slice("index ".length)) : null;
  if (index === null) throw fail("no index line with a decimal index without leading zeros");
  const proof: Uint8Array[] = [];
  for (let hashLine = line(); hashLine !== ""; hashLine = line()) {
    let hash: Uint8Array;
    try {
      hash = base64.decode(hashLine);
    } catch {
      throw fail("a proof line is not padded base64");
    }
    if (hash.length !== HASH_SIZE) throw fail("a proof hash is not 32 bytes");
    if (proof.length === MAX_PROOF_HASHES) throw fail(`more than ${MAX_PROOF_HASHES} proof hashes`);
    proof.push(hash);
  }
  const checkpoint = body.slice(at);
  if (checkpoint === "") throw fail("there is no checkpoint");
  return extra === undefined ? { index, proof, checkpoint } : { index, proof, checkpoint, extra };
}

/** Why a proof was not accepted: its form, its checkpoint's, or its inclusion. */
export type TlogProofError =
  | "malformed_proof"
  | CheckpointError
  | "index_out_of_range"
  | "not_included";

/** The verdict of {@link verifyTlogProof}. */
export type TlogProofVerdict =
  | { ok: true; index: number; checkpoint: Checkpoint; cosigned: Cosigned[] }
  | { ok: false; error: TlogProofError; message: string };

/** What {@link verifyTlogProof} checks: a proof, its entry, and the trust policy. */
export interface TlogProofClaim extends CheckpointPolicy {
  /** The proof's text. */
  proof: string | Uint8Array;
  /** The entry's bytes (see `entryBytes`); its leaf hash is what the proof is about. */
  entry: Uint8Array;
}

/**
 * Checks a proof: its form, its checkpoint against the policy (see
 * `verifyCheckpoint`), then that the entry's leaf hash is at its index in
 * the checkpoint's tree.
 *
 * @returns the index, the checkpoint and the cosignatures that counted, or why not.
 * @throws {SyntaxError} when a key of the policy is malformed.
 * @throws {RangeError} when the policy's quorum is out of range.
 */
export function verifyTlogProof(claim: TlogProofClaim): TlogProofVerdict {
  let parsed: TlogProof;
  try {
    parsed = parseTlogProof(claim.proof);
  } catch (error) {
    if (error instanceof SyntaxError) {
      return { ok: false, error: "malformed_proof", message: error.message };
    }
    throw error;
  }
  const verdict = verifyCheckpoint(parsed.checkpoint, claim);
  if (!verdict.ok) return verdict;
  const { checkpoint } = verdict;
  if (parsed.index >= checkpoint.size) {
    return {
      ok: false,
      error: "index_out_of_range",
      message: `index ${parsed.index} is not in a tree of size ${checkpoint.size}`,
    };
  }
  const included = verifyInclusion({
    index: parsed.index,
    size: checkpoint.size,
    leafHash: leafHash(claim.entry),
    proof: parsed.proof,
    rootHash: checkpoint.rootHash,
  });
  if (!included) {
    return {
      ok: false,
      error: "not_included",
      message:
        `the inclusion proof does not lead from the entry to the root of size ${checkpoint.size}`,
    };
  }
  return { ok: true, index: parsed.index, checkpoint, cosigned: verdict.cosigned };
}

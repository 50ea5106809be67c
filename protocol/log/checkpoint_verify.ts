/**
 * A signed checkpoint checked against a trust policy: the log's verifier key
 * and, optionally, witnesses' cosigner keys of which at least `quorum` must
 * have cosigned (docs/interface.md §14, "Clients"). The note is opened as
 * Go's `note.Open` opens it: signatures by keys the policy does not name are
 * ignored, and a named key's signature that fails rejects the whole note.
 * @module
 */

import { type Checkpoint, parseCheckpoint } from "./checkpoint.ts";
import { cosignatureTimestamp, parseCosignerKey } from "./cosignature.ts";
import { keyIdHex, type NoteVerifier, openNote, parseVerifierKey } from "./note.ts";

/** How far in the future a cosignature's timestamp may be and still count, in seconds. */
export const MAX_COSIGNATURE_FUTURE_S = 60;

/** What a checkpoint is checked against. */
export interface CheckpointPolicy {
  /** The log's verifier key (`<name>+<key id>+<base64(0x01 ‖ key)>`). */
  logKey: string;
  /** The origin the checkpoint must carry; by default the log key's name. */
  origin?: string;
  /** The witnesses' cosigner keys (type 0x04). */
  witnesses?: readonly string[];
  /** How many of the witnesses must have cosigned (default 0). */
  quorum?: number;
  /** Now, in POSIX seconds: when given, a cosignature more than 60 s after it does not count. */
  nowS?: number;
}

/** A cosignature that counted. */
export interface Cosigned {
  /** The witness's name. */
  name: string;
  /** The witness's key id (a uint32). */
  keyId: number;
  /** When the witness cosigned, in POSIX seconds. */
  timestamp: number;
}

/** Why a checkpoint was not accepted. */
export type CheckpointError =
  | "malformed_note"
  | "malformed_checkpoint"
  | "log_signature_invalid"
  | "no_log_signature"
  | "origin_mismatch"
  | "cosignature_invalid"
  | "quorum_not_met";

/** The verdict of {@link verifyCheckpoint}. */
export type CheckpointVerdict =
  | { ok: true; checkpoint: Checkpoint; text: string; cosigned: Cosigned[] }
  | { ok: false; error: CheckpointError; message: string };

/**
 * Checks a signed checkpoint against a policy: well-formed, signed by the
 * log's key, of the expected origin, every cosignature by a named witness
 * valid, and at least `quorum` witnesses counted.
 *
 * @returns the checkpoint and the cosignatures that counted, or why not.
 * @throws {SyntaxError} when a key of the policy is malformed.
 * @throws {RangeError} when `quorum` is not a whole number from 0 to the number of witnesses.
 * @throws {TypeError} when two keys of the policy share a name and key id.
 *
 * @example
 * ```ts
 * import { generateNoteKey, parseSignerKey, signNote } from "./note.ts";
 *
 * const { signerKey, verifierKey } = generateNoteKey("example.com/log");
 * const text = "example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
 * const note = signNote(text, [parseSignerKey(signerKey)]);
 * verifyCheckpoint(note, { logKey: verifierKey }).ok; // true
 * ```
 */
export function verifyCheckpoint(
  signedNote: string | Uint8Array,
  policy: CheckpointPolicy,
): CheckpointVerdict {
  const log: NoteVerifier = parseVerifierKey(policy.logKey);
  const witnesses = (policy.witnesses ?? []).map(parseCosignerKey);
  const quorum = policy.quorum ?? 0;
  if (!Number.isInteger(quorum) || quorum < 0 || quorum > witnesses.length) {
    throw new RangeError(`a quorum is 0 to ${witnesses.length} witnesses, not ${quorum}`);
  }
  const origin = policy.origin ?? log.name;
  const fail = (error: CheckpointError, message: string): CheckpointVerdict => ({
    ok: false,
    error,
    message,
  });

  let opened;
  try {
    opened = openNote(signedNote, [log, ...witnesses]);
  } catch (error) {
    if (error instanceof SyntaxError) return fail("malformed_note", error.message);
    throw error;
  }
  const isLog = (s: { name: string; keyId: number }) =>
    s.name === log.name && s.keyId === log.keyId;
  if (!opened.ok) {
    if (opened.error === "no_known_signature") {
      return fail("no_log_signature", `no signature by ${log.name}+${keyIdHex(log.keyId)}`);
    }
    const who = `${opened.name}+${keyIdHex(opened.keyId)}`;
    return isLog(opened)
      ? fail("log_signature_invalid", `the log's signature (${who}) does not verify`)
      : fail("cosignature_invalid", `the cosignature of ${who} does not verify`);
  }
  if (!opened.verified.some(isLog)) {
    return fail("no_log_signature", `no signature by ${log.name}+${keyIdHex(log.keyId)}`);
  }
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(opened.text);
  } catch (error) {
    if (error instanceof SyntaxError) return fail("malformed_checkpoint", error.message);
    throw error;
  }
  if (checkpoint.origin !== origin) {
    return fail("origin_mismatch", `the origin is "${checkpoint.origin}", not "${origin}"`);
  }
  const cosigned: Cosigned[] = [];
  const latest = policy.nowS === undefined ? Infinity : policy.nowS + MAX_COSIGNATURE_FUTURE_S;
  for (const signature of opened.verified) {
    if (isLog(signature)) continue;
    const timestamp = cosignatureTimestamp(signature.signature);
    if (timestamp === null || timestamp > latest) continue;
    cosigned.push({ name: signature.name, keyId: signature.keyId, timestamp });
  }
  if (cosigned.length < quorum) {
    return fail("quorum_not_met", `${cosigned.length} of the ${quorum} cosignatures needed`);
  }
  return { ok: true, checkpoint, text: opened.text, cosigned };
}

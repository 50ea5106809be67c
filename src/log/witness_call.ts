/**
 * One `add-checkpoint` call of C2SP tlog-witness, its pure parts: the
 * request's body (the old size line, the consistency proof lines, an empty
 * line, the signed checkpoint) and what the answer means: a cosignature
 * checked against the witness's key (at most 60 s in the future), a 409's
 * `text/x.tlog.size` to follow, a 422 (the witness holds another root for
 * a size of ours: a fork), or a failure. The call itself goes through a
 * {@link WitnessPost} the service hands in (the webhook transport: the URL
 * and address rules, 64 KiB and 256 reads, the time limit).
 * @module
 */

import { base64 } from "@scure/base";
import { verifyCheckpoint } from "@intents/protocol/log/checkpoint_verify";
import { type NoteSignature, parseSignedNote } from "@intents/protocol/log/note";
import type { WitnessOutcome } from "./metrics.ts";

/** What a witness answered, as the transport read it. */
export interface WitnessAnswer {
  /** The answer's status, or null when none came. */
  status: number | null;
  /** Milliseconds from the start to the answer or the failure. */
  durationMs: number;
  /** The answer's body, when it all arrived within the limits. */
  body?: Uint8Array;
  /** The answer's `Content-Type`. */
  contentType?: string;
}

/**
 * Sends one `POST <prefix>/add-checkpoint` and reads the answer, within the
 * time limit; it rejects only with `signal`'s reason.
 */
export type WitnessPost = (
  request: { url: string; body: Uint8Array; signal: AbortSignal },
) => Promise<WitnessAnswer>;

/** What an answer means. */
export type Judged =
  | { outcome: "cosigned"; signature: NoteSignature; timestamp: number }
  | { outcome: "conflict"; size: number }
  | { outcome: Exclude<WitnessOutcome, "cosigned" | "conflict">; why: string };

/** The media type of a 409's answer. */
export const TLOG_SIZE_TYPE = "text/x.tlog.size";

/**
 * The body of an `add-checkpoint` request.
 *
 * @throws {RangeError} when there are more than 63 proof hashes.
 */
export function addCheckpointBody(
  oldSize: number,
  proof: readonly Uint8Array[],
  signedNote: string,
): Uint8Array<ArrayBuffer> {
  if (proof.length > 63) throw new RangeError("a consistency proof has at most 63 hashes");
  const lines = [`old ${oldSize}`, ...proof.map((hash) => base64.encode(hash)), "", ""];
  return new TextEncoder().encode(lines.join("\n") + signedNote);
}

/**
 * What a witness's answer to the checkpoint `signedNote` means.
 *
 * @param options.logKey the log's verifier key; `witnessKey` the witness's cosigner key.
 * @param options.nowS now, in POSIX seconds.
 */
export function judgeWitnessAnswer(
  answer: WitnessAnswer,
  options: { signedNote: string; logKey: string; witnessKey: string; nowS: number },
): Judged {
  const { status, body } = answer;
  if (status === null) return { outcome: "unreachable", why: "no answer" };
  if (status === 200) return judgeCosignature(body, options);
  if (status === 409) {
    const type = answer.contentType?.split(";", 1)[0].trim().toLowerCase();
    const text = body === undefined ? "" : new TextDecoder().decode(body);
    const match = /^(0|[1-9][0-9]{0,15})\n$/.exec(text);
    const size = match ? Number(match[1]) : NaN;
    if (type !== TLOG_SIZE_TYPE || !Number.isSafeInteger(size)) {
      return { outcome: "bad_answer", why: `a 409 without a ${TLOG_SIZE_TYPE} size` };
    }
    return { outcome: "conflict", size };
  }
  if (status === 422) {
    return { outcome: "fork", why: "it holds another root for a size of this log (422)" };
  }
  if (status === 403 || status === 404) {
    return {
      outcome: "configuration",
      why: `${status}: it does not know this log's origin or key (a configuration error)`,
    };
  }
  if (status >= 400 && status < 500) return { outcome: "rejected", why: `${status}` };
  return { outcome: "http_error", why: `${status}` };
}

function judgeCosignature(
  body: Uint8Array | undefined,
  options: { signedNote: string; logKey: string; witnessKey: string; nowS: number },
): Judged {
  const bad = (why: string): Judged => ({ outcome: "bad_answer", why });
  if (body === undefined) return bad("a 200 whose body did not arrive whole");
  let lines: string;
  try {
    lines = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return bad("a 200 whose body is not UTF-8");
  }
  if (!lines.startsWith("— ") || !lines.endsWith("\n")) {
    return bad("a 200 whose body is not signature lines");
  }
  // The answer's lines after the note's: one note, opened with the log's and the witness's keys.
  const combined = options.signedNote + lines;
  const verdict = verifyCheckpoint(combined, {
    logKey: options.logKey,
    witnesses: [options.witnessKey],
    quorum: 1,
    nowS: options.nowS,
  });
  if (!verdict.ok) return bad(`no valid cosignature (${verdict.error})`);
  const { name, keyId, timestamp } = verdict.cosigned[0];
  if (timestamp === 0) return bad("a cosignature without a timestamp");
  const signature = parseSignedNote(combined).signatures.find((s) =>
    s.name === name && s.keyId === keyId
  )!;
  return { outcome: "cosigned", signature, timestamp };
}

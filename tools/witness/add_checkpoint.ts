/**
 * A witness's `add-checkpoint` (C2SP tlog-witness): the request read and
 * checked in the specification's order (400 malformed, 404 unknown origin,
 * 403 no valid signature by the log's key, 400 an old size above the
 * checkpoint's, 409 `text/x.tlog.size` when the old size is not the size
 * last cosigned, 422 a root or proof that does not hold), then the new state
 * stored in ONE commit checked against the state as read (so two requests
 * never roll the size back), then the cosignature answered. The state of
 * each log is its latest cosigned size and root hash, and the checkpoint
 * with the cosignature, in the witness's own Deno KV.
 * @module
 */

import { base64 } from "@scure/base";
import { parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { ServiceError } from "../../src/errors.ts";
import { readBody } from "../../src/http/read_body.ts";
import { STATUS_OF } from "../../src/http/respond.ts";
import type { Cosigner } from "../../protocol/log/cosignature.ts";
import { HASH_SIZE, verifyConsistency } from "../../protocol/log/hash.ts";
import {
  formatSignedNote,
  type NoteVerifier,
  openNote,
  parseSignedNote,
} from "../../protocol/log/note.ts";

/** The largest request body read: a checkpoint and 63 hashes fit many times over. */
export const MAX_REQUEST_BYTES = 64 * 1024;
/** Time allowed for a request's whole body: a client cannot hold a request open forever. */
const BODY_TIMEOUT_MS = 10_000;

/** SHA-256 of the empty string: the root of the empty tree (RFC 6962 §2.1). */
const EMPTY_ROOT = base64.decode("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");

/** What the witness is: its cosigner, and the logs it takes checkpoints of, by origin. */
export interface WitnessConfig {
  cosigner: Cosigner;
  logs: ReadonlyMap<string, NoteVerifier>;
  /** Now, in POSIX seconds; default the system clock. */
  nowS?: () => number;
}

/** A log's state as stored: its latest cosigned size, root, and cosigned checkpoint. */
interface LogState {
  size: number;
  root: Uint8Array;
}

/** The key of a log's state in the witness's KV. */
export const stateKey = (origin: string) => ["witness", "log", origin] as const;

const text = (status: number, body: string, type = "text/plain; charset=utf-8") =>
  new Response(body, { status, headers: { "content-type": type } });

/**
 * Answers one `POST /add-checkpoint`.
 *
 * @param request the request (its body is read here, at most 64 KiB, within 10 s).
 */
export async function addCheckpoint(
  kv: Deno.Kv,
  config: WitnessConfig,
  request: Request,
): Promise<Response> {
  let bytes: Uint8Array;
  try {
    bytes = await readBody(request, { maxBytes: MAX_REQUEST_BYTES, timeoutMs: BODY_TIMEOUT_MS });
  } catch (error) {
    // Too large (413), too slow (408) or cut off (400), as the service answers them.
    if (!(error instanceof ServiceError)) throw error;
    return text(STATUS_OF[error.code], `${error.message}\n`);
  }
  const parsed = parseRequest(bytes);
  if (typeof parsed === "string") return text(400, `${parsed}\n`);
  const { oldSize, proof, note } = parsed;
  let checkpoint;
  try {
    checkpoint = parseCheckpoint(parseSignedNote(note).text);
  } catch {
    return text(400, "not a signed checkpoint\n");
  }
  const verifier = config.logs.get(checkpoint.origin);
  if (verifier === undefined) return text(404, "unknown log origin\n");
  if (!openNote(note, [verifier]).ok) return text(403, "no valid signature by the log's key\n");
  if (oldSize > checkpoint.size) return text(400, "the old size is above the checkpoint's\n");
  if (checkpoint.size === 0 && !equal(checkpoint.rootHash, EMPTY_ROOT)) {
    return text(422, "a checkpoint of size 0 has the empty tree's root\n");
  }
  for (;;) {
    const entry = await kv.get<Uint8Array>(stateKey(checkpoint.origin));
    const held = decodeState(entry.value);
    const heldSize = held?.size ?? 0;
    if (oldSize !== heldSize) return text(409, `${heldSize}\n`, "text/x.tlog.size");
    if (oldSize === 0) {
      if (proof.length > 0) return text(422, "a proof from size 0 is empty\n");
    } else if (
      !verifyConsistency({
        oldSize,
        oldRoot: held!.root,
        newSize: checkpoint.size,
        newRoot: checkpoint.rootHash,
        proof,
      })
    ) {
      return text(422, "the consistency proof does not verify\n");
    }
    const nowS = Math.floor(config.nowS?.() ?? Date.now() / 1000);
    const opened = parseSignedNote(note);
    const cosignature = config.cosigner.cosign(opened.text, nowS);
    const kept = formatSignedNote({
      text: opened.text,
      signatures: [...opened.signatures, cosignature],
    });
    const result = await kv.atomic().check(entry)
      .set(
        stateKey(checkpoint.origin),
        encodeState({ size: checkpoint.size, root: checkpoint.rootHash }),
      )
      .set(["witness", "checkpoint", checkpoint.origin], kept)
      .commit();
    // Another request changed the state meanwhile: judged again against the new one.
    if (!result.ok) continue;
    return text(200, formatSignedNote({ text: "x\n", signatures: [cosignature] }).slice(3));
  }
}

/** The request's parts, or why it is malformed. */
function parseRequest(
  bytes: Uint8Array,
): { oldSize: number; proof: Uint8Array[]; note: string } | string {
  let body: string;
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return "the body is not UTF-8";
  }
  const split = body.indexOf("\n\n");
  if (split < 0) return "no empty line after the old size and the proof";
  const [first, ...hashes] = body.slice(0, split).split("\n");
  const old = /^old (0|[1-9][0-9]{0,15})$/.exec(first);
  if (old === null || !Number.isSafeInteger(Number(old[1]))) return "no valid old size line";
  if (hashes.length > 63) return "more than 63 proof lines";
  const proof: Uint8Array[] = [];
  for (const line of hashes) {
    let hash: Uint8Array;
    try {
      hash = base64.decode(line);
    } catch {
      return "a proof line is not base64";
    }
    if (hash.length !== HASH_SIZE) return "a proof line is not a 32-byte hash";
    proof.push(hash);
  }
  return { oldSize: Number(old[1]), proof, note: body.slice(split + 2) };
}

function encodeState(state: LogState): Uint8Array {
  const bytes = new Uint8Array(8 + HASH_SIZE);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(state.size));
  bytes.set(state.root, 8);
  return bytes;
}

function decodeState(value: unknown): LogState | null {
  if (value === null) return null;
  if (!(value instanceof Uint8Array) || value.length !== 8 + HASH_SIZE) {
    throw new TypeError("a log's state has an unknown layout");
  }
  const size = Number(new DataView(value.buffer, value.byteOffset, 8).getBigUint64(0));
  return { size, root: value.slice(8) };
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Reads a request body as a stream with a size cap and a deadline, so a
 * client can neither make the server buffer more than `maxBytes` nor hold a
 * request open by trickling its body forever.
 * @module
 */

import { ServiceError, tooLarge } from "../errors.ts";
import { HttpError } from "./respond.ts";
import type { DeadlineSweeper, ExpireCause } from "./deadlines.ts";

/** Default time allowed for the whole body to arrive. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** Largest body accepted, in bytes; more is a 413. */
  maxBytes: number;
  /** Time allowed for the whole body, from the call; past it, a 408. Default 10 000. */
  timeoutMs?: number;
  /** The server's shared deadlines instead of a timer per call; one cut at shutdown is a 503. */
  deadlines?: DeadlineSweeper;
  /** Aborted when the server stops, which ends bodies still streaming in: then a 503, not a 400. */
  stopping?: AbortSignal;
}

/**
 * Reads the request body, at most `maxBytes`: a `Content-Length` above it is
 * refused before anything is read, a body of a declared length within it is
 * read in one go, a chunked one is cut off as soon as it passes the limit.
 *
 * @returns the exact body bytes, in a buffer of their own (none: empty).
 * @throws {ServiceError} 413 `payload_too_large`; 408 `request_timeout` past
 *   `timeoutMs`; 503 `unavailable` when the server stops while the body
 *   arrives; 400 `invalid_body` for a malformed Content-Length or a stream
 *   that fails otherwise (the client went away). Each but the 400s asks for
 *   `Connection: close`.
 *
 * @example
 * ```ts
 * const request = new Request("http://localhost/intents", { method: "POST", body: '{"a":1}' });
 * const bytes = await readBody(request, { maxBytes: 32_768, timeoutMs: 10_000 });
 * bytes.length; // 7
 * ```
 */
export async function readBody(
  request: Request,
  options: ReadBodyOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { maxBytes } = options;

  // Content-Length only lets us refuse early; the count below is what
  // enforces the limit, whatever the header claims.
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!/^[0-9]{1,15}$/.test(declared.trim())) {
      request.body?.cancel().catch(() => {});
      throw new ServiceError("invalid_body", "Content-Length: must be a whole number");
    }
    if (Number(declared.trim()) > maxBytes) {
      request.body?.cancel().catch(() => {});
      throw closing(tooLarge(maxBytes));
    }
  }
  if (request.body === null) return new Uint8Array(0);
  // A declared length the HTTP server holds the body to: no chunked framing beside it.
  const whole = declared !== null && request.headers.get("transfer-encoding") === null;
  const bytes = whole ? await readWhole(request, options) : await readChunks(request.body, options);
  if (bytes.byteLength > maxBytes) throw closing(tooLarge(maxBytes));
  return bytes;
}

/** Arms the body's deadline: shared when the server keeps deadlines, else a timer of its own. */
function armDeadline(options: ReadBodyOptions): {
  expired: Promise<ExpireCause>;
  disarm: () => void;
} {
  const { deadlines, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  let disarm = () => {};
  const expired = new Promise<ExpireCause>((resolve) => {
    if (deadlines) {
      const shared = deadlines.add(timeoutMs, resolve);
      disarm = () => deadlines.remove(shared);
    } else {
      const timer = setTimeout(() => resolve("timeout"), timeoutMs);
      disarm = () => clearTimeout(timer);
    }
  });
  return { expired, disarm };
}

/** The error for a deadline that expired, or for a read that failed. */
function cutOff(cause: ExpireCause | "failed", options: ReadBodyOptions): ServiceError {
  if (cause === "shutdown" || (cause === "failed" && options.stopping?.aborted)) {
    // Not the client's fault, so retryable.
    return closing(
      new ServiceError("unavailable", "the server is shutting down; send the request again"),
    );
  }
  if (cause === "failed") {
    return new ServiceError("invalid_body", "request body could not be read");
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return closing(
    new ServiceError("request_timeout", `request body was not received within ${timeoutMs} ms`),
  );
}

/**
 * A body whose length is declared and within the limit, read in one go (the
 * runtime reads a socket's body natively); the caller still counts it, for
 * requests built in-process. One cut off is left to the connection's close.
 */
async function readWhole(
  request: Request,
  options: ReadBodyOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { expired, disarm } = armDeadline(options);
  const read = request.bytes();
  try {
    const result = await Promise.race([read, expired]);
    if (typeof result === "string") {
      read.catch(() => {});
      throw cutOff(result, options);
    }
    return result;
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw cutOff("failed", options);
  } finally {
    disarm();
  }
}

/**
 * A body of unknown length (chunked), read chunk by chunk: at most `maxBytes`
 * plus one chunk is ever held, and on every refusal the stream is cancelled.
 */
async function readChunks(
  body: ReadableStream<Uint8Array>,
  options: ReadBodyOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { maxBytes } = options;
  const reader = body.getReader();
  const { expired, disarm } = armDeadline(options);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let result: ReadableStreamReadResult<unknown> | ExpireCause;
      try {
        result = await Promise.race([reader.read(), expired]);
      } catch {
        throw cutOff("failed", options);
      }
      if (typeof result === "string") throw cutOff(result, options);
      if (result.done) break;
      const chunk = result.value;
      if (!(chunk instanceof Uint8Array)) {
        throw new TypeError("request body stream yielded a chunk that is not bytes");
      }
      total += chunk.byteLength;
      if (total > maxBytes) throw closing(tooLarge(maxBytes));
      chunks.push(chunk);
    }
  } catch (error) {
    // Stop receiving. Not awaited: a stalled source may never finish cancelling.
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    disarm();
  }
  return concat(chunks, total);
}

/** A refusal with `Connection: close`: the rest of the body is not read, so no reuse. */
function closing({ code, message }: ServiceError): HttpError {
  return new HttpError(code, message, { connection: "close" });
}

/** Joins the chunks into one buffer of their own. */
function concat(chunks: Uint8Array[], total: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

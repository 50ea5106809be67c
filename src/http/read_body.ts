/**
 * Reads a request body as a stream with a size cap and a deadline, so a
 * client can neither make the server buffer more than `maxBytes` nor hold a
 * request open by trickling its body forever.
 * @module
 */

import { ServiceError } from "../errors.ts";
import type { Deadline, DeadlineSweeper, ExpireCause } from "./deadlines.ts";

/** Default time allowed for the whole body to arrive. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** Largest body accepted, in bytes; more is a 413. */
  maxBytes: number;
  /** Time allowed for the whole body, from the call; past it, a 408. Default 10 000. */
  timeoutMs?: number;
  /**
   * Shared deadlines to use instead of a timer per call (the server's); the
   * 408 then comes up to one sweep interval after `timeoutMs`, and a read the
   * server cuts at shutdown ({@link DeadlineSweeper.cutAll}) is a 503.
   */
  deadlines?: DeadlineSweeper;
  /**
   * Aborted when the server stops (its `AppContext.stopping`). `Deno.serve`'s
   * graceful shutdown ends every body still streaming in; such a read is
   * then a 503, not the client's 400.
   */
  stopping?: AbortSignal;
}

/**
 * Reads the request body as a stream, at most `maxBytes`.
 *
 * A `Content-Length` above the limit is refused before anything is read; a
 * body without one (chunked) is cut off as soon as it passes the limit, so
 * at most `maxBytes` plus one chunk is ever held. On every refusal the
 * stream is cancelled, so the rest of the body is never buffered.
 *
 * @param request the incoming request; its body is consumed.
 * @param options the size cap and the time limit.
 * @returns the exact body bytes, in a buffer of their own (an absent body is
 *   an empty array).
 * @throws {ServiceError} 413 `payload_too_large` as soon as Content-Length
 *   or the bytes read exceed `maxBytes`; 408 `request_timeout` when the body
 *   has not fully arrived within `timeoutMs`; 503 `unavailable` when the
 *   server stops while the body arrives; 400 `invalid_body` for a malformed
 *   Content-Length or a stream that fails otherwise (the client went away).
 *
 * @example
 * ```ts
 * const bytes = await readBody(request, { maxBytes: 32_768, timeoutMs: 10_000 });
 * ```
 */
export async function readBody(
  request: Request,
  options: ReadBodyOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { maxBytes, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const body = request.body;

  // Content-Length only lets us refuse early; the streamed count below is
  // what enforces the limit, whatever the header claims.
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!/^[0-9]{1,15}$/.test(declared.trim())) {
      body?.cancel().catch(() => {});
      throw new ServiceError(400, "invalid_body", "Content-Length: must be a whole number");
    }
    if (Number(declared.trim()) > maxBytes) {
      body?.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
  }
  if (body === null) return new Uint8Array(0);

  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let shared: Deadline | undefined;
  const { deadlines } = options;
  const deadline = new Promise<ExpireCause>((resolve) => {
    if (deadlines) shared = deadlines.add(timeoutMs, resolve);
    else timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let result: ReadableStreamReadResult<unknown> | ExpireCause;
      try {
        result = await Promise.race([reader.read(), deadline]);
      } catch {
        if (options.stopping?.aborted) throw stopped();
        throw new ServiceError(400, "invalid_body", "request body could not be read");
      }
      if (result === "shutdown") throw stopped();
      if (result === "timeout") {
        throw new ServiceError(
          408,
          "request_timeout",
          `request body was not received within ${timeoutMs} ms`,
          { connection: "close" },
        );
      }
      if (result.done) break;
      const chunk = result.value;
      if (!(chunk instanceof Uint8Array)) {
        throw new TypeError("request body stream yielded a chunk that is not bytes");
      }
      total += chunk.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  } catch (error) {
    // Stop receiving. Not awaited: a stalled source may never finish cancelling.
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    if (shared) deadlines!.remove(shared);
    else clearTimeout(timer);
  }
  return concat(chunks, total);
}

/** The server stopped while the body arrived: not the client's fault, so retryable. */
function stopped(): ServiceError {
  return new ServiceError(
    503,
    "unavailable",
    "the server is shutting down; send the request again",
    // The rest of the body is not read, so the connection cannot be reused.
    { connection: "close" },
  );
}

function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError(
    413,
    "payload_too_large",
    `request body is larger than ${maxBytes} bytes`,
    // The rest of the body is not read, so the connection cannot be reused.
    { connection: "close" },
  );
}

/**
 * Joins the chunks into one buffer that holds exactly the body. A lone chunk
 * is copied too when it is a view into a larger read buffer: stored as is,
 * Deno KV would serialize that whole buffer.
 */
function concat(chunks: Uint8Array[], total: number): Uint8Array<ArrayBuffer> {
  if (chunks.length === 1) {
    const only = chunks[0];
    if (
      only.buffer instanceof ArrayBuffer && only.byteOffset === 0 &&
      only.byteLength === only.buffer.byteLength
    ) {
      return only as Uint8Array<ArrayBuffer>;
    }
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

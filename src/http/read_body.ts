/**
 * Reads a request body with a size cap and a time limit, so that a client can
 * neither make the server buffer more than the limit nor hold a request open
 * by trickling bytes.
 * @module
 */

import { ServiceError } from "../errors.ts";

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** Largest body accepted, in bytes; more is a 413. */
  maxBytes: number;
  /** Time allowed for the whole body, from the first read; past it, a 408. */
  timeoutMs: number;
}

function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError(
    413,
    "payload_too_large",
    `request body is larger than ${maxBytes} bytes`,
    // The rest of the body is not read: the connection cannot be reused.
    { connection: "close" },
  );
}

/**
 * Reads the whole body of `request`.
 *
 * A `Content-Length` above the limit is refused before anything is read; a
 * body without one (chunked) is cut off as soon as it passes the limit, so at
 * most `maxBytes` plus one chunk is ever held.
 *
 * @returns the exact body bytes (empty when there is no body).
 * @throws {ServiceError} 413 `payload_too_large` past `maxBytes`, 408
 *   `request_timeout` when the body takes longer than `timeoutMs`, 400
 *   `invalid_body` when the stream fails (e.g. the client went away).
 *
 * @example
 * ```ts
 * const bytes = await readBody(request, { maxBytes: 32768, timeoutMs: 10_000 });
 * ```
 */
export async function readBody(
  request: Request,
  options: ReadBodyOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const { maxBytes, timeoutMs } = options;
  const declared = request.headers.get("content-length");
  let expected: number | undefined;
  if (declared !== null) {
    if (!/^[0-9]{1,15}$/.test(declared.trim())) {
      throw new ServiceError(400, "invalid_body", "Content-Length: must be a whole number");
    }
    expected = Number(declared.trim());
    if (expected > maxBytes) throw tooLarge(maxBytes);
  }
  if (request.body === null) return new Uint8Array(0);

  const reader = request.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array<ArrayBuffer>> | "timeout";
      try {
        result = await Promise.race([reader.read(), timedOut]);
      } catch {
        throw new ServiceError(400, "invalid_body", "request body could not be read");
      }
      if (result === "timeout") {
        throw new ServiceError(
          408,
          "request_timeout",
          `request body was not received within ${timeoutMs} ms`,
          { connection: "close" },
        );
      }
      if (result.done) break;
      total += result.value.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(result.value);
    }
  } catch (error) {
    // Stop receiving: whatever else the client sends is dropped, not buffered.
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) {
    const [only] = chunks;
    // A chunk may be a view into a larger read buffer; stored as is, Deno KV
    // would serialize that whole buffer (a 64 KiB buffer fails the value limit).
    return only.byteOffset === 0 && only.byteLength === only.buffer.byteLength
      ? only
      : only.slice();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

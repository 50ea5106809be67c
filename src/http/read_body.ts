/**
 * Reads a request body as a stream with a size cap and a deadline, so a
 * client can neither make the server buffer more than `maxBytes` nor hold a
 * request open by trickling its body forever.
 * @module
 */

import { ServiceError } from "../errors.ts";

/** Default time allowed for the whole body to arrive. */
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Reads the request body as a stream, at most `maxBytes`.
 *
 * @param request the incoming request; its body is consumed.
 * @param options `maxBytes`: the largest accepted body; `timeoutMs`: time
 *   allowed for the whole body to arrive (default 10 000).
 * @returns the body bytes; an absent body is an empty array.
 * @throws {ServiceError} 413 `payload_too_large` as soon as Content-Length
 *   or the bytes read exceed `maxBytes` (the stream is cancelled and read no
 *   further); 408 `request_timeout` when the body has not fully arrived
 *   within `timeoutMs` (the stream is cancelled).
 * @throws {TypeError} when the body was already used, or a chunk is not bytes.
 *
 * @example
 * ```ts
 * const bytes = await readBody(request, { maxBytes: 32_768 });
 * ```
 */
export async function readBody(
  request: Request,
  options: { maxBytes: number; timeoutMs?: number },
): Promise<Uint8Array> {
  const { maxBytes, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const body = request.body;
  if (body === null) return new Uint8Array(0);

  // Content-Length is only trusted to reject early; the streamed count below
  // is what enforces the limit, whatever the header says.
  const declared = parseContentLength(request.headers.get("content-length"));
  if (declared !== null && declared > maxBytes) {
    body.cancel().catch(() => {});
    throw tooLarge(maxBytes);
  }

  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const result = await Promise.race([reader.read(), deadline]);
      if (result === "timeout") {
        // Not awaited: a stalled source may never finish cancelling.
        reader.cancel().catch(() => {});
        throw new ServiceError(
          408,
          "request_timeout",
          `request body did not arrive within ${timeoutMs} ms`,
        );
      }
      if (result.done) break;
      const chunk: unknown = result.value;
      if (!(chunk instanceof Uint8Array)) {
        reader.cancel().catch(() => {});
        throw new TypeError("request body stream yielded a chunk that is not bytes");
      }
      total += chunk.byteLength;
      if (total > maxBytes) {
        reader.cancel().catch(() => {});
        throw tooLarge(maxBytes);
      }
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(timer);
  }
  return concat(chunks, total);
}

function tooLarge(maxBytes: number): ServiceError {
  return new ServiceError(
    413,
    "payload_too_large",
    `request body is larger than ${maxBytes} bytes`,
  );
}

/** The header's value when it is a plain decimal length, else null. */
function parseContentLength(value: string | null): number | null {
  if (value === null || !/^[0-9]+$/.test(value.trim())) return null;
  return Number(value.trim());
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * The little of HTTP/1.1 (RFC 9112) a webhook delivery reads back: where a
 * response's head ends, its status code and header fields, and when its
 * body is complete enough to stop draining.
 * @module
 */

/** A response's status and header fields (names in lower case, values trimmed, in order). */
export interface ResponseHead {
  status: number;
  /** The minor version of the status line's `HTTP/1.x`. */
  minor: number;
  headers: Map<string, string[]>;
}

/**
 * The index just past the empty line that ends a head at the start of
 * `buffer`, or -1 when it has not all arrived. Bare LF line ends are
 * accepted, as RFC 9112 §2.2 allows a recipient to.
 */
export function headEnd(buffer: Uint8Array): number {
  for (let i = 0; i < buffer.length; i++) {
    if (buffer[i] !== 0x0a) continue;
    if (buffer[i + 1] === 0x0a) return i + 2;
    if (buffer[i + 1] === 0x0d && buffer[i + 2] === 0x0a) return i + 3;
  }
  return -1;
}

/**
 * Parses a response head (status line and header fields).
 *
 * @throws {SyntaxError} when the status line is not `HTTP/1.x NNN ...` or a
 *   field line has no name.
 */
export function parseHead(bytes: Uint8Array): ResponseHead {
  // Latin-1: every byte is one character, so nothing in a malformed head can throw here.
  const lines = new TextDecoder("latin1").decode(bytes).split(/\r?\n/);
  const statusLine = /^HTTP\/1\.([0-9]) ([1-9][0-9]{2})(?: .*)?$/.exec(lines[0]);
  if (!statusLine) throw new SyntaxError("Cannot parse response: no HTTP/1.x status line");
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0 || /[\s]/.test(line.slice(0, colon))) {
      throw new SyntaxError("Cannot parse response: a header field without a name");
    }
    const name = line.slice(0, colon).toLowerCase();
    const values = headers.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    headers.set(name, values);
  }
  return { status: Number(statusLine[2]), minor: Number(statusLine[1]), headers };
}

/**
 * Whether `body` (the bytes after the head so far) holds the whole body the
 * head announces: none for 1xx, 204 and 304; `Content-Length` bytes; the
 * last chunk of a chunked body. Without either, the body runs to the end of
 * the connection, and this says false.
 */
export function bodyComplete(head: ResponseHead, body: Uint8Array): boolean {
  if (head.status < 200 || head.status === 204 || head.status === 304) return true;
  if (head.headers.has("transfer-encoding")) return endsChunked(body);
  const length = head.headers.get("content-length")?.[0];
  if (length !== undefined && /^[0-9]+$/.test(length)) return body.length >= Number(length);
  return false;
}

/**
 * Whether the connection may carry another request after this answer (RFC
 * 9112 §9.3): HTTP/1.1, not `Connection: close`, and a final answer that is
 * not a 101.
 */
export function persists(head: ResponseHead): boolean {
  if (head.minor < 1 || head.status < 200) return false;
  const connection = head.headers.get("connection") ?? [];
  return !connection.some((value) => /(?:^|,)\s*close\s*(?:,|$)/i.test(value));
}

const LAST_CHUNK = [0x30, 0x0d, 0x0a, 0x0d, 0x0a]; // "0\r\n\r\n"

/** Whether a chunked body ends with its last chunk and no trailers (the usual case). */
function endsChunked(body: Uint8Array): boolean {
  if (body.length < LAST_CHUNK.length) return false;
  const tail = body.subarray(body.length - LAST_CHUNK.length);
  if (!LAST_CHUNK.every((byte, i) => tail[i] === byte)) return false;
  // "0\r\n\r\n" at the very start, or after the CRLF that ends the previous chunk's data.
  const before = body.length - LAST_CHUNK.length;
  return before === 0 || (body[before - 2] === 0x0d && body[before - 1] === 0x0a);
}

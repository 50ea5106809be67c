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
 * Where the body the head announces ends in `body` (the bytes after the head
 * so far): the index just past it; -1 while it has not all arrived; -2 when
 * it runs to the end of the connection (neither `Content-Length` nor
 * chunked) or its chunked framing is malformed. No body for 1xx, 204 and
 * 304; `Content-Length` bytes (one value); the chunks, their extensions and
 * the trailer section of a chunked body (RFC 9112 §7.1).
 */
export function bodyEnd(head: ResponseHead, body: Uint8Array): number {
  if (head.status < 200 || head.status === 204 || head.status === 304) return 0;
  if (head.headers.has("transfer-encoding")) return chunkedEnd(body);
  const length = head.headers.get("content-length");
  if (length?.length !== 1 || !/^[0-9]{1,15}$/.test(length[0])) return -2;
  const n = Number(length[0]);
  return body.length >= n ? n : -1;
}

/**
 * Whether reading can stop: the whole body has arrived, or no end can be
 * known from what arrived (a body to the end of the connection is not
 * complete).
 */
export function bodyComplete(head: ResponseHead, body: Uint8Array): boolean {
  const end = bodyEnd(head, body);
  if (end === -2) return head.headers.has("transfer-encoding");
  return end >= 0;
}

/**
 * Persistence as RFC 9112 §9.3 has it: HTTP/1.1, not `Connection: close`,
 * and a final answer that is not a 101.
 */
export function persists(head: ResponseHead): boolean {
  if (head.minor < 1 || head.status < 200) return false;
  const connection = head.headers.get("connection") ?? [];
  return !connection.some((value) => /(?:^|,)\s*close\s*(?:,|$)/i.test(value));
}

const CR = 0x0d;
const LF = 0x0a;
/** A chunk-size line longer than this is malformed (a size of 16 hex digits with room for extensions). */
const MAX_CHUNK_LINE = 4096;

/** The index of the CRLF at or after `from`, or -1. */
function crlfAt(body: Uint8Array, from: number): number {
  for (let i = from; i + 1 < body.length; i++) {
    if (body[i] === CR && body[i + 1] === LF) return i;
  }
  return -1;
}

/** Where a chunked body ends (see {@link bodyEnd}). */
function chunkedEnd(body: Uint8Array): number {
  let i = 0;
  for (;;) {
    const lineEnd = crlfAt(body, i);
    if (lineEnd < 0) return body.length - i > MAX_CHUNK_LINE ? -2 : -1;
    const line = new TextDecoder("latin1").decode(body.subarray(i, lineEnd));
    const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line);
    if (!size) return -2;
    const n = parseInt(size[1], 16);
    i = lineEnd + 2;
    if (n === 0) {
      // The trailer section: field lines up to an empty line.
      for (;;) {
        const end = crlfAt(body, i);
        if (end < 0) return -1;
        if (end === i) return i + 2;
        i = end + 2;
      }
    }
    if (body.length < i + n + 2) return -1;
    if (body[i + n] !== CR || body[i + n + 1] !== LF) return -2;
    i += n + 2;
  }
}

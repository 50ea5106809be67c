/**
 * The little of HTTP/1.1 (RFC 9112) a client reads back: where a response's
 * head ends, its status code and header fields, and when its body is
 * complete enough to stop draining. A webhook delivery reads its answer with
 * it (`src/delivery/_answer.ts`), and so does the load tool's client.
 * @module
 */

/** A response's status and header fields (names in lower case, values trimmed, in order). */
export interface ResponseHead {
  status: number;
  /** The minor version of the status line's `HTTP/1.x`. */
  minor: number;
  headers: Map<string, string[]>;
}

const CR = 0x0d;
const LF = 0x0a;

/**
 * The search for the empty line that ends a head, carried on as the head
 * arrives: each byte is looked at once, however many reads bring it. Bare
 * LF line ends are accepted, as RFC 9112 §2.2 allows a recipient to.
 */
export class HeadEnd {
  /** The index of the next byte to look at. */
  #at: number;
  /** What the bytes before it end with: nothing of note, a LF, or a LF and a CR. */
  #after: "other" | "lf" | "lfcr" = "other";
  /** Bytes looked at so far. */
  scanned = 0;

  /** @param start where the head starts. */
  constructor(start: number) {
    this.#at = start;
  }

  /**
   * The index just past the head's end in `buffer` (the same bytes as at
   * the last call, and perhaps more), or -1 when it has not all arrived.
   */
  find(buffer: Uint8Array): number {
    let after = this.#after;
    let i = this.#at;
    let end = -1;
    for (; i < buffer.length; i++) {
      const byte = buffer[i];
      if (byte === LF) {
        if (after !== "other") {
          end = ++i;
          break;
        }
        after = "lf";
      } else {
        after = byte === CR && after === "lf" ? "lfcr" : "other";
      }
    }
    this.scanned += i - this.#at;
    this.#at = i;
    this.#after = after;
    return end;
  }
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
 * Persistence as RFC 9112 §9.3 has it: HTTP/1.1, not `Connection: close`,
 * and a final answer that is not a 101.
 */
export function persists(head: ResponseHead): boolean {
  if (head.minor < 1 || head.status < 200) return false;
  const connection = head.headers.get("connection") ?? [];
  return !connection.some((value) => /(?:^|,)\s*close\s*(?:,|$)/i.test(value));
}

/** A chunk-size line longer than this is malformed (a size of 16 hex digits with room for extensions). */
const MAX_CHUNK_LINE = 4096;
const latin1 = new TextDecoder("latin1");

/**
 * The framing of one answer's body (RFC 9112 §6.3), followed as its bytes
 * arrive: no body for 1xx, 204 and 304; `Content-Length` bytes (one value);
 * the chunks, their extensions and the trailer section of a chunked body
 * (§7.1). A body of neither kind runs to the end of the connection. Each
 * call of {@link end} goes on from where the last one stopped.
 */
export class BodyFraming {
  readonly #kind: "none" | "length" | "chunked" | "open";
  readonly #length: number = 0;
  /** Chunked: what is expected at {@link #at}. */
  #phase: "size" | "data" | "trailer" | "done" | "bad" = "size";
  /** Chunked: where the line or the chunk being read starts. */
  #at = 0;
  /** Chunked: where the search for the current line's CRLF resumes. */
  #scan = 0;
  /** Chunked: the size of the chunk whose data starts at {@link #at}. */
  #size = 0;
  /** Chunked: where each complete chunk's data starts and ends. */
  readonly #chunks: [number, number][] = [];
  /** Bytes looked at so far (for the tests of the work done). */
  scanned = 0;

  constructor(head: ResponseHead) {
    if (head.status < 200 || head.status === 204 || head.status === 304) {
      this.#kind = "none";
    } else if (head.headers.has("transfer-encoding")) {
      this.#kind = "chunked";
    } else {
      const length = head.headers.get("content-length");
      if (length?.length === 1 && /^[0-9]{1,15}$/.test(length[0])) {
        this.#kind = "length";
        this.#length = Number(length[0]);
      } else {
        this.#kind = "open";
      }
    }
  }

  /**
   * Where the body ends in `body` (the bytes after the head so far, the
   * same bytes as at the last call and perhaps more): the index just past
   * it; -1 while it has not all arrived; -2 when it runs to the end of the
   * connection or its chunked framing is malformed.
   */
  end(body: Uint8Array): number {
    switch (this.#kind) {
      case "none":
        return 0;
      case "length":
        return body.length >= this.#length ? this.#length : -1;
      case "open":
        return -2;
      case "chunked":
        return this.#chunked(body);
    }
  }

  /**
   * Whether reading can stop: the whole body has arrived, or no end can be
   * known from what arrived (malformed chunked framing; a body to the end
   * of the connection is not complete).
   */
  complete(body: Uint8Array): boolean {
    const end = this.end(body);
    return end >= 0 || (end === -2 && this.#kind === "chunked");
  }

  /**
   * The body's content (a chunked body's chunks joined) once {@link end}
   * finds its end in `body`; null before, and for a body that runs to the
   * end of the connection or whose framing is malformed.
   */
  content(body: Uint8Array): Uint8Array | null {
    const end = this.end(body);
    if (end < 0) return null;
    if (this.#kind !== "chunked") return body.subarray(0, end);
    const out = new Uint8Array(this.#chunks.reduce((n, [from, to]) => n + to - from, 0));
    let at = 0;
    for (const [from, to] of this.#chunks) {
      out.set(body.subarray(from, to), at);
      at += to - from;
    }
    return out;
  }

  #chunked(body: Uint8Array): number {
    for (;;) {
      switch (this.#phase) {
        case "done":
          return this.#at;
        case "bad":
          return -2;
        case "data": {
          const end = this.#at + this.#size;
          if (body.length < end + 2) return -1;
          if (body[end] !== CR || body[end + 1] !== LF) return this.#fail();
          this.#chunks.push([this.#at, end]);
          this.#begin("size", end + 2);
          break;
        }
        case "size": {
          const lineEnd = this.#lineEnd(body);
          if (lineEnd < 0) {
            return body.length - this.#at > MAX_CHUNK_LINE ? this.#fail() : -1;
          }
          this.scanned += lineEnd - this.#at;
          const line = latin1.decode(body.subarray(this.#at, lineEnd));
          const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line);
          if (!size) return this.#fail();
          const n = parseInt(size[1], 16);
          if (n === 0) {
            this.#begin("trailer", lineEnd + 2);
          } else {
            this.#begin("data", lineEnd + 2);
            this.#size = n;
          }
          break;
        }
        case "trailer": {
          // Field lines up to an empty line.
          const lineEnd = this.#lineEnd(body);
          if (lineEnd < 0) return -1;
          this.#begin(lineEnd === this.#at ? "done" : "trailer", lineEnd + 2);
          break;
        }
      }
    }
  }

  #begin(phase: "size" | "data" | "trailer" | "done", at: number) {
    this.#phase = phase;
    this.#at = at;
    this.#scan = at;
  }

  #fail(): number {
    this.#phase = "bad";
    return -2;
  }

  /** The index of the CRLF that ends the line at {@link #at}, or -1 (the search resumes later). */
  #lineEnd(body: Uint8Array): number {
    let i = this.#scan;
    for (; i + 1 < body.length; i++) {
      if (body[i] === CR && body[i + 1] === LF) break;
    }
    this.scanned += i - this.#scan;
    this.#scan = i;
    return i + 1 < body.length ? i : -1;
  }
}

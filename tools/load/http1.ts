/**
 * A minimal HTTP/1.1 client over one keep-alive TCP connection, for the load
 * generator: it writes prepared request bytes and reads just enough of the
 * answer (status, Content-Length or chunked framing) to send the next one.
 * `fetch` costs the generator more CPU per request than the server spends on
 * a submission; on a 2-core machine that would measure the generator.
 * @module
 */

const CRLF2 = [13, 10, 13, 10];
const decoder = new TextDecoder();
const encoder = new TextEncoder();

function indexOfHeaderEnd(buf: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 3 < to; i++) {
    if (
      buf[i] === CRLF2[0] && buf[i + 1] === CRLF2[1] && buf[i + 2] === CRLF2[2] &&
      buf[i + 3] === CRLF2[3]
    ) return i;
  }
  return -1;
}

function indexOfCrlf(buf: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 1 < to; i++) if (buf[i] === 13 && buf[i + 1] === 10) return i;
  return -1;
}

/** The bytes of a POST with a JSON body. */
export function postRequest(host: string, path: string, body: Uint8Array): Uint8Array {
  const head = encoder.encode(
    `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\n\r\n`,
  );
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** One keep-alive connection; reconnects when the server closes it. */
export class Http1Connection {
  #conn: Deno.TcpConn | null = null;
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;

  constructor(readonly hostname: string, readonly port: number) {}

  async #fill(): Promise<void> {
    if (this.#start > 0 && this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buf.length) {
      const live = this.#buf.subarray(this.#start, this.#end);
      const next = new Uint8Array(Math.max(this.#buf.length, live.length * 2));
      next.set(live);
      this.#buf = next;
      this.#end = live.length;
      this.#start = 0;
    }
    const n = await this.#conn!.read(this.#buf.subarray(this.#end));
    if (n === null) throw new Error("connection closed by the server");
    this.#end += n;
  }

  async #readLine(): Promise<string> {
    let at: number;
    while ((at = indexOfCrlf(this.#buf, this.#start, this.#end)) < 0) await this.#fill();
    const line = decoder.decode(this.#buf.subarray(this.#start, at));
    this.#start = at + 2;
    return line;
  }

  async #skip(n: number): Promise<void> {
    while (this.#end - this.#start < n) await this.#fill();
    this.#start += n;
  }

  /** Sends a prepared request and returns the answer's status once its body is read. */
  async send(request: Uint8Array): Promise<number> {
    if (!this.#conn) {
      this.#conn = await Deno.connect({ hostname: this.hostname, port: this.port });
      this.#conn.setNoDelay(true);
      this.#start = this.#end = 0;
    }
    try {
      for (let written = 0; written < request.length;) {
        written += await this.#conn.write(request.subarray(written));
      }
      let end: number;
      while ((end = indexOfHeaderEnd(this.#buf, this.#start, this.#end)) < 0) await this.#fill();
      const head = decoder.decode(this.#buf.subarray(this.#start, end)).toLowerCase();
      this.#start = end + 4;
      const status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
      if (length) {
        await this.#skip(Number(length[1]));
      } else if (/\r\ntransfer-encoding:\s*chunked/.test(head)) {
        for (;;) {
          const size = parseInt(await this.#readLine(), 16);
          if (size === 0) {
            while ((await this.#readLine()) !== "");
            break;
          }
          await this.#skip(size + 2);
        }
      }
      if (/\r\nconnection:\s*close/.test(head)) this.close();
      return status;
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Closes the connection; the next `send` opens a new one. */
  close(): void {
    try {
      this.#conn?.close();
    } catch {
      // Already closed.
    }
    this.#conn = null;
  }
}

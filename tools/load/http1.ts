/**
 * A minimal HTTP/1.1 client over one keep-alive TCP connection, for the load
 * generator: it writes prepared request bytes and reads just enough of the
 * answer (its head, and its body's framing, read by the service's own
 * `src/http1_response.ts`) to send the next one. `fetch` costs the generator
 * more CPU per request than the server spends on a submission; on a 2-core
 * machine that would measure the generator.
 * @module
 */

import { BodyFraming, HeadEnd, parseHead, persists } from "../../src/http1_response.ts";

const encoder = new TextEncoder();

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
      const search = new HeadEnd(0);
      let headEnd: number;
      while ((headEnd = search.find(this.#buf.subarray(this.#start, this.#end))) < 0) {
        await this.#fill();
      }
      const head = parseHead(this.#buf.subarray(this.#start, this.#start + headEnd));
      this.#start += headEnd;
      const framing = new BodyFraming(head);
      let bodyEnd: number;
      while ((bodyEnd = framing.end(this.#buf.subarray(this.#start, this.#end))) === -1) {
        await this.#fill();
      }
      if (bodyEnd < 0) throw new Error("an answer whose end cannot be known");
      this.#start += bodyEnd;
      if (!persists(head)) this.close();
      return head.status;
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

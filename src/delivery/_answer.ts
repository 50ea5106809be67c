/**
 * Reading a receiver's answer to a delivery (docs/interface.md §11) in work
 * linear in its bytes, within {@link MAX_ANSWER_BYTES} and
 * {@link MAX_ANSWER_READS}, into one buffer, each byte looked at once
 * (docs/decisions.md). {@link AnswerReader.work} counts that, for the tests.
 * @module
 */

import { BodyFraming, HeadEnd, parseHead, type ResponseHead } from "../http1_response.ts";

/** The most of an answer read: head and body together. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The most reads an answer may take: head and body together. */
export const MAX_ANSWER_READS = 256;

/** Reads into `buffer`: the number of bytes read, or null at the end of the stream. */
export type ReadInto = (buffer: Uint8Array) => Promise<number | null>;

/** Why an answer could not be read (the attempt fails `connection`). */
export class AnswerError extends SyntaxError {
  constructor(message: string) {
    super(`Cannot read the answer: ${message}`);
  }
}

/** One answer on one connection, read as it arrives. */
export class AnswerReader {
  readonly #read: ReadInto;
  readonly #buffer = new Uint8Array(MAX_ANSWER_BYTES);
  /** Bytes received. */
  #length = 0;
  #reads = 0;
  /** Where the head being read starts (after interim 1xx heads), then its body. */
  #start = 0;
  /** The search for the end of the head being read. */
  #headEnd = new HeadEnd(0);
  /** Bytes looked at or decoded for heads before the one being read. */
  #headWork = 0;
  #framing: BodyFraming | undefined;

  /** @param read reads the connection into a buffer (within the attempt's deadline). */
  constructor(read: ReadInto) {
    this.#read = read;
  }

  /** Bytes received so far. */
  get received(): number {
    return this.#length;
  }

  /** Reads made so far. */
  get reads(): number {
    return this.#reads;
  }

  /**
   * Bytes looked at, decoded or copied so far: at most about twice
   * {@link received}, however the answer arrived.
   */
  get work(): number {
    return this.#headWork + this.#headEnd.scanned + (this.#framing?.scanned ?? 0);
  }

  /**
   * Reads until a final head has arrived and parses it, skipping interim 1xx
   * heads (a 103 Early Hints, a stray 100 Continue), but not a 101, which is
   * final here.
   *
   * @throws {AnswerError} when the connection ends first, the head is not
   *   complete within the limits, or it is not HTTP/1.x.
   * @throws what a read throws (the deadline, a reset).
   */
  async head(): Promise<ResponseHead> {
    for (;;) {
      const end = this.#headEnd.find(this.#buffer.subarray(0, this.#length));
      if (end < 0) {
        if (!await this.#more()) throw new AnswerError("the connection ended before a head");
        continue;
      }
      let head: ResponseHead;
      try {
        head = parseHead(this.#buffer.subarray(this.#start, end));
      } catch (error) {
        throw new AnswerError((error as Error).message);
      }
      // Decoded once, as a whole.
      this.#headWork += this.#headEnd.scanned + end - this.#start;
      this.#start = end;
      this.#headEnd = new HeadEnd(end);
      if (head.status >= 200 || head.status === 101) {
        this.#framing = new BodyFraming(head);
        return head;
      }
    }
  }

  /**
   * Reads the body of the head just read, within the limits, until `late`
   * settles; nothing here changes the outcome, whose status is known.
   *
   * @returns true when exactly the announced body arrived and nothing after it.
   */
  async body(late: Promise<unknown>): Promise<boolean> {
    const framing = this.#framing;
    if (framing === undefined) throw new Error("body() before head()");
    const body = () => this.#buffer.subarray(this.#start, this.#length);
    const stop = late.then(() => "late" as const);
    try {
      while (!framing.complete(body())) {
        const more = this.#more();
        const got = await Promise.race([more, stop]);
        if (got === "late") {
          more.catch(() => {});
          return false;
        }
        if (!got) return false;
      }
    } catch {
      return false;
    }
    return framing.end(body()) === this.#length - this.#start;
  }

  /**
   * The body's content after {@link body} returned true (a copy); null when
   * it has not all arrived.
   */
  content(): Uint8Array | null {
    const content = this.#framing?.content(this.#buffer.subarray(this.#start, this.#length));
    return content ? content.slice() : null;
  }

  /**
   * One more read into the buffer's free space: false at the end of the
   * stream.
   *
   * @throws {AnswerError} when the buffer is full or the reads are spent.
   */
  async #more(): Promise<boolean> {
    if (this.#length >= MAX_ANSWER_BYTES) {
      throw new AnswerError(`more than ${MAX_ANSWER_BYTES} bytes`);
    }
    if (this.#reads >= MAX_ANSWER_READS) {
      throw new AnswerError(`more than ${MAX_ANSWER_READS} reads`);
    }
    this.#reads++;
    const n = await this.#read(this.#buffer.subarray(this.#length));
    if (n === null) return false;
    this.#length += n;
    return true;
  }
}

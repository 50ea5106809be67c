/**
 * The answer to a delivery is read in work linear in its bytes
 * (docs/interface.md §11): bytes looked at, decoded or copied at most twice
 * the bytes received, however they arrive; at most 64 KiB in all (head and
 * body) and 256 reads, past which the head is refused. The reader's work
 * counter is read here; a delivery over a real socket to a receiver that
 * trickles its answer fails `connection` within those reads.
 */

import assert from "node:assert/strict";
import {
  AnswerError,
  AnswerReader,
  MAX_ANSWER_BYTES,
  MAX_ANSWER_READS,
  type ReadInto,
} from "../../src/delivery/_answer.ts";
import { deliverOnce } from "../../src/delivery/deliver.ts";
import { local } from "../support/deliver.ts";
import { sleep } from "../support/time.ts";

const encoder = new TextEncoder();

/** Gives `bytes` `size` bytes per read (fewer when the buffer has less room), then the end. */
function source(bytes: Uint8Array, size: number): ReadInto {
  let at = 0;
  return (buffer) => {
    if (at >= bytes.length) return Promise.resolve(null);
    const n = Math.min(size, buffer.length, bytes.length - at);
    buffer.set(bytes.subarray(at, at + n));
    at += n;
    return Promise.resolve(n);
  };
}

/** A head of about `bytes` bytes: a status line, `extra` fields, padding fields, the empty line. */
function headOf(bytes: number, status = "HTTP/1.1 200 OK", extra: string[] = []): string {
  let text = [status, ...extra].join("\r\n") + "\r\n";
  while (text.length + 2 < bytes) {
    const room = bytes - text.length - 2;
    text += `x-pad: ${"a".repeat(Math.max(1, Math.min(91, room - 9)))}\r\n`;
  }
  return text + "\r\n";
}

Deno.test("an answer arriving one byte per read costs at most twice its bytes", async () => {
  const head = headOf(200, "HTTP/1.1 200 OK", ["transfer-encoding: chunked"]);
  const body = "5;ext=1\r\nhello\r\n3\r\nabc\r\n0\r\nx-trailer: 1\r\n\r\n";
  const bytes = encoder.encode(head + body);
  assert.ok(bytes.length < MAX_ANSWER_READS);
  const reader = new AnswerReader(source(bytes, 1));
  const parsed = await reader.head();
  assert.equal(parsed.status, 200);
  assert.equal(reader.received, encoder.encode(head).length);
  assert.ok(reader.work <= 2 * reader.received, `head: ${reader.work} for ${reader.received}`);
  assert.equal(await reader.body(new Promise(() => {})), true);
  assert.equal(reader.received, bytes.length);
  assert.equal(reader.reads, bytes.length);
  assert.ok(reader.work <= 2 * reader.received, `all: ${reader.work} for ${reader.received}`);
  // What a witness's answer is read for: the chunks joined, extensions and trailer left out.
  assert.equal(new TextDecoder().decode(reader.content()!), "helloabc");
});

Deno.test("an answer's content: a Content-Length body as it is, none before it all arrived", async () => {
  const bytes = encoder.encode("HTTP/1.1 409 Conflict\r\ncontent-length: 3\r\n\r\n12\n");
  const whole = new AnswerReader(source(bytes, 7));
  await whole.head();
  assert.equal(await whole.body(new Promise(() => {})), true);
  assert.equal(new TextDecoder().decode(whole.content()!), "12\n");
  const cut = new AnswerReader(source(bytes.subarray(0, bytes.length - 1), 7));
  await cut.head();
  assert.equal(await cut.body(new Promise(() => {})), false);
  assert.equal(cut.content(), null);
});

Deno.test("a head still arriving a byte at a time after 256 reads is refused, its work linear", async () => {
  const bytes = encoder.encode(headOf(64 * 1024));
  const reader = new AnswerReader(source(bytes, 1));
  await assert.rejects(reader.head(), AnswerError);
  assert.equal(reader.reads, MAX_ANSWER_READS);
  assert.equal(reader.received, MAX_ANSWER_READS);
  assert.ok(reader.work <= 2 * reader.received, `${reader.work} for ${reader.received}`);
});

Deno.test("an answer arriving in large reads costs at most twice its bytes, up to 64 KiB in all", async () => {
  for (const size of [1460, 16 * 1024, 64 * 1024]) {
    // A head of exactly 64 KiB is read; a byte more is refused.
    const whole = encoder.encode(headOf(MAX_ANSWER_BYTES));
    assert.equal(whole.length, MAX_ANSWER_BYTES);
    const reader = new AnswerReader(source(whole, size));
    assert.equal((await reader.head()).status, 200);
    assert.equal(reader.received, MAX_ANSWER_BYTES);
    assert.ok(reader.work <= 2 * reader.received, `${size}: ${reader.work}`);
    assert.equal(await reader.body(new Promise(() => {})), false, "no body: not kept");

    const over = new AnswerReader(source(encoder.encode(headOf(MAX_ANSWER_BYTES + 1)), size));
    await assert.rejects(over.head(), AnswerError);
    assert.equal(over.received, MAX_ANSWER_BYTES);
    assert.ok(over.work <= 2 * over.received, `${size}: ${over.work}`);
  }
});

Deno.test("head and body share the 64 KiB: a body past it is not read, the status stands", async () => {
  const head = headOf(1024, "HTTP/1.1 202 Accepted", ["content-length: 100000"]);
  const bytes = encoder.encode(head + "b".repeat(100_000));
  const reader = new AnswerReader(source(bytes, 8 * 1024));
  assert.equal((await reader.head()).status, 202);
  assert.equal(await reader.body(new Promise(() => {})), false);
  assert.equal(reader.received, MAX_ANSWER_BYTES);
  // The body's bytes are counted, not looked at.
  assert.ok(reader.work <= 2 * 1024, String(reader.work));
});

Deno.test("interim heads and a chunked body trickled a byte per read stay linear", async () => {
  const early = "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n";
  const head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
  // Chunk data that looks like framing must be skipped, not scanned.
  const data = "0\r\n\r\n".repeat(3) + "0";
  assert.equal(data.length, 0x10);
  const body = `10\r\n${data}\r\n0\r\n\r\n`;
  const bytes = encoder.encode(early + head + body);
  const reader = new AnswerReader(source(bytes, 1));
  assert.equal((await reader.head()).status, 200);
  assert.equal(await reader.body(new Promise(() => {})), true);
  assert.equal(reader.received, bytes.length);
  assert.ok(reader.work <= 2 * reader.received, `${reader.work} for ${reader.received}`);
});

Deno.test("a receiver trickling its head over a real socket: the attempt fails connection within 256 reads", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const head = encoder.encode(headOf(64 * 1024));
  let written = 0;
  const served = (async () => {
    const conn = await listener.accept();
    conn.setNoDelay(true);
    const request = new Uint8Array(64 * 1024);
    await conn.read(request);
    try {
      // One byte per segment, each given time to be read alone.
      for (; written < head.length; written++) {
        await conn.write(head.subarray(written, written + 1));
        await sleep(1);
      }
    } catch {
      // Closed by the service.
    } finally {
      conn.close();
    }
  })();
  try {
    const result = await deliverOnce(
      local(`http://127.0.0.1:${listener.addr.port}/hook`, { timeoutMs: 60_000 }),
    );
    assert.deepEqual([result.status, result.error], [null, "connection"]);
    await served;
    // Each read took one byte or more: the service stopped long before the head's end.
    assert.ok(written < head.length / 2, `${written} bytes written before the close`);
  } finally {
    listener.close();
  }
});

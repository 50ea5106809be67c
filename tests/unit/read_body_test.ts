/**
 * The streamed body reader: size cap (declared and counted), whole-body
 * deadline, stream cancellation, and the exact bytes otherwise. Bodies are
 * real `ReadableStream`s inside real `Request`s.
 */

import assert from "node:assert/strict";
import { DeadlineSweeper } from "../../src/http/deadlines.ts";
import { readBody } from "../../src/http/read_body.ts";
import { ServiceError } from "../../src/errors.ts";
import { HttpError, STATUS_OF } from "../../src/http/respond.ts";
import { sleep } from "../support/time.ts";

/** A body stream that records how often it was pulled and whether it was cancelled. */
function trackedStream(chunks: Uint8Array[], options: { endless?: boolean } = {}) {
  const state = { pulls: 0, cancelled: false };
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulls++;
      if (index < chunks.length) controller.enqueue(chunks[index++]);
      else if (options.endless) controller.enqueue(new Uint8Array(1));
      else controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

function post(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request("http://localhost/intents", { method: "POST", body, headers });
}

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ServiceError, `expected a ServiceError, got ${error}`);
    return error;
  }
  assert.fail("expected the body to be refused");
}

const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill);

Deno.test("readBody returns a body of exactly the limit, across chunks, byte for byte", async () => {
  const chunks = [bytes(10, 1), bytes(0), bytes(20, 2), bytes(2, 3)];
  const { stream, state } = trackedStream(chunks);
  const body = await readBody(post(stream), { maxBytes: 32 });
  assert.deepEqual(body, new Uint8Array([...chunks[0], ...chunks[2], ...chunks[3]]));
  assert.equal(state.cancelled, false);
});

Deno.test("readBody refuses a streamed body of limit + 1 with 413 and cancels the stream", async () => {
  const { stream, state } = trackedStream([bytes(16), bytes(16), bytes(1), bytes(100)]);
  const error = await rejection(readBody(post(stream), { maxBytes: 32 }));
  assert.equal(STATUS_OF[error.code], 413);
  assert.equal(error.code, "payload_too_large");
  assert.equal(state.cancelled, true);
  // Reading stopped at the chunk that crossed the limit.
  assert.equal(state.pulls, 3);
});

Deno.test("readBody refuses an endless body once it passes the limit", async () => {
  const { stream, state } = trackedStream([], { endless: true });
  const error = await rejection(readBody(post(stream), { maxBytes: 1000 }));
  assert.equal(STATUS_OF[error.code], 413);
  assert.equal(state.pulls, 1001);
  assert.equal(state.cancelled, true);
});

Deno.test("readBody refuses a Content-Length over the limit without reading the stream", async () => {
  const { stream, state } = trackedStream([bytes(10)]);
  const request = post(stream, { "content-length": "33" });
  const error = await rejection(readBody(request, { maxBytes: 32 }));
  assert.equal(STATUS_OF[error.code], 413);
  assert.equal(error.code, "payload_too_large");
  assert.equal(state.pulls, 0);
  await sleep(0);
  assert.equal(state.cancelled, true);
});

Deno.test("readBody accepts a Content-Length at the limit and still counts the bytes", async () => {
  const { stream } = trackedStream([bytes(20), bytes(20)]);
  // The header understates the body: the count, not the header, decides.
  const error = await rejection(
    readBody(post(stream, { "content-length": "32" }), { maxBytes: 32 }),
  );
  assert.equal(STATUS_OF[error.code], 413);
  const ok = trackedStream([bytes(32)]);
  const body = await readBody(post(ok.stream, { "content-length": "32" }), { maxBytes: 32 });
  assert.equal(body.length, 32);
});

Deno.test("readBody counts a chunked body even when a Content-Length comes with it", async () => {
  // Content-Length beside Transfer-Encoding does not bound the body: it is
  // read chunk by chunk and cut off at the limit, never read whole.
  const { stream, state } = trackedStream([], { endless: true });
  const error = await rejection(readBody(
    post(stream, { "content-length": "10", "transfer-encoding": "chunked" }),
    { maxBytes: 32, timeoutMs: 5_000 },
  ));
  assert.equal(STATUS_OF[error.code], 413);
  assert.equal(state.cancelled, true);
  assert.equal(state.pulls, 33);
});

Deno.test("readBody refuses a malformed Content-Length with 400", async () => {
  for (const value of ["-1", "1.5", "12abc", "99999999999999999999"]) {
    const { stream, state } = trackedStream([bytes(1)]);
    const error = await rejection(readBody(post(stream, { "content-length": value }), {
      maxBytes: 32,
    }));
    assert.equal(STATUS_OF[error.code], 400, value);
    assert.equal(error.code, "invalid_body");
    assert.equal(state.pulls, 0);
  }
});

Deno.test("readBody cuts off a body that never ends with 408 and cancels the stream", async () => {
  const state = { cancelled: false, pulls: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulls++;
      // Sends one byte, then never anything again.
      if (state.pulls === 1) controller.enqueue(bytes(1));
      return new Promise(() => {});
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  const started = performance.now();
  const error = await rejection(readBody(post(stream), { maxBytes: 1000, timeoutMs: 100 }));
  const elapsed = performance.now() - started;
  assert.equal(STATUS_OF[error.code], 408);
  assert.equal(error.code, "request_timeout");
  assert.ok(elapsed >= 90 && elapsed < 1000, `took ${elapsed.toFixed(0)} ms`);
  await sleep(0);
  assert.equal(state.cancelled, true);
});

Deno.test("readBody's deadline covers the whole body, not each chunk", async () => {
  const state = { cancelled: false };
  // A byte every 20 ms: each chunk is quick, the body as a whole is not.
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(20);
      controller.enqueue(bytes(1));
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  const error = await rejection(readBody(post(stream), { maxBytes: 1000, timeoutMs: 150 }));
  assert.equal(STATUS_OF[error.code], 408);
  await sleep(30);
  assert.equal(state.cancelled, true);
});

Deno.test("readBody accepts a trickling body that completes within the time limit", async () => {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleep(10);
      if (sent === 5) return controller.close();
      controller.enqueue(new Uint8Array([0x30 + sent++]));
    },
  }, { highWaterMark: 0 });
  const body = await readBody(post(stream), { maxBytes: 32, timeoutMs: 2000 });
  assert.equal(new TextDecoder().decode(body), "01234");
});

Deno.test("readBody returns an empty array for an absent or empty body", async () => {
  const absent = await readBody(new Request("http://localhost/"), { maxBytes: 32 });
  assert.ok(absent instanceof Uint8Array);
  assert.equal(absent.length, 0);
  const empty = await readBody(post(""), { maxBytes: 32 });
  assert.equal(empty.length, 0);
  const closed = await readBody(post(trackedStream([]).stream), { maxBytes: 0 });
  assert.equal(closed.length, 0);
});

Deno.test("readBody returns bytes in a buffer of their own, not a view into a larger one", async () => {
  const big = new Uint8Array(64 * 1024).fill(7);
  const view = big.subarray(100, 110);
  const body = await readBody(post(trackedStream([view]).stream), { maxBytes: 32 });
  assert.equal(body.byteLength, 10);
  assert.equal(body.buffer.byteLength, 10);
  assert.deepEqual(body, new Uint8Array(10).fill(7));
});

Deno.test("readBody turns a failing stream into 400 invalid_body", async () => {
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  }, { highWaterMark: 0 });
  const error = await rejection(readBody(post(stream), { maxBytes: 32 }));
  assert.equal(STATUS_OF[error.code], 400);
  assert.equal(error.code, "invalid_body");
  assert.ok(!error.message.includes("reset"));
});

Deno.test("readBody reads a body that a real Request holds as text", async () => {
  const body = await readBody(post('{"a":"€"}'), { maxBytes: 32 });
  assert.deepEqual(body, new TextEncoder().encode('{"a":"€"}'));
  const error = await rejection(readBody(post("x".repeat(33)), { maxBytes: 32 }));
  assert.equal(STATUS_OF[error.code], 413);
});

Deno.test("readBody with shared deadlines: a stalled body gets 408 within one sweep of the limit", async () => {
  const deadlines = new DeadlineSweeper(20);
  try {
    const state = { cancelled: false };
    const stream = new ReadableStream<Uint8Array>({
      pull() {
        return new Promise(() => {});
      },
      cancel() {
        state.cancelled = true;
      },
    }, { highWaterMark: 0 });
    const started = performance.now();
    const error = await rejection(
      readBody(post(stream), { maxBytes: 1000, timeoutMs: 100, deadlines }),
    );
    const elapsed = performance.now() - started;
    assert.equal(STATUS_OF[error.code], 408);
    assert.ok(elapsed >= 95 && elapsed < 1000, `took ${elapsed.toFixed(0)} ms`);
    await sleep(0);
    assert.equal(state.cancelled, true);
    // A body that arrives in time leaves no deadline behind.
    const body = await readBody(post(new TextEncoder().encode("{}")), {
      maxBytes: 10,
      timeoutMs: 100,
      deadlines,
    });
    assert.equal(body.length, 2);
  } finally {
    deadlines.stop();
  }
});

Deno.test("DeadlineSweeper expires each deadline once, after its time, unless removed", async () => {
  const deadlines = new DeadlineSweeper(5);
  try {
    const fired: string[] = [];
    deadlines.add(10, () => fired.push("a"));
    const b = deadlines.add(10, () => fired.push("b"));
    deadlines.add(5_000, () => fired.push("late"));
    deadlines.remove(b);
    await sleep(60);
    assert.deepEqual(fired, ["a"]);
    assert.throws(() => new DeadlineSweeper(0), RangeError);
  } finally {
    deadlines.stop();
  }
});

/** A body stream that never yields, recording whether it was cancelled. */
function stalledStream() {
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull() {
      return new Promise(() => {});
    },
    cancel() {
      state.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

Deno.test("readBody: a body still arriving when the server cuts the deadlines is 503 unavailable with Connection: close", async () => {
  const deadlines = new DeadlineSweeper(1000);
  try {
    const { stream, state } = stalledStream();
    const reading = rejection(
      readBody(post(stream), { maxBytes: 1000, timeoutMs: 60_000, deadlines }),
    );
    await sleep(10);
    deadlines.cutAll();
    const error = await reading;
    assert.equal(STATUS_OF[error.code], 503);
    assert.equal(error.code, "unavailable");
    assert.equal((error as HttpError).headers.connection, "close");
    await sleep(0);
    assert.equal(state.cancelled, true);
    // A body read after the cut runs its normal course.
    const body = await readBody(post("{}"), { maxBytes: 10, deadlines });
    assert.equal(body.length, 2);
  } finally {
    deadlines.stop();
  }
});

Deno.test("readBody: a body stream that fails is 503 while the server stops, 400 otherwise", async () => {
  const failing = () =>
    new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection gone"));
      },
    });
  const stopping = new AbortController();
  const before = await rejection(
    readBody(post(failing()), { maxBytes: 100, stopping: stopping.signal }),
  );
  assert.equal(STATUS_OF[before.code], 400);
  assert.equal(before.code, "invalid_body");
  stopping.abort();
  const after = await rejection(
    readBody(post(failing()), { maxBytes: 100, stopping: stopping.signal }),
  );
  assert.equal(STATUS_OF[after.code], 503);
  assert.equal(after.code, "unavailable");
  assert.equal((after as HttpError).headers.connection, "close");
});

Deno.test("DeadlineSweeper.cutAll expires every pending deadline at once, with cause shutdown", () => {
  const deadlines = new DeadlineSweeper(1000);
  try {
    const fired: string[] = [];
    deadlines.add(60_000, (cause) => fired.push(`a:${cause}`));
    const b = deadlines.add(60_000, (cause) => fired.push(`b:${cause}`));
    deadlines.remove(b);
    deadlines.cutAll();
    assert.deepEqual(fired, ["a:shutdown"]);
    deadlines.cutAll();
    assert.deepEqual(fired, ["a:shutdown"], "a deadline expires once");
  } finally {
    deadlines.stop();
  }
});

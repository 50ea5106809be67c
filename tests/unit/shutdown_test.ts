/**
 * Stopping within a bound, on a real `Deno.serve` with real connections: a
 * client stalled inside its body is answered 503 and does not hold the stop,
 * an idle keep-alive connection is closed, a running handler is waited for,
 * and one that outlives the bound is left behind at the bound.
 */

import assert from "node:assert/strict";
import { DeadlineSweeper } from "../../src/http/deadlines.ts";
import { readBody } from "../../src/http/read_body.ts";
import { ServiceError } from "../../src/errors.ts";
import { errorResponse } from "../../src/http/respond.ts";
import { InFlightRequests, stopServing } from "../../src/http/shutdown.ts";
import { until } from "../support/time.ts";

const encoder = new TextEncoder();

/** A server whose POSTs read their body as the service does, and whose `GET /wait` waits for `release`. */
function serve(release: Promise<void>) {
  const stopping = new AbortController();
  const deadlines = new DeadlineSweeper(50);
  const inFlight = new InFlightRequests();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    inFlight.wrap(async (request) => {
      if (request.method === "GET") {
        if (new URL(request.url).pathname === "/wait") await release;
        return new Response("ok");
      }
      try {
        await readBody(request, { maxBytes: 1000, deadlines, stopping: stopping.signal });
        return new Response("read");
      } catch (error) {
        if (error instanceof ServiceError) return errorResponse(error);
        throw error;
      }
    }),
  );
  return { server, stopping, deadlines, inFlight, port: server.addr.port };
}

/**
 * Sends `text` on a new connection. `seen()` is what the server sent so far;
 * `closed` resolves with all of it once the connection closes.
 */
async function rawClient(port: number, text: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(encoder.encode(text));
  let all = "";
  const closed = (async () => {
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(4096);
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) break;
        all += decoder.decode(buffer.subarray(0, n));
      }
    } catch {
      // Reset: closed.
    }
    return all;
  })();
  return { conn, closed, seen: () => all };
}

Deno.test("stopServing answers a client stalled in its body with 503 and stops without waiting for it to leave", async () => {
  const { server, stopping, deadlines, inFlight, port } = serve(Promise.resolve());
  const stalled = await rawClient(
    port,
    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
  );
  const idle = await rawClient(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(
    () => inFlight.count === 1 && /^HTTP\/1\.1 200 /.test(idle.seen()),
    5_000,
    "the stalled request in flight, the idle one answered",
  );
  try {
    const stopped = await stopServing({ server, stopping, deadlines, inFlight, timeoutMs: 30_000 });
    assert.deepEqual(stopped, { drained: true, unanswered: 0 });
    assert.equal(stopping.signal.aborted, true);
    // The idle keep-alive connection was answered, then closed by the server.
    assert.match(await idle.closed, /^HTTP\/1\.1 200 /);
    // The stalled client was answered; its connection may stay open until it leaves.
    await until(
      () => /"code":"unavailable"/.test(stalled.seen()),
      2_000,
      "the stalled client's 503",
    );
    assert.match(stalled.seen(), /^HTTP\/1\.1 503 [^]*connection: close[^]*"code":"unavailable"/i);
  } finally {
    stalled.conn.close();
    await stalled.closed;
    deadlines.stop();
    await server.finished;
  }
});

Deno.test("stopServing waits for a running request, and leaves one that outlives the bound", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const { server, stopping, deadlines, inFlight, port } = serve(released);
  const waiting = await rawClient(port, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  await until(() => inFlight.count === 1, 5_000, "the request in flight");
  try {
    const stopped = await stopServing({ server, stopping, deadlines, inFlight, timeoutMs: 300 });
    assert.deepEqual(stopped, { drained: false, unanswered: 1 });
    // Answered late, it is still delivered while the process lives.
    release();
    assert.match(await waiting.closed, /^HTTP\/1\.1 200 /);
    await inFlight.idle();
    assert.equal(inFlight.count, 0);
  } finally {
    deadlines.stop();
    await server.finished;
  }
});

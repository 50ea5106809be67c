/**
 * Tests of the connection a deliverer keeps between attempts, against real
 * receivers on loopback addresses: reused while the answers allow it,
 * dropped when the receiver says `connection: close` or closes it, and never
 * used for a name that now resolves elsewhere.
 */

import assert from "node:assert/strict";
import { deliverOnce, type DeliverOptions, type Resolver } from "../../src/delivery/deliver.ts";
import { KeptConnection } from "../../src/delivery/kept_connection.ts";
import { BODY, local } from "../support/deliver.ts";
import { sleep } from "../support/time.ts";

function options(url: string, connection: KeptConnection, extra: Partial<DeliverOptions> = {}) {
  return local(url, { connection, ...extra });
}

/** A Deno.serve receiver on `hostname` that counts the connections its requests came on. */
function countingReceiver(hostname = "127.0.0.1", answer?: () => Response) {
  const connections = new Set<string>();
  const server = Deno.serve({ hostname, port: 0, onListen() {} }, async (request, info) => {
    await request.arrayBuffer();
    const { hostname, port } = info.remoteAddr;
    connections.add(`${hostname}:${port}`);
    return answer?.() ?? new Response(null, { status: 204 });
  });
  return { server, connections, port: server.addr.port };
}

Deno.test("attempts to one endpoint reuse one connection while its answers allow it", async () => {
  const receiver = countingReceiver();
  const kept = new KeptConnection();
  try {
    const url = `http://127.0.0.1:${receiver.port}/hook`;
    for (let i = 0; i < 5; i++) {
      const result = await deliverOnce(options(url, kept));
      assert.equal(result.status, 204);
    }
    assert.equal(receiver.connections.size, 1);
    // Another origin (the same receiver by another path is the same origin; another port is not).
    const other = countingReceiver();
    try {
      await deliverOnce(options(`http://127.0.0.1:${other.port}/hook`, kept));
      await deliverOnce(options(url, kept));
      assert.equal(receiver.connections.size, 2, "the kept one went with the change of origin");
    } finally {
      kept.close();
      await other.server.shutdown();
    }
  } finally {
    kept.close();
    await receiver.server.shutdown();
  }
});

Deno.test("an answer with connection: close, or of unknown length, is not kept", async () => {
  let close = true;
  const receiver = countingReceiver(
    "127.0.0.1",
    () =>
      close ? new Response("ok", { headers: { connection: "close" } }) : new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode("streamed"));
            c.close();
          },
        }),
      ),
  );
  const kept = new KeptConnection();
  try {
    const url = `http://127.0.0.1:${receiver.port}/hook`;
    await deliverOnce(options(url, kept));
    await deliverOnce(options(url, kept));
    assert.equal(receiver.connections.size, 2);
    // A chunked body read to its end leaves the connection usable.
    close = false;
    await deliverOnce(options(url, kept));
    await deliverOnce(options(url, kept));
    assert.equal(receiver.connections.size, 3);
  } finally {
    kept.close();
    await receiver.server.shutdown();
  }
});

Deno.test("a kept connection the receiver closed: the attempt goes on a new one, delivered once", async () => {
  // A raw receiver that answers one request per connection, then closes it without saying so.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let requests = 0;
  const served = (async () => {
    for await (const conn of listener) {
      const buffer = new Uint8Array(64 * 1024);
      let text = "";
      while (!text.includes("\r\n\r\n") || !text.endsWith(BODY)) {
        const n = await conn.read(buffer);
        if (n === null) break;
        text += new TextDecoder().decode(buffer.subarray(0, n));
      }
      requests++;
      await conn.write(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n"));
      conn.close();
    }
  })();
  const kept = new KeptConnection();
  try {
    const url = `http://127.0.0.1:${listener.addr.port}/hook`;
    for (let i = 0; i < 3; i++) {
      const result = await deliverOnce(options(url, kept));
      assert.deepEqual([result.status, result.error], [204, null]);
      // Let the close reach this side before the next attempt.
      await sleep(20);
    }
    assert.equal(requests, 3, "each event reached the receiver once");
  } finally {
    kept.close();
    listener.close();
    await served.catch(() => {});
  }
});

Deno.test("a name that now resolves to another address gets a connection there", async () => {
  // On 0.0.0.0, reached at 127.0.0.1 and 127.0.0.2 (127.0.0.0/8 is loopback on Linux); each
  // connection is known by the address it reached, whatever source address the kernel chose.
  const receiver = rawReceiver("HTTP/1.1 204 No Content\r\n\r\n", { hostname: "0.0.0.0" });
  const kept = new KeptConnection();
  let answer = ["127.0.0.1"];
  const resolve: Resolver = () => Promise.resolve(answer);
  try {
    const url = `http://hooks.example:${receiver.port}/hook`;
    await deliverOnce(options(url, kept, { resolve }));
    await deliverOnce(options(url, kept, { resolve }));
    assert.deepEqual(receiver.reached(), ["127.0.0.1"]);
    answer = ["127.0.0.2"];
    const moved = await deliverOnce(options(url, kept, { resolve }));
    assert.deepEqual([moved.status, moved.address], [204, "127.0.0.2"]);
    assert.deepEqual(receiver.reached(), ["127.0.0.1", "127.0.0.2"]);
    // Resolving to a refused address: refused, the kept connection unused.
    answer = ["10.0.0.1"];
    const refused = await deliverOnce(options(url, kept, { resolve, allowPrivate: false }));
    assert.deepEqual([refused.error, refused.address], ["refused_address", "10.0.0.1"]);
    assert.deepEqual(receiver.reached(), ["127.0.0.1", "127.0.0.2"]);
  } finally {
    kept.close();
    await receiver.close();
  }
});

/**
 * A raw receiver on `hostname` (default 127.0.0.1) that answers every request
 * on a connection with `answer`, and keeps it open.
 */
function rawReceiver(answer: string, options: { hostname?: string } = {}) {
  const listener = Deno.listen({ hostname: options.hostname ?? "127.0.0.1", port: 0 });
  const reached: string[] = [];
  const open: Deno.Conn[] = [];
  const served = (async () => {
    for await (const conn of listener) {
      reached.push((conn.localAddr as Deno.NetAddr).hostname);
      open.push(conn);
      (async () => {
        const buffer = new Uint8Array(64 * 1024);
        let text = "";
        for (;;) {
          const n = await conn.read(buffer).catch(() => null);
          if (n === null) return;
          text += new TextDecoder().decode(buffer.subarray(0, n));
          while (text.includes("\r\n\r\n") && text.endsWith(BODY)) {
            text = "";
            await conn.write(new TextEncoder().encode(answer)).catch(() => {});
          }
        }
      })();
    }
  })();
  return {
    port: listener.addr.port,
    url: `http://127.0.0.1:${listener.addr.port}/hook`,
    connections: () => reached.length,
    /** The address each connection reached, in order. */
    reached: () => [...reached],
    async close() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // closed
        }
      }
      await served.catch(() => {});
    },
  };
}

Deno.test("an answer whose end cannot be known is read for a second at most, and not kept", async () => {
  const receiver = rawReceiver("HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\n\r\nhello");
  const kept = new KeptConnection();
  try {
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const result = await deliverOnce(options(receiver.url, kept, { timeoutMs: 10_000 }));
      const took = performance.now() - started;
      assert.deepEqual([result.status, result.error], [200, null]);
      assert.ok(took < 3_000, `the attempt took ${Math.round(took)} ms`);
    }
    assert.equal(receiver.connections(), 2, "not kept");
  } finally {
    kept.close();
    await receiver.close();
  }
});

Deno.test("chunked answers with trailers are kept; a 204 followed by bytes is not", async () => {
  const trailers = rawReceiver(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2;x=y\r\nok\r\n0\r\nx-t: 1\r\n\r\n",
  );
  const junk = rawReceiver("HTTP/1.1 204 No Content\r\n\r\njunk");
  const kept = new KeptConnection();
  try {
    for (let i = 0; i < 3; i++) {
      assert.equal((await deliverOnce(options(trailers.url, kept))).status, 200);
    }
    assert.equal(trailers.connections(), 1);
    for (let i = 0; i < 3; i++) {
      const result = await deliverOnce(options(junk.url, kept));
      assert.deepEqual([result.status, result.error], [204, null]);
    }
    assert.equal(junk.connections(), 3, "a connection with stray bytes is not reused");
  } finally {
    kept.close();
    await trailers.close();
    await junk.close();
  }
});

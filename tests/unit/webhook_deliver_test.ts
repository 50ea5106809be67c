/**
 * Tests of `deliverOnce` against real receivers on 127.0.0.1 (docs/interface.md §11):
 * the request as sent, statuses, redirects, Retry-After, time-outs and
 * connection failures. Where it connects (judged addresses, DNS rebinding,
 * TLS by name) is in webhook_deliver_address_test.ts.
 */

import assert from "node:assert/strict";
import { deliverOnce, type Resolver } from "../../src/delivery/deliver.ts";
import { BODY, HEADERS, local, noConnect, resolver } from "../support/deliver.ts";
import { sleep } from "../support/time.ts";
import { freeQuietPort } from "../support/ports.ts";

/** A receiver on 127.0.0.1 that answers by path: `/status/NNN` answers NNN. */
function statusReceiver() {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const { pathname } = new URL(request.url);
    hits.push(pathname);
    const status = Number(/^\/status\/(\d{3})$/.exec(pathname)?.[1] ?? 200);
    const headers = status >= 300 && status < 400 ? { location: "/elsewhere" } : undefined;
    return new Response(status === 204 || status === 304 ? null : "ok", { status, headers });
  });
  return { server, hits, base: `http://127.0.0.1:${server.addr.port}` };
}

/** A raw TCP receiver: `answer` gets the request's bytes read so far and the connection. */
function rawReceiver(answer: (conn: Deno.Conn, request: Uint8Array) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done = (async () => {
    for await (const conn of listener) {
      try {
        const buffer = new Uint8Array(64 * 1024);
        let length = 0;
        // Read until the head and its declared body have arrived.
        while (true) {
          const n = await conn.read(buffer.subarray(length));
          if (n === null) break;
          length += n;
          const text = new TextDecoder().decode(buffer.subarray(0, length));
          const end = text.indexOf("\r\n\r\n");
          const declared = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
          if (end >= 0 && length >= end + 4 + declared) break;
        }
        await answer(conn, buffer.slice(0, length));
      } catch {
        // The client went away: fine for these tests.
      } finally {
        try {
          conn.close();
        } catch { /* closed by the answer */ }
      }
    }
  })();
  return {
    port: listener.addr.port,
    async [Symbol.asyncDispose]() {
      listener.close();
      await done;
    },
  };
}

const encoder = new TextEncoder();

async function writeText(conn: Deno.Conn, text: string) {
  const bytes = encoder.encode(text);
  for (let i = 0; i < bytes.length;) i += await conn.write(bytes.subarray(i));
}

Deno.test("deliverOnce sends exactly the given headers and body, plus host, content-length and connection", async () => {
  let seen = "";
  await using receiver = rawReceiver(async (conn, request) => {
    seen = new TextDecoder().decode(request);
    await writeText(conn, "HTTP/1.1 204 No Content\r\n\r\n");
  });
  const url = `http://127.0.0.1:${receiver.port}/in/hook?team=7`;
  const result = await deliverOnce(local(url));
  assert.equal(result.status, 204);
  assert.equal(result.error, null);
  assert.equal(result.address, "127.0.0.1");
  const expected = [
    "POST /in/hook?team=7 HTTP/1.1",
    `host: 127.0.0.1:${receiver.port}`,
    "content-type: application/json",
    `webhook-id: ${HEADERS["webhook-id"]}`,
    `webhook-timestamp: ${HEADERS["webhook-timestamp"]}`,
    `webhook-signature: ${HEADERS["webhook-signature"]}`,
    `content-length: ${encoder.encode(BODY).length}`,
    "connection: close",
    "",
    BODY,
  ].join("\r\n");
  assert.equal(seen, expected);
});

Deno.test("deliverOnce's request reads, to Deno.serve, as the headers and body given", async () => {
  let seen: { headers: [string, string][]; body: string; method: string } | null = null;
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (r) => {
    seen = { headers: [...r.headers], body: await r.text(), method: r.method };
    return new Response(null, { status: 200 });
  });
  const result = await deliverOnce(local(`http://127.0.0.1:${server.addr.port}/`));
  assert.equal(result.status, 200);
  const expected = Object.entries({
    ...HEADERS,
    host: `127.0.0.1:${server.addr.port}`,
    "content-length": String(encoder.encode(BODY).length),
    connection: "close",
  }).sort(([a], [b]) => a.localeCompare(b));
  assert.deepEqual(seen, { headers: expected, body: BODY, method: "POST" });
});

Deno.test("deliverOnce reports the receiver's status: 2xx acknowledges, others fail without an error kind", async () => {
  const { server, base } = statusReceiver();
  await using _ = server;
  for (const status of [200, 201, 202, 204, 299, 400, 404, 410, 413, 429, 500, 502, 503]) {
    const result = await deliverOnce(local(`${base}/status/${status}`));
    assert.equal(result.status, status);
    assert.equal(result.error, null, String(status));
    assert.ok(result.durationMs >= 0 && result.durationMs < 5000);
    assert.equal(result.retryAfterS, undefined);
  }
});

Deno.test("deliverOnce never follows a redirect: a 3xx is the error redirect", async () => {
  const { server, base, hits } = statusReceiver();
  await using _ = server;
  for (const status of [301, 302, 303, 307, 308]) {
    const result = await deliverOnce(local(`${base}/status/${status}`));
    assert.deepEqual([result.status, result.error], [status, "redirect"]);
  }
  assert.ok(!hits.includes("/elsewhere"));
});

Deno.test("deliverOnce keeps a 429's or 503's Retry-After of at most an hour", async () => {
  const inNinetySeconds = new Date(Date.now() + 90_000).toUTCString();
  const cases: [number, string, number | undefined][] = [
    [429, "120", 120],
    [503, "0", 0],
    [429, "3600", 3600],
    [429, "3601", undefined],
    [503, "86400", undefined],
    [429, inNinetySeconds, 90],
    [503, "Thu, 01 Jan 1970 00:00:00 GMT", 0],
    [429, "soon", undefined],
    [429, "-5", undefined],
    [500, "120", undefined],
    [200, "120", undefined],
  ];
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (r) => {
    const [status, value] = cases[Number(new URL(r.url).pathname.slice(1))];
    return new Response("busy", { status, headers: { "retry-after": value } });
  });
  for (const [i, [status, value, expected]] of cases.entries()) {
    const result = await deliverOnce(local(`http://127.0.0.1:${server.addr.port}/${i}`));
    assert.equal(result.status, status);
    const got = result.retryAfterS;
    if (typeof expected === "number" && expected > 0) {
      assert.ok(got !== undefined && Math.abs(got - expected) <= 1, `${value}: ${got}`);
    } else {
      assert.equal(got, expected, value);
    }
  }
});

Deno.test("deliverOnce gives up with timeout when the receiver does not answer in time", async () => {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await released;
    return new Response("late");
  });
  const started = performance.now();
  const result = await deliverOnce(
    local(`http://127.0.0.1:${server.addr.port}/`, { timeoutMs: 300 }),
  );
  const took = performance.now() - started;
  release();
  assert.deepEqual([result.status, result.error], [null, "timeout"]);
  assert.ok(
    result.durationMs >= 290 && took < 2000,
    `${result.durationMs} ms, returned after ${took} ms`,
  );
});

Deno.test("deliverOnce's time limit covers the name's resolution and a receiver that accepts but never answers", async () => {
  const hanging: Resolver = (_, { signal }) =>
    new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
  const viaDns = await deliverOnce(
    local("https://hooks.example/", { resolve: hanging, connect: noConnect, timeoutMs: 200 }),
  );
  assert.deepEqual([viaDns.status, viaDns.error], [null, "timeout"]);
  await using receiver = rawReceiver(async (conn) => {
    await sleep(600);
    await writeText(conn, "HTTP/1.1 200 OK\r\n\r\n").catch(() => {});
  });
  const silent = await deliverOnce(local(`http://127.0.0.1:${receiver.port}/`, { timeoutMs: 200 }));
  assert.deepEqual([silent.status, silent.error], [null, "timeout"]);
});

Deno.test("deliverOnce fails with connection when nothing listens, or the name does not resolve", async () => {
  const closed = await deliverOnce(local(`http://127.0.0.1:${freeQuietPort()}/`));
  assert.deepEqual([closed.status, closed.error], [null, "connection"]);
  const failing: Resolver = () => Promise.reject(new Deno.errors.NotFound("no such name"));
  const unknown = await deliverOnce(
    local("https://nowhere.example/", { resolve: failing, connect: noConnect }),
  );
  assert.deepEqual([unknown.status, unknown.error], [null, "connection"]);
  const empty = await deliverOnce(
    local("https://nowhere.example/", { resolve: resolver([]), connect: noConnect }),
  );
  assert.deepEqual([empty.status, empty.error], [null, "connection"]);
});

Deno.test("deliverOnce fails with connection on an answer that is not HTTP/1.x or ends early", async () => {
  for (
    const answer of [
      "SSH-2.0-OpenSSH_9.6\r\n",
      "HTTP/2 200\r\n\r\n",
      "HTTP/1.1 2000 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n", // the head never ends
      "HTTP/1.1 200 OK\r\n bad header\r\n\r\n",
      "",
    ]
  ) {
    await using receiver = rawReceiver((conn) => writeText(conn, answer));
    const result = await deliverOnce(local(`http://127.0.0.1:${receiver.port}/`));
    assert.deepEqual([result.status, result.error], [null, "connection"], JSON.stringify(answer));
  }
});

Deno.test("deliverOnce skips interim 1xx heads, and reads a head despite a large or endless body", async () => {
  await using early = rawReceiver((conn) =>
    writeText(conn, "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 202 Accepted\r\n\r\n")
  );
  const result = await deliverOnce(local(`http://127.0.0.1:${early.port}/`));
  assert.deepEqual([result.status, result.error], [202, null]);

  await using big = rawReceiver(async (conn) => {
    await writeText(conn, "HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n");
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    for (let i = 0; i < 16; i++) await conn.write(chunk);
  });
  const started = performance.now();
  const large = await deliverOnce(local(`http://127.0.0.1:${big.port}/`, { timeoutMs: 3000 }));
  assert.deepEqual([large.status, large.error], [200, null]);
  assert.ok(performance.now() - started < 2500);

  await using endless = rawReceiver(async (conn) => {
    await writeText(conn, "HTTP/1.1 200 OK\r\n\r\nstill talking");
    await sleep(500);
  });
  const open = await deliverOnce(local(`http://127.0.0.1:${endless.port}/`, { timeoutMs: 300 }));
  assert.deepEqual([open.status, open.error], [200, null]);
});

Deno.test("deliverOnce ends early, with the signal's reason, when the process stops", async () => {
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await released;
    return new Response("late");
  });
  const stopping = new AbortController();
  setTimeout(() => stopping.abort(new Error("stopping")), 100);
  await assert.rejects(
    deliverOnce(local(`http://127.0.0.1:${server.addr.port}/`, { signal: stopping.signal })),
    /stopping/,
  );
  release();
});

Deno.test("deliverOnce refuses a caller's mistakes before connecting", async () => {
  const url = "https://hooks.example/";
  const base = { ...local(url), resolve: resolver(["93.184.216.34"]), connect: noConnect };
  await assert.rejects(deliverOnce({ ...base, url: "ftp://hooks.example/" }), TypeError);
  await assert.rejects(deliverOnce({ ...base, url: "not a url" }), TypeError);
  for (
    const headers of [
      { host: "elsewhere" },
      { "Content-Length": "1" },
      { connection: "keep-alive" },
    ] as Record<string, string>[]
  ) {
    await assert.rejects(deliverOnce({ ...base, headers }), /set by the delivery/);
  }
  for (
    const headers of [{ "bad name": "x" }, { "x-a": "line\r\ninjected: 1" }, {
      "x-b": "é",
    }] as Record<string, string>[]
  ) {
    await assert.rejects(deliverOnce({ ...base, headers }), /not a valid field/);
  }
  for (const timeoutMs of [0, -1, NaN]) {
    await assert.rejects(deliverOnce({ ...base, timeoutMs }), RangeError);
  }
});

/**
 * The two delivery paths (docs/interface.md §11) against a real HTTPS
 * receiver on port 443 of 127.0.0.1, reached by the name `localhost`, its
 * certificate from a test authority: where plain TCP to port 443 is refused
 * (Deno Deploy), an `https:` delivery connects with `Deno.connectTls` by
 * name and judges the peer's address before writing any byte of the
 * request; the refusal, met once, is remembered; keep-alive reuses a
 * connection only to an address just judged; answers read the same on both
 * paths. Names are resolved by an injected resolver, so that one can answer
 * what a rebinding DNS server would.
 */

import assert from "node:assert/strict";
import { type Connector, deliverOnce, SocketRules } from "../../src/delivery/deliver.ts";
import { KeptConnection } from "../../src/delivery/kept_connection.ts";
import { HAS_OPENSSL, makeCertificates } from "../../testing/certificates.ts";
import { local, noConnect, resolver } from "../support/deliver.ts";
import { startTlsReceiver, type TlsReceiver } from "../support/tls_receiver.ts";
import { sleep, until } from "../support/time.ts";

const certs = HAS_OPENSSL ? await makeCertificates("localhost") : undefined;
if (certs) await Deno.remove(certs.dir, { recursive: true });
const URL_443 = "https://localhost/hook";
/** What Deno Deploy's runtime says to `Deno.connect` to port 443 (testing/deploy_sockets.ts). */
const DEPLOY_REFUSAL =
  "Connecting to port 443 with Deno.connect is prohibited: use Deno.connectTls";

/** Runs `fn` with a receiver on 127.0.0.1:443 (or `port`), closed afterwards. */
async function withReceiver(fn: (receiver: TlsReceiver) => Promise<void>, port = 443) {
  const receiver = await startTlsReceiver({ cert: certs!.cert, key: certs!.key, port });
  try {
    await fn(receiver);
  } finally {
    await receiver.close();
  }
}

/** Options for a delivery on the by-name path, as on Deno Deploy. */
function onDeploy(url: string, extra: Parameters<typeof local>[1] = {}) {
  return local(url, {
    sockets: new SocketRules({ deploy: true }),
    connect: noConnect,
    resolve: resolver(["127.0.0.1"]),
    caCerts: [certs!.ca],
    ...extra,
  });
}

const test = (name: string, fn: () => Promise<void>) =>
  Deno.test({ name, ignore: !HAS_OPENSSL, fn });

test("where plain TCP to 443 is refused, an https delivery connects by name and is answered", async () => {
  await withReceiver(async (receiver) => {
    const resolve = resolver(["127.0.0.1"]);
    const result = await deliverOnce(onDeploy(URL_443, { resolve }));
    assert.deepEqual([result.status, result.error, result.address], [204, null, "127.0.0.1"]);
    assert.deepEqual(resolve.asked, ["localhost"], "resolved first, as on the pinned path");
    assert.equal(receiver.requests.length, 1);
    const [request] = receiver.requests;
    assert.deepEqual([request.method, request.path, request.headers.host], [
      "POST",
      "/hook",
      "localhost",
    ]);
    // Its certificate is checked against the name: another name fails.
    const other = await deliverOnce(onDeploy("https://127.0.0.1/hook"));
    assert.deepEqual([other.status, other.error], [null, "connection"]);
    const untrusted = await deliverOnce(onDeploy(URL_443, { caCerts: undefined }));
    assert.deepEqual([untrusted.status, untrusted.error], [null, "connection"]);
    assert.equal(receiver.requests.length, 1);
  });
});

test("on the by-name path a peer that is not globally reachable is refused before any HTTP byte", async () => {
  await withReceiver(async (receiver) => {
    // A name whose lookup says public while the connection lands on loopback (DNS rebinding).
    const result = await deliverOnce(
      onDeploy(URL_443, { allowPrivate: false, resolve: resolver(["93.184.216.34"]) }),
    );
    assert.deepEqual([result.status, result.error, result.address], [
      null,
      "refused_address",
      "127.0.0.1",
    ]);
    // The TCP handshake reached the receiver (perhaps the ClientHello too): no byte of a request.
    await until(() => receiver.connections.length === 1, 2_000, "the connection");
    await sleep(100);
    assert.deepEqual(receiver.connections.map((c) => [c.bytes, c.requests]), [[0, 0]]);
    assert.equal(receiver.requests.length, 0);

    // A name that resolves to a private address is refused before any connection.
    const early = await deliverOnce(
      onDeploy(URL_443, { allowPrivate: false, resolve: resolver(["93.184.216.34", "10.0.0.1"]) }),
    );
    assert.deepEqual([early.error, early.address], ["refused_address", "10.0.0.1"]);
    await sleep(100);
    assert.equal(receiver.connections.length, 1, "no second connection");
  });
});

test("answers read the same on the by-name path: redirects, Retry-After, 410, time-outs", async () => {
  await withReceiver(async (receiver) => {
    receiver.answer((request) => {
      switch (request.path) {
        case "/redirect":
          return "HTTP/1.1 302 Found\r\nlocation: /elsewhere\r\ncontent-length: 0\r\n\r\n";
        case "/busy":
          return "HTTP/1.1 429 Too Many Requests\r\nretry-after: 120\r\ncontent-length: 0\r\n\r\n";
        case "/gone":
          return "HTTP/1.1 410 Gone\r\ncontent-length: 4\r\n\r\ngone";
        case "/silent":
          return null;
        default:
          return "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
      }
    });
    const at = (path: string, timeoutMs = 5000) =>
      deliverOnce(onDeploy(`https://localhost${path}`, { timeoutMs }));
    const redirect = await at("/redirect");
    assert.deepEqual([redirect.status, redirect.error], [302, "redirect"]);
    const busy = await at("/busy");
    assert.deepEqual([busy.status, busy.error, busy.retryAfterS], [429, null, 120]);
    const gone = await at("/gone");
    assert.deepEqual([gone.status, gone.error], [410, null]);
    const silent = await at("/silent", 300);
    assert.deepEqual([silent.status, silent.error], [null, "timeout"]);
    assert.ok(!receiver.requests.some((r) => r.path === "/elsewhere"), "no redirect followed");
  });
});

test("a runtime that refuses plain TCP to 443 once: that attempt and the next go by name", async () => {
  await withReceiver(async (receiver) => {
    const calls: string[] = [];
    const deployLike: Connector = (options) => {
      calls.push(`${options.hostname} ${options.port}`);
      return options.port === 443
        ? Promise.reject(new Deno.errors.PermissionDenied(DEPLOY_REFUSAL))
        : Deno.connect({ hostname: "127.0.0.1", port: options.port });
    };
    const sockets = new SocketRules({ deploy: false });
    assert.equal(sockets.tcpTo443, true);
    const first = await deliverOnce(onDeploy(URL_443, { sockets, connect: deployLike }));
    assert.deepEqual([first.status, first.error], [204, null]);
    assert.deepEqual(calls, ["127.0.0.1 443"]);
    assert.equal(sockets.tcpTo443, false, "remembered");
    const second = await deliverOnce(onDeploy(URL_443, { sockets, connect: deployLike }));
    assert.equal(second.status, 204);
    assert.deepEqual(calls, ["127.0.0.1 443"], "not tried again");
    assert.equal(receiver.requests.length, 2);

    // Another port is still reached on the pinned path, by the judged address.
    await withReceiver(async (elsewhere) => {
      const url = `https://localhost:${elsewhere.port}/hook`;
      const pinned = await deliverOnce(onDeploy(url, { sockets, connect: deployLike }));
      assert.deepEqual([pinned.status, pinned.address], [204, "127.0.0.1"]);
      assert.deepEqual(calls.at(-1), `127.0.0.1 ${elsewhere.port}`);
    }, 0);
  });
});

test("the pinned path to port 443 where plain TCP is allowed: connected to the judged address", async () => {
  await withReceiver(async (receiver) => {
    const sockets = new SocketRules({ deploy: false });
    const result = await deliverOnce(onDeploy(URL_443, { sockets, connect: undefined }));
    assert.deepEqual([result.status, result.address], [204, "127.0.0.1"]);
    assert.equal(sockets.tcpTo443, true);
    assert.equal(receiver.requests.length, 1);
  });
});

test("keep-alive on the by-name path reuses a connection only to an address just judged", async () => {
  await withReceiver(async (receiver) => {
    const kept = new KeptConnection();
    let answer = ["127.0.0.1"];
    const resolve = resolver([]);
    const options = (extra: Parameters<typeof local>[1] = {}) =>
      onDeploy(URL_443, {
        connection: kept,
        resolve: (name, o) => {
          void resolve(name, o);
          return Promise.resolve(answer);
        },
        ...extra,
      });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await deliverOnce(options())).status, 204);
      assert.equal(receiver.connections.length, 1, "one connection for three attempts");
      // The name now resolves elsewhere: the connection to 127.0.0.1 is not among those judged.
      answer = ["127.0.0.2"];
      for (let i = 0; i < 2; i++) {
        const moved = await deliverOnce(options());
        assert.deepEqual([moved.status, moved.address], [204, "127.0.0.1"]);
      }
      assert.equal(receiver.connections.length, 3, "a new connection each time");
      // Resolving to a refused address: refused, the kept connection unused.
      answer = ["10.0.0.1"];
      const refused = await deliverOnce(options({ allowPrivate: false }));
      assert.deepEqual([refused.error, refused.address], ["refused_address", "10.0.0.1"]);
      assert.equal(receiver.connections.length, 3);
      assert.deepEqual(receiver.connections.map((c) => c.requests), [3, 1, 1]);
    } finally {
      kept.close();
    }
  });
});

/**
 * Tests of where `deliverOnce` connects (docs/interface.md §11): only to addresses it
 * judged globally reachable, whatever a name resolves to (DNS rebinding, with
 * an injected resolver), and over TLS checked against the URL's name.
 */

import assert from "node:assert/strict";
import { type Connector, deliverOnce } from "../../src/delivery/deliver.ts";
import { local, noConnect, resolver } from "../support/deliver.ts";
import { HAS_OPENSSL, makeCertificates } from "../../testing/certificates.ts";

/** A connector that records where it was asked to connect, and connects to `port` on 127.0.0.1. */
function redirectedConnector(port: number): Connector & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign((options: { hostname: string; port: number }) => {
    calls.push(`${options.hostname} ${options.port}`);
    return Deno.connect({ hostname: "127.0.0.1", port });
  }, { calls });
}

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

Deno.test("deliverOnce refuses, without connecting, a name that resolves to a private address", async () => {
  for (
    const answer of [
      ["10.0.0.5"],
      ["127.0.0.1"],
      ["169.254.169.254"],
      ["::1"],
      ["::ffff:127.0.0.1"],
      ["fd00::1"],
      ["93.184.216.34", "192.168.1.10"], // one public, one private: refused all the same
      ["2606:2800:220:1:248:1893:25c8:1946", "64:ff9b::a9fe:a9fe"],
      ["not an address"],
    ]
  ) {
    const resolve = resolver(answer);
    const result = await deliverOnce({
      ...local("https://hooks.example/in"),
      allowPrivate: false,
      resolve,
      connect: noConnect,
    });
    assert.deepEqual([result.status, result.error], [null, "refused_address"], answer.join());
    assert.equal(
      result.address,
      answer.find((a) => !a.startsWith("93.") && !a.startsWith("2606:")),
    );
    assert.deepEqual(resolve.asked, ["hooks.example"]);
  }
});

Deno.test("deliverOnce refuses a URL whose host is a private address, unless private addresses are allowed", async () => {
  const { server, base, hits } = statusReceiver();
  await using _ = server;
  const refused = await deliverOnce({ ...local(`${base}/status/200`), allowPrivate: false });
  assert.deepEqual([refused.status, refused.error, refused.address], [
    null,
    "refused_address",
    "127.0.0.1",
  ]);
  assert.deepEqual(hits, []);
  const allowed = await deliverOnce(local(`${base}/status/200`));
  assert.equal(allowed.status, 200);
  const port = new URL(base).port;
  const mapped = await deliverOnce({
    ...local(`http://[::ffff:127.0.0.1]:${port}/`),
    allowPrivate: false,
  });
  assert.equal(mapped.error, "refused_address");
});

Deno.test("deliverOnce connects to the checked address, not the name, and tries the next on failure", async () => {
  const { server, hits } = statusReceiver();
  await using _ = server;
  const connect = redirectedConnector(server.addr.port);
  const result = await deliverOnce({
    ...local("http://hooks.example:8080/status/204"),
    allowPrivate: false,
    resolve: resolver(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]),
    connect,
  });
  assert.deepEqual([result.status, result.error, result.address], [204, null, "93.184.216.34"]);
  assert.deepEqual(connect.calls, ["93.184.216.34 8080"]);
  assert.deepEqual(hits, ["/status/204"]);

  const calls: string[] = [];
  const firstRefuses: Connector = (options) => {
    calls.push(options.hostname);
    return calls.length === 1
      ? Promise.reject(new Deno.errors.ConnectionRefused("refused"))
      : Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  };
  const second = await deliverOnce({
    ...local("http://hooks.example/"),
    allowPrivate: false,
    resolve: resolver(["93.184.216.34", "93.184.216.35"]),
    connect: firstRefuses,
  });
  assert.deepEqual([second.status, second.address], [200, "93.184.216.35"]);
  assert.deepEqual(calls, ["93.184.216.34", "93.184.216.35"]);
});

Deno.test({
  name:
    "deliverOnce speaks TLS to the checked address and checks the certificate against the URL's name",
  ignore: !HAS_OPENSSL,
  async fn() {
    const certs = await makeCertificates("hooks.test");
    await Deno.remove(certs.dir, { recursive: true });
    const { ca, cert, key } = certs;
    const seen: string[] = [];
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
      (request) => {
        seen.push(`${request.headers.get("host")} ${new URL(request.url).pathname}`);
        return new Response(null, { status: 204 });
      },
    );
    const port = server.addr.port;
    const resolve = resolver(["127.0.0.1"]);
    const ok = await deliverOnce(
      local(`https://hooks.test:${port}/in`, { resolve, caCerts: [ca] }),
    );
    assert.deepEqual([ok.status, ok.error, ok.address], [204, null, "127.0.0.1"]);
    assert.deepEqual(seen, [`hooks.test:${port} /in`]);
    assert.deepEqual(resolve.asked, ["hooks.test"]);

    // The same server, named otherwise: its certificate does not name that host.
    const other = await deliverOnce(
      local(`https://other.test:${port}/in`, { resolve, caCerts: [ca] }),
    );
    assert.deepEqual([other.status, other.error], [null, "connection"]);
    // Addressed by IP: the certificate names no address.
    const byAddress = await deliverOnce(local(`https://127.0.0.1:${port}/in`, { caCerts: [ca] }));
    assert.deepEqual([byAddress.status, byAddress.error], [null, "connection"]);
    // Its authority unknown: the platform's roots do not include the test CA.
    const untrusted = await deliverOnce(local(`https://hooks.test:${port}/in`, { resolve }));
    assert.deepEqual([untrusted.status, untrusted.error], [null, "connection"]);
    assert.equal(seen.length, 1);
  },
});

Deno.test("deliverOnce fails with connection when an https URL reaches a server without TLS", async () => {
  const { server } = statusReceiver();
  await using _ = server;
  const url = `https://hooks.test:${server.addr.port}/`;
  const result = await deliverOnce(
    local(url, { resolve: resolver(["127.0.0.1"]), timeoutMs: 2000 }),
  );
  assert.deepEqual([result.status, result.error], [null, "connection"]);
});

Deno.test("deliverOnce sends nothing in plain text once http: is not allowed: refused_url before resolving", async () => {
  const { server, base, hits } = statusReceiver();
  await using _ = server;
  const resolve = resolver(["127.0.0.1"]);
  for (const url of [`${base}/status/204`, "http://hooks.example/in"]) {
    const result = await deliverOnce({
      ...local(url),
      allowHttp: false,
      resolve,
      connect: noConnect,
    });
    assert.deepEqual([result.status, result.error, result.address], [
      null,
      "refused_url",
      undefined,
    ]);
  }
  assert.deepEqual(resolve.asked, []);
  assert.deepEqual(hits, []);
  // Allowed again, the same http: URL is delivered.
  const allowed = await deliverOnce(local(`${base}/status/204`));
  assert.deepEqual([allowed.status, allowed.error], [204, null]);
});

/**
 * The KV Connect server of `testing/kv_connect/`, each test against a server
 * process of its own: through Deno's own client (`Deno.openKv(url)`) for what
 * the service relies on, and through raw requests for what Deno's client
 * refuses before sending (over 1000 mutations, values over 64 KiB) and for
 * denokv's error answers.
 */

import assert from "node:assert/strict";
import {
  callDataPath,
  dataPathHeaders,
  decodeAtomicWriteOutput,
  encodeAtomicWrite,
  encodeWatch,
  type RawMutation,
  watchFrames,
} from "../../testing/kv_connect/raw_client.ts";
import {
  type StartedKvConnectServer,
  startKvConnectServer,
} from "../../testing/kv_connect/start.ts";
import { KV_CONNECT_TOKEN, needsKvConnect } from "../support/stores.ts";
import { within } from "../support/time.ts";

/**
 * Opens Deno's KV Connect client on `server`. Every server of these tests
 * has the token the other test files use ({@link KV_CONNECT_TOKEN}): the
 * variable Deno's client reads is the process's, shared by test files run
 * in parallel, so it is never set to another value here.
 */
function openRemote(server: StartedKvConnectServer): Promise<Deno.Kv> {
  Deno.env.set("DENO_KV_ACCESS_TOKEN", server.token);
  return Deno.openKv(server.url);
}

/** A KV Connect server for these tests, on a file of its own or `path`. */
function startServer(options: { path?: string; loseAnswers?: number } = {}) {
  return startKvConnectServer({ ...options, token: KV_CONNECT_TOKEN });
}

async function withServer(
  fn: (server: StartedKvConnectServer, kv: Deno.Kv) => Promise<void>,
): Promise<void> {
  const server = await startServer();
  try {
    const kv = await openRemote(server);
    try {
      await fn(server, kv);
    } finally {
      kv.close();
    }
  } finally {
    await server.close();
  }
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test(
  "kv-connect: get, set, delete and list through Deno.openKv",
  needsKvConnect(),
  async () => {
    await withServer(async (_server, kv) => {
      assert.equal((await kv.get(["missing"])).value, null);
      const set = await kv.set(["users", "b"], { name: "Bo" });
      assert.ok(set.ok);
      await kv.set(["users", "a"], { name: "Al" });
      await kv.set(["users", "c"], { name: "Cy" });
      const got = await kv.get<{ name: string }>(["users", "b"]);
      assert.deepEqual(got.value, { name: "Bo" });
      assert.equal(got.versionstamp, set.versionstamp);

      const listed = await Array.fromAsync(kv.list<{ name: string }>({ prefix: ["users"] }));
      assert.deepEqual(listed.map((e) => e.key), [["users", "a"], ["users", "b"], ["users", "c"]]);
      const reversed = await Array.fromAsync(
        kv.list({ prefix: ["users"] }, { reverse: true, limit: 2 }),
      );
      assert.deepEqual(reversed.map((e) => e.key), [["users", "c"], ["users", "b"]]);

      await kv.delete(["users", "b"]);
      assert.equal((await kv.get(["users", "b"])).value, null);
      const many = await kv.getMany([["users", "a"], ["users", "b"]]);
      assert.deepEqual(many.map((e) => e.value), [{ name: "Al" }, null]);
    });
  },
);

Deno.test(
  "kv-connect: an atomic commit whose check saw a stale versionstamp fails",
  needsKvConnect(),
  async () => {
    await withServer(async (_server, kv) => {
      const first = await kv.set(["doc"], 1);
      const seen = await kv.get(["doc"]);
      assert.equal(seen.versionstamp, first.versionstamp);
      await kv.set(["doc"], 2);
      const stale = await kv.atomic().check(seen).set(["doc"], 3).commit();
      assert.equal(stale.ok, false);
      assert.equal((await kv.get(["doc"])).value, 2);

      const fresh = await kv.get(["doc"]);
      const ok = await kv.atomic().check(fresh).set(["doc"], 4).commit();
      assert.ok(ok.ok);
      const absent = await kv.atomic().check({ key: ["doc"], versionstamp: null }).set(["doc"], 5)
        .commit();
      assert.equal(absent.ok, false);
      assert.equal((await kv.get(["doc"])).value, 4);
    });
  },
);

Deno.test(
  "kv-connect: Deno.KvU64 sums add up, and a sum on a non-u64 value is refused",
  needsKvConnect(),
  async () => {
    await withServer(async (_server, kv) => {
      await kv.atomic().sum(["count"], 5n).commit();
      await kv.atomic().sum(["count"], 7n).commit();
      const count = await kv.get<Deno.KvU64>(["count"]);
      assert.ok(count.value instanceof Deno.KvU64);
      assert.equal(count.value.value, 12n);

      await kv.set(["text"], "not a number");
      await assert.rejects(
        () => kv.atomic().sum(["text"], 1n).commit(),
        /status=400.*non-U64/,
      );
    });
  },
);

Deno.test(
  "kv-connect: kv.watch sees a write from another handle and from another process",
  needsKvConnect(),
  async () => {
    await withServer(async (server, kv) => {
      const other = await openRemote(server);
      const reader = kv.watch([["watched"]]).getReader();
      try {
        const initial = await within(reader.read(), 5_000, "initial watch entry");
        assert.equal(initial.value?.[0].value, null);

        await other.set(["watched"], "from another handle");
        const fromHandle = await within(reader.read(), 5_000, "change from a handle");
        assert.equal(fromHandle.value?.[0].value, "from another handle");

        const child = new Deno.Command(Deno.execPath(), {
          args: [
            "eval",
            "--unstable-kv",
            `const kv = await Deno.openKv(${JSON.stringify(server.url)});
           await kv.set(["watched"], "from another process");
           kv.close();`,
          ],
          env: { DENO_KV_ACCESS_TOKEN: server.token },
          stdout: "null",
          stderr: "piped",
        });
        const result = await child.output();
        assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
        const fromProcess = await within(reader.read(), 5_000, "change from a process");
        assert.equal(fromProcess.value?.[0].value, "from another process");
      } finally {
        await reader.cancel();
        other.close();
      }
    });
  },
);

Deno.test("kv-connect: a wrong access token is refused", needsKvConnect(), async () => {
  const server = await startServer();
  try {
    // Deno's client in a process of its own, whose variable holds the wrong token (Deno 2.9
    // refuses at openKv; Deno 2.5 opens and refuses the first call).
    const client = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--unstable-kv",
        `const kv = await Deno.openKv(${JSON.stringify(server.url)}); await kv.get(["a"]);`,
      ],
      env: { DENO_KV_ACCESS_TOKEN: "not-the-right-token" },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(client.success, false);
    assert.match(new TextDecoder().decode(client.stderr), /Invalid access token/);

    const metadata = await fetch(server.url, {
      method: "POST",
      headers: { authorization: "Bearer not-the-right-token", "content-type": "application/json" },
      body: JSON.stringify({ supportedVersions: [2, 3] }),
    });
    assert.equal(metadata.status, 401);
    assert.equal(await metadata.text(), "Invalid access token.");
    const call = await callDataPath(
      server,
      "snapshot_read",
      new Uint8Array(),
      dataPathHeaders("not-the-right-token"),
    );
    assert.equal(call.status, 401);
    assert.equal(call.text, "Invalid access token.");
  } finally {
    await server.close();
  }
});

Deno.test(
  "kv-connect: 10 checks commit, 11 are refused as denokv refuses them",
  needsKvConnect(),
  async () => {
    await withServer(async (_server, kv) => {
      const checks = Array.from({ length: 11 }, (_, i) => ({ key: ["c", i], versionstamp: null }));
      const ten = await kv.atomic().check(...checks.slice(0, 10)).set(["ten"], true).commit();
      assert.ok(ten.ok);
      // Deno's client allows 100 checks; the refusal is the server's.
      await assert.rejects(
        () => kv.atomic().check(...checks).set(["eleven"], true).commit(),
        /status=400.*Too many checks included in atomic write\./,
      );
      assert.equal((await kv.get(["eleven"])).value, null);
    });
  },
);

Deno.test("kv-connect: 1000 mutations commit, 1001 are refused", needsKvConnect(), async () => {
  await withServer(async (server, kv) => {
    const thousand = kv.atomic();
    for (let i = 0; i < 1000; i++) thousand.set(["m", i], i);
    assert.ok((await thousand.commit()).ok);
    assert.equal((await Array.fromAsync(kv.list({ prefix: ["m"] }))).length, 1000);

    // Deno's client refuses 1001 itself, before sending anything...
    const client = kv.atomic();
    for (let i = 0; i < 1001; i++) client.set(["n", i], i);
    await assert.rejects(() => client.commit(), /Too many mutations/);
    // ...and the server refuses them too.
    const mutations = (n: number): RawMutation[] =>
      Array.from({ length: n }, (_, i) => ({ key: bytes(`raw-${i}`), value: bytes("v") }));
    const refused = await callDataPath(
      server,
      "atomic_write",
      encodeAtomicWrite({ mutations: mutations(1001) }),
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.text, "Too many mutations / enqueues included in atomic write.");
    const accepted = await callDataPath(
      server,
      "atomic_write",
      encodeAtomicWrite({ mutations: mutations(1000) }),
    );
    assert.equal(accepted.status, 200);
    assert.equal(decodeAtomicWriteOutput(accepted.body).status, 1);
  });
});

Deno.test(
  "kv-connect: values over 64 KiB and keys over 2 KiB are refused",
  needsKvConnect(),
  async () => {
    await withServer(async (server, kv) => {
      assert.ok((await kv.set(["big"], new Uint8Array(65536))).ok);
      await assert.rejects(() => kv.set(["big"], new Uint8Array(65537)), /Value too large/);

      const write = (key: Uint8Array, value: Uint8Array) =>
        callDataPath(server, "atomic_write", encodeAtomicWrite({ mutations: [{ key, value }] }));
      const tooBig = await write(bytes("raw"), new Uint8Array(65537));
      assert.equal(tooBig.status, 400);
      assert.equal(tooBig.text, "A value exceeds the value size limit.");
      assert.equal((await write(bytes("raw"), new Uint8Array(65536))).status, 200);
      const longKey = await write(new Uint8Array(2049).fill(0x61), bytes("v"));
      assert.equal(longKey.status, 400);
      assert.equal(longKey.text, "A key exceeds the key size limit.");
      // 13 values of 64 KiB pass one by one, but not as one 832 KiB write.
      const mutations = Array.from({ length: 13 }, (_, i) => ({
        key: bytes(`part-${i}`),
        value: new Uint8Array(65536),
      }));
      const total = await callDataPath(server, "atomic_write", encodeAtomicWrite({ mutations }));
      assert.equal(total.status, 400);
      assert.equal(total.text, "The total size of the atomic write is too large.");
    });
  },
);

Deno.test(
  "kv-connect: data persists across a server restart on the same file",
  needsKvConnect(),
  async () => {
    const first = await startServer();
    let versionstamp: string;
    try {
      const kv = await openRemote(first);
      versionstamp = (await kv.set(["kept"], { across: "restart" })).versionstamp;
      await kv.atomic().sum(["counter"], 3n).commit();
      kv.close();
    } finally {
      await first.close();
    }
    const second = await startServer({ path: first.path });
    try {
      assert.notEqual(second.url, first.url);
      const kv = await openRemote(second);
      const kept = await kv.get(["kept"]);
      assert.deepEqual(kept.value, { across: "restart" });
      assert.equal(kept.versionstamp, versionstamp);
      await kv.atomic().sum(["counter"], 4n).commit();
      assert.equal((await kv.get<Deno.KvU64>(["counter"])).value?.value, 7n);
      kv.close();
    } finally {
      await second.close();
    }
  },
);

Deno.test(
  "kv-connect: the metadata exchange negotiates version 3 or 2, as denokv does",
  needsKvConnect(),
  async () => {
    const server = await startServer();
    try {
      const exchange = (body: string | null, token = server.token) =>
        fetch(server.url, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body,
        });
      const v3 = await exchange(JSON.stringify({ supportedVersions: [1, 2, 3] }));
      assert.equal(v3.status, 200);
      const meta = await v3.json();
      assert.equal(meta.version, 3);
      assert.equal(meta.databaseId, "00000000-0000-0000-0000-000000000000");
      assert.deepEqual(meta.endpoints, [{ url: "/v2", consistency: "strong" }]);
      assert.equal(meta.token, server.token);
      assert.ok(Date.parse(meta.expiresAt) > Date.now() + 23 * 3600_000);

      assert.equal(
        (await (await exchange(JSON.stringify({ supportedVersions: [2] }))).json()).version,
        2,
      );
      const v1 = await exchange(JSON.stringify({ supportedVersions: [1] }));
      assert.equal(v1.status, 400);
      assert.match(await v1.text(), /could not negotiate a protocol version/);
      const none = await exchange(null);
      assert.equal(none.status, 400);
      assert.match(await none.text(), /requires at least protocol version 2/);
    } finally {
      await server.close();
    }
  },
);

Deno.test("kv-connect: the data path answers denokv's errors", needsKvConnect(), async () => {
  const server = await startServer();
  try {
    const read = (headers: Record<string, string>, body = new Uint8Array()) =>
      callDataPath(server, "snapshot_read", body, { ...dataPathHeaders(server.token), ...headers });
    const noVersion = await read({ "x-denokv-version": "1" });
    assert.deepEqual([noVersion.status, noVersion.text], [400, "Expected protocol version 2."]);
    const otherDb = await read({ "x-denokv-database-id": crypto.randomUUID() });
    assert.deepEqual([otherDb.status, otherDb.text], [400, "Invalid database id."]);
    const noBearer = await read({ authorization: "Basic" });
    assert.deepEqual([noBearer.status, noBearer.text], [401, "Malformed authorization header."]);
    const garbage = await read({}, new Uint8Array([0xff, 0xff]));
    assert.equal(garbage.status, 400);
    assert.match(garbage.text, /^Request protobuf is invalid: failed to decode Protobuf message/);

    const unknown = await fetch(`${server.url}/v2/nothing`, { method: "POST" });
    assert.deepEqual([unknown.status, await unknown.text()], [404, "Resource not found."]);
    const wrongMethod = await fetch(`${server.url}/v2/snapshot_read`);
    await wrongMethod.body?.cancel();
    assert.equal(wrongMethod.status, 405);
  } finally {
    await server.close();
  }
});

Deno.test(
  "kv-connect: a raw watch streams framed outputs, keep-alives, and refuses 11 keys",
  needsKvConnect(),
  async () => {
    const server = await startServer();
    try {
      const watch = (keys: Uint8Array[]) =>
        fetch(`${server.url}/v2/watch`, {
          method: "POST",
          headers: dataPathHeaders(server.token),
          body: encodeWatch(keys) as Uint8Array<ArrayBuffer>,
        });
      const eleven = await watch(Array.from({ length: 11 }, (_, i) => bytes(`k${i}`)));
      assert.equal(eleven.status, 400);
      assert.equal(await eleven.text(), "Too many keys watched in a single watch request.");
      const longKey = await watch([new Uint8Array(2049)]);
      assert.equal(longKey.status, 400);
      assert.equal(await longKey.text(), "A key exceeds the key size limit.");

      const response = await watch([bytes("w")]);
      assert.equal(response.status, 200);
      assert.ok(response.body);
      const frames = watchFrames(response.body);
      try {
        const first = await within(frames.next(), 5_000, "first frame");
        assert.ok(first.value && first.value.length > 0, "the first frame carries the key's state");
        const write = await callDataPath(
          server,
          "atomic_write",
          encodeAtomicWrite({ mutations: [{ key: bytes("w"), value: bytes("hello") }] }),
        );
        assert.equal(write.status, 200);
        const change = await within(frames.next(), 5_000, "change frame");
        const text = new TextDecoder().decode(change.value);
        assert.ok(text.includes("hello"), "the change frame carries the new value");
        // denokv sends an empty frame every 5 s.
        const keepalive = await within(frames.next(), 7_000, "keep-alive frame");
        assert.equal(keepalive.value?.length, 0);
      } finally {
        await frames.return(undefined);
      }
    } finally {
      await server.close();
    }
  },
);

Deno.test(
  "kv-connect: a lost answer leaves the write applied; Deno's client sends it again, and its checks fail",
  needsKvConnect(),
  async () => {
    const server = await startServer({ loseAnswers: 2 });
    const kv = await openRemote(server);
    try {
      // The first write is answered; the second is applied, its answer lost, and sent again.
      assert.equal((await kv.set(["first"], 1)).ok, true);
      const result = await kv.atomic().check({ key: ["second"], versionstamp: null })
        .set(["second"], 2).commit();
      assert.equal(result.ok, false);
      assert.equal((await kv.get(["second"])).value, 2);
    } finally {
      kv.close();
      await server.close();
    }
  },
);

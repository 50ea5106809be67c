/**
 * Readiness end to end (docs/interface.md §7): when the storage cannot write — a full
 * disk, a KV file the process may only read, another process holding the
 * SQLite lock past the retries — a submission is 503 `unavailable` (nothing
 * stored, retryable), `/readyz` is 503 with the reason while `/healthz` stays
 * 200, and the log line keeps the storage's own error. Once the storage can
 * write again the next submission is 201 and `/readyz` 200, without a restart.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { generateEd25519Key, IntentsClient, signVariantB } from "../../client/mod.ts";
import { logLineOf, startServer, type TestServer } from "../support/server.ts";
import { holdWriteLock } from "../support/sqlite_lock.ts";
import { fillDisk, withTmpfs } from "../support/tmpfs.ts";

const key = generateEd25519Key();

/** A signed Variant B body with a fresh id and `padding` bytes of attributes. */
function body(policyId: string, padding = 0): { id: string; text: string } {
  const id = crypto.randomUUID();
  const attrs = { fields: { padding: "p".repeat(padding) } };
  return { id, text: JSON.stringify(signVariantB({ id, policy_id: policyId, attrs }, key)) };
}

function submit(server: TestServer, text: string): Promise<Response> {
  return fetch(`${server.url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: text,
  });
}

async function status(server: TestServer, path: string): Promise<[number, unknown]> {
  const response = await fetch(`${server.url}${path}`);
  return [response.status, await response.json()];
}

async function assertReady(server: TestServer): Promise<void> {
  assert.deepEqual(await status(server, "/readyz"), [200, { status: "ready" }]);
  assert.deepEqual(await status(server, "/healthz"), [200, { status: "ok" }]);
}

/** `/readyz` is 503 with the reason while `/healthz` stays 200. */
async function assertNotReady(server: TestServer, reason: string): Promise<void> {
  assert.deepEqual(await status(server, "/readyz"), [503, {
    message: `the last commit failed: ${reason}`,
    code: "unavailable",
  }]);
  assert.deepEqual(await status(server, "/healthz"), [200, { status: "ok" }]);
}

/** The submission is 503 `unavailable` naming `reason`, and its log line keeps `cause`. */
async function assertRefused(
  server: TestServer,
  response: Response,
  reason: string,
  cause: RegExp,
): Promise<void> {
  assert.equal(response.status, 503);
  const requestId = response.headers.get("x-request-id");
  assert.deepEqual(await response.json(), {
    message: `the service cannot store this now (${reason}); try again later`,
    code: "unavailable",
  });
  const line = await logLineOf(server, requestId!);
  assert.equal(line.status, 503);
  assert.match(String(line.error), cause);
}

async function policyOf(server: TestServer, text: string): Promise<string> {
  return (await new IntentsClient({ url: server.url, token: server.adminToken }).addPolicy(text))
    .id;
}

Deno.test("a full disk: 503 unavailable and not ready; room again: 201 and ready, without a restart", async () => {
  await withTmpfs("2m", async (dir) => {
    const server = await startServer({ kvPath: join(dir, "intents.kv") });
    try {
      const policyId = await policyOf(server, `{"readiness":"full"}`);
      assert.equal((await submit(server, body(policyId).text)).status, 201);
      await assertReady(server);

      const filler = join(dir, "filler");
      await fillDisk(filler);
      // What is left of the database's own pages may take a few more; then the disk is full.
      let refused: { id: string; text: string; response: Response } | undefined;
      for (let i = 0; i < 200 && !refused; i++) {
        const next = body(policyId, 8_000);
        const response = await submit(server, next.text);
        if (response.status === 201) await response.body?.cancel();
        else refused = { ...next, response };
      }
      assert.ok(refused, "the disk never filled");
      await assertRefused(server, refused.response, "storage full", /database or disk is full/);
      await assertNotReady(server, "storage full");

      await Deno.remove(filler);
      // The same body, sent again, is stored: the 503 stored nothing.
      const again = await submit(server, refused.text);
      assert.equal(again.status, 201, await again.clone().text());
      assert.equal((await again.json()).id, refused.id);
      await assertReady(server);
    } finally {
      await server.stop();
    }
  });
});

/**
 * How to start a server that may not write a file it does not own: as
 * root, without the capability that overrides file permissions; otherwise as
 * is. Null when neither can be done.
 */
async function withoutWriteOverride(): Promise<string[] | null> {
  if (Deno.uid() !== 0) return [];
  const drop = ["--inh-caps=-dac_override,-fowner", "--bounding-set=-dac_override,-fowner"];
  const probe = await new Deno.Command("setpriv", { args: [...drop, "--", "true"] }).output()
    .catch(() => null);
  return probe?.success ? ["setpriv", ...drop, "--"] : null;
}

Deno.test("a KV file the process may only read: 503 unavailable and not ready, reads still served", async () => {
  const wrapper = await withoutWriteOverride();
  if (wrapper === null) {
    console.log("skipped: running as root and setpriv cannot drop the file-permission override");
    return;
  }
  let server = await startServer();
  const { kvPath } = server;
  try {
    const policyId = await policyOf(server, `{"readiness":"read-only"}`);
    const first = body(policyId);
    assert.equal((await submit(server, first.text)).status, 201);
    await server.stop();

    await Deno.chmod(kvPath, 0o444);
    server = await startServer({ kvPath, wrapper });
    await assertRefused(
      server,
      await submit(server, body(policyId).text),
      "storage is read-only",
      /read-only database|readonly database/,
    );
    await assertNotReady(server, "storage is read-only");
    const read = await fetch(`${server.url}/intents/${first.id}`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    assert.equal(read.status, 200, await read.text());
  } finally {
    await server.stop();
    await Deno.remove(dirname(kvPath), { recursive: true });
  }
});

Deno.test("another process holding the lock past the retries: 503 unavailable and not ready; released: 201 and ready", async () => {
  const server = await startServer();
  try {
    const policyId = await policyOf(server, `{"readiness":"locked"}`);
    await assertReady(server);
    const lock = await holdWriteLock(server.kvPath);
    let refused;
    try {
      refused = body(policyId);
      await assertRefused(
        server,
        await submit(server, refused.text),
        "storage is locked by another process",
        /database is locked/,
      );
      await assertNotReady(server, "storage is locked by another process");
    } finally {
      await lock.release();
    }
    assert.equal((await submit(server, refused.text)).status, 201);
    await assertReady(server);
  } finally {
    await server.stop();
    await Deno.remove(dirname(server.kvPath), { recursive: true });
  }
});

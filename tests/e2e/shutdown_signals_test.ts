/**
 * Shutdown end to end (docs/interface.md §2 `SHUTDOWN_TIMEOUT_MS`): on SIGTERM or
 * SIGINT the server stops accepting, answers clients stalled inside their
 * bodies with 503 `unavailable` and `Connection: close`, lets in-flight
 * submissions finish their commit, ends event streams, and exits 0 within the
 * bound; every submission answered 201 is stored, as a restart on the same
 * store shows. A commit held up past the bound does not hold the exit. The
 * first two on a KV file and over KV Connect; the last holds a SQLite write
 * lock on the KV file, which only a local file has.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { generateEd25519Key, IntentsClient, signVariantB } from "../../client/mod.ts";
import { auditIntents } from "../support/audit.ts";
import { startServer, type TestServer } from "../support/server.ts";
import { holdWriteLock } from "../support/sqlite_lock.ts";
import { storeTest } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

const BOUND_MS = 1500;
/** Room for the process to end and the test to see it, beyond the bound. */
const EXIT_SLACK_MS = 1000;
const STALLED = 4;
const WORKERS = 16;

const encoder = new TextEncoder();
const key = generateEd25519Key();

/**
 * Opens a connection, sends the headers of a `POST /intents` and part of its
 * body, and stalls.
 *
 * @returns `answer`: everything the server sends on it, once it closes.
 */
async function stalledSubmission(port: number): Promise<{ answer: Promise<string> }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(encoder.encode(
    "POST /intents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      'Content-Length: 2000\r\n\r\n{"authorship": "Unsigned", "intent": {',
  ));
  const answer = (async () => {
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(4096);
    let text = "";
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) break;
        text += decoder.decode(buffer.subarray(0, n), { stream: true });
      }
    } catch {
      // A reset connection counts as closed.
    } finally {
      conn.close();
    }
    return text;
  })();
  return { answer };
}

/** Opens an event stream and reads it; `ended` resolves when it ends, cut or not. */
async function openEventStream(server: TestServer): Promise<{ ended: Promise<void> }> {
  const response = await fetch(`${server.url}/events`, {
    headers: { accept: "text/event-stream", authorization: `Bearer ${server.adminToken}` },
  });
  assert.equal(response.status, 200);
  const ended = (async () => {
    try {
      for await (const _ of response.body!) { /* events and keep-alives */ }
    } catch {
      // Cut: the exit message below tells whether the server ended it first.
    }
  })();
  return { ended };
}

/** Submits fresh intents from `WORKERS` connections until the server stops answering. */
function submitUntilStopped(server: TestServer, policyId: string) {
  const accepted = new Map<string, string>();
  const unexpected: string[] = [];
  const http = Deno.createHttpClient({});
  const worker = async () => {
    for (;;) {
      const id = crypto.randomUUID();
      const body = signVariantB({ id, policy_id: policyId, attrs: { fields: { id } } }, key);
      let response: Response;
      try {
        response = await fetch(`${server.url}/intents`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          client: http,
        });
      } catch {
        return; // The server stopped accepting or went away: no answer, nothing promised.
      }
      const text = await response.text().catch(() => null);
      if (text === null) return;
      if (response.status === 201) {
        accepted.set(id, text);
      } else if (response.status !== 503 || JSON.parse(text).code !== "unavailable") {
        unexpected.push(`${response.status} ${text}`);
      }
    }
  };
  const done = Promise.all(Array.from({ length: WORKERS }, worker)).finally(() => http.close());
  return { accepted, unexpected, done };
}

storeTest(
  "SIGTERM under load with clients stalled in their bodies: 503 to those, exit 0 within the bound, every 201 stored",
  async (store) => {
    const env = { SHUTDOWN_TIMEOUT_MS: String(BOUND_MS) };
    const kvPath = store.kvPath;
    let server = await startServer({ env, kvPath });
    try {
      const admin = new IntentsClient({ url: server.url, token: server.adminToken });
      const policyId = (await admin.addPolicy(`{"shutdown":"policy"}`)).id;
      const stream = await openEventStream(server);
      const stalled = await Promise.all(
        Array.from({ length: STALLED }, () => stalledSubmission(server.port)),
      );
      const load = submitUntilStopped(server, policyId);
      while (load.accepted.size < 200) await sleep(20);

      const { code, ms } = await server.terminate("SIGTERM");
      assert.equal(code, 0, server.stderr());
      assert.ok(ms < BOUND_MS + EXIT_SLACK_MS, `exited ${Math.round(ms)} ms after SIGTERM`);
      assert.match(server.stderr(), /every request was answered/);
      await load.done;
      // Submissions in flight at the signal were answered, not cut: every 201 the server wrote
      // reached its client (whether any was in flight at that moment is up to the machine).
      const lines = server.stdout().trim().split("\n").map((line) => JSON.parse(line));
      const written = lines.filter((line) =>
        line.method === "POST" && line.path === "/intents" && line.status === 201
      );
      assert.equal(written.length, load.accepted.size, "a 201 written was not received");
      await stream.ended;
      assert.deepEqual(load.unexpected, []);

      const answers = await Promise.all(stalled.map((s) => s.answer));
      assert.ok(answers.some((answer) => answer !== ""), "no stalled client was answered");
      for (const answer of answers) {
        if (answer === "") continue; // closed without an answer: also allowed
        const [head, body] = answer.split("\r\n\r\n");
        assert.match(head, /^HTTP\/1\.1 503 /);
        assert.match(head, /\r\nconnection: close\r\n/i);
        assert.equal(JSON.parse(body).code, "unavailable");
      }
      // The log was flushed: a line for each stalled client's 503.
      assert.ok(lines.filter((line) => line.status === 503).length >= 1, "the 503s are logged");

      server = await startServer({ env, kvPath });
      const http = Deno.createHttpClient({});
      try {
        const ids = [...load.accepted.keys()];
        for (let i = 0; i < ids.length; i += 50) {
          await Promise.all(
            ids.slice(i, i + 50).map(async (id) => {
              const response = await fetch(`${server.url}/intents/${id}`, {
                headers: { authorization: `Bearer ${server.adminToken}` },
                client: http,
              });
              assert.equal(response.status, 200, `accepted ${id} is missing`);
              assert.deepEqual(await response.json(), JSON.parse(load.accepted.get(id)!));
            }),
          );
        }
      } finally {
        http.close();
      }
    } finally {
      await server.stop();
    }
    const kv = await store.open();
    try {
      await auditIntents(kv);
    } finally {
      kv.close();
    }
  },
);

storeTest("SIGINT with idle keep-alive connections only: exits 0 at once", async (store) => {
  const server = await startServer({
    env: { SHUTDOWN_TIMEOUT_MS: "60000" },
    kvPath: store.kvPath,
  });
  const http = Deno.createHttpClient({});
  try {
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${server.url}/healthz`, { client: http });
      assert.equal(response.status, 200, await response.text());
    }
    const { code, ms } = await server.terminate("SIGINT");
    assert.equal(code, 0, server.stderr());
    // Far below the bound: idle connections do not hold the exit.
    assert.ok(ms < 10_000, `exited ${Math.round(ms)} ms after SIGINT`);
    assert.match(server.stderr(), /every request was answered/);
  } finally {
    http.close();
    await server.stop();
  }
});

// On a KV file only: the write is held up by a SQLite write lock on the file, which a KV
// Connect store (denokv's own database, behind its server) gives no other process.
Deno.test("a write held up by another process's lock does not hold the exit past the bound", async () => {
  const server = await startServer({ env: { SHUTDOWN_TIMEOUT_MS: String(BOUND_MS) } });
  const lock = await holdWriteLock(server.kvPath);
  try {
    // A plain write of the configuration waits for the lock (SQLite gives up after about 5 s).
    const held = fetch(`${server.url}/config`, {
      method: "PUT",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${server.adminToken}`,
      },
      body: JSON.stringify({ evidence_extractor_url: "" }),
    }).then((response) => response.text(), () => null);
    // Time for the request to reach the server on a busy machine, well within SQLite's 5 s.
    await sleep(1_000);
    const { code, ms } = await server.terminate("SIGTERM");
    assert.equal(code, 0, server.stderr());
    assert.ok(ms < BOUND_MS + EXIT_SLACK_MS, `exited ${Math.round(ms)} ms after SIGTERM`);
    assert.match(server.stderr(), /1500 ms bound; requests still unanswered: 1/);
    assert.equal(await held, null, "the held write got no answer");
  } finally {
    await lock.release();
    await server.stop();
    await Deno.remove(dirname(server.kvPath), { recursive: true });
  }
});

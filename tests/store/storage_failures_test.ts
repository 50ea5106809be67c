/**
 * Storage failures on real Deno KV files: a full disk (a small tmpfs, root
 * only) and a lock held by another SQLite connection are the port's
 * `StorageUnavailableError`, carrying the KV error; other errors stay as they
 * are. The store remembers its latest commit attempt, which `/readyz` reads
 * (`tests/app/readyz_last_commit_test.ts`).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { StorageUnavailableError } from "../../src/domain/store.ts";
import { storageFailureOf } from "../../src/storage/commits.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { fillDisk, withTmpfs } from "../support/tmpfs.ts";

const doc = (n: number) => ({
  contentType: "application/json",
  bytes: new TextEncoder().encode(`{"n":${n},"pad":"${"x".repeat(4000)}"}`),
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the write to fail");
}

Deno.test("storageFailureOf names the failures Deno KV reports, and nothing else", () => {
  const cases: [string, string | null][] = [
    ["database or disk is full", "full"],
    ["Can not write to a read-only database.", "read_only"],
    ["attempt to write a readonly database", "read_only"],
    ["database is locked", "locked"],
    ["disk I/O error", "io"],
    ["Value too large (max 65536 bytes)", null],
    ["BadResource: Bad resource ID", null],
  ];
  for (const [message, failure] of cases) {
    assert.equal(storageFailureOf(new TypeError(message)), failure, message);
  }
  assert.equal(storageFailureOf("database is locked"), null, "only errors are classified");
});

Deno.test("a full disk is StorageUnavailableError(full) with the KV error as cause; room again, writes succeed", async () => {
  await withTmpfs("1m", async (dir) => {
    const kv = await Deno.openKv(join(dir, "intents.kv"));
    try {
      const store = new KvStore(kv);
      assert.equal(store.lastCommit(), null);
      assert.equal(await store.putDocument("template", "first", doc(0)), "created");
      assert.equal(store.lastCommit()?.ok, true);
      await fillDisk(join(dir, "filler"));
      let error: unknown;
      for (let n = 1; n < 100 && error === undefined; n++) {
        error = await store.putDocument("template", `t${n}`, doc(n)).then(
          () => undefined,
          (e) => e,
        );
      }
      assert.ok(error instanceof StorageUnavailableError, `got ${error}`);
      assert.equal(error.failure, "full");
      assert.equal(error.message, "storage full");
      assert.match(String((error.cause as Error).message), /database or disk is full/);
      assert.deepEqual(
        { ok: store.lastCommit()?.ok, failure: store.lastCommit()?.failure },
        { ok: false, failure: "storage full" },
      );
      // Reads still answer.
      assert.equal(await store.ping(), true);
      await Deno.remove(join(dir, "filler"));
      assert.equal(await store.putDocument("template", "after", doc(0)), "created");
      assert.equal(store.lastCommit()?.ok, true);
    } finally {
      kv.close();
    }
  });
});

Deno.test("a lock held by another connection past the retries is StorageUnavailableError(locked)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intents-lock-" });
  const path = join(dir, "intents.kv");
  const kv = await Deno.openKv(path);
  const holder = new DatabaseSync(path);
  try {
    const store = new KvStore(kv);
    await store.putDocument("template", "T", doc(0));
    holder.exec("BEGIN IMMEDIATE");
    // A commit with checks is refused at once each time; a plain write waits
    // for SQLite's busy timeout (about 5 s) once, not once per retry.
    for (
      const write of [
        () => store.putDocument("template", "U", doc(1)),
        () =>
          store.setConfig({ evidence_extractor_url: "", updated_at: "2026-01-01T00:00:00.000Z" }),
      ]
    ) {
      const started = performance.now();
      const error = await rejection(write());
      assert.ok(error instanceof StorageUnavailableError, `got ${error}`);
      assert.equal(error.failure, "locked");
      assert.match(String((error.cause as Error).message), /database is locked/);
      assert.equal(store.lastCommit()?.failure, "storage is locked by another process");
      const spent = performance.now() - started;
      assert.ok(spent < 20_000, `gave up after ${Math.round(spent)} ms`);
    }
    holder.exec("ROLLBACK");
    assert.equal(await store.putDocument("template", "U", doc(1)), "created");
    assert.equal(store.lastCommit()?.ok, true);
  } finally {
    holder.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an error that is not the storage's stays as it is, and counts as a failed commit", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = new KvStore(kv);
  kv.close();
  const error = await rejection(store.putDocument("template", "T", doc(0)));
  assert.ok(!(error instanceof StorageUnavailableError), `got ${error}`);
  assert.equal(store.lastCommit()?.ok, false);
  assert.equal(store.lastCommit()?.failure, "unexpected error");
});

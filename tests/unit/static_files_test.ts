/** `StaticFiles`: the page's files, read once per app, and a failed read not kept. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { StaticFiles } from "../../src/http/static_files.ts";

Deno.test("StaticFiles reads a file once and keeps it; another instance reads it again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "static-files-" });
  try {
    await Deno.writeTextFile(join(dir, "a.txt"), "one");
    const url = new URL(`file://${dir}/`);
    const files = new StaticFiles(url);
    const first = await files.load("a.txt", "text/plain");
    assert.equal(new TextDecoder().decode(first.bytes), "one");
    assert.match(first.etag, /^"[0-9a-f]{32}"$/);
    await Deno.writeTextFile(join(dir, "a.txt"), "two");
    assert.equal(await files.load("a.txt", "text/plain"), first);
    const fresh = await new StaticFiles(url).load("a.txt", "text/plain");
    assert.equal(new TextDecoder().decode(fresh.bytes), "two");
    assert.notEqual(fresh.etag, first.etag);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StaticFiles does not keep a failed read", async () => {
  const dir = await Deno.makeTempDir({ prefix: "static-files-" });
  try {
    const files = new StaticFiles(new URL(`file://${dir}/`));
    await assert.rejects(files.load("late.txt", "text/plain"), Deno.errors.NotFound);
    await Deno.writeTextFile(join(dir, "late.txt"), "here");
    const file = await files.load("late.txt", "text/plain");
    assert.equal(new TextDecoder().decode(file.bytes), "here");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

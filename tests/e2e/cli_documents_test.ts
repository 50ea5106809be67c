/**
 * The CLI stores documents (`template add`, `policy add`) as what their
 * file says, against the real server: the content type each extension sends,
 * standard input by whether it parses as JSON, `--content-type` over both,
 * and what it prints of what it stored.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, parseJson, withCliServer as withServer } from "../support/cli.ts";

/** One `template add` or `policy add` run and the content type the server should store. */
interface AddCase {
  what: string;
  kind: "template" | "policy";
  /** The file's name, or null for standard input. */
  name: string | null;
  bytes: Uint8Array;
  flags?: string[];
  type: string;
}

const utf8 = (s: string) => new TextEncoder().encode(s);

Deno.test("template add and policy add store a file as what its extension says; --content-type wins", async () => {
  await withServer(async (ctx) => {
    const text = "text/plain; charset=utf-8";
    // Each case's bytes differ: a document is content-addressed, and bytes stored
    // already keep the content type they were first sent with.
    const cases: AddCase[] = [
      // The plain-text policy a new user writes: stored byte for byte, not refused as JSON.
      {
        what: ".txt",
        kind: "policy",
        name: "rules.txt",
        bytes: utf8("Pay up to 100 €,\r\nonly to known payees.\n\n  — treasury"),
        type: text,
      },
      {
        what: ".TXT",
        kind: "template",
        name: "RULES.TXT",
        bytes: utf8("pay up to 200\n"),
        type: text,
      },
      {
        what: ".md",
        kind: "policy",
        name: "rules.md",
        bytes: utf8("# Rules\n\n- pay\n"),
        type: text,
      },
      { what: ".Md", kind: "template", name: "Rules.Md", bytes: utf8("*pay*\n"), type: text },
      {
        what: ".json",
        kind: "policy",
        name: "policy.json",
        bytes: utf8('{"rules": "pay up to 300"}\n'),
        type: "application/json",
      },
      {
        what: ".JSON",
        kind: "template",
        name: "TEMPLATE.JSON",
        bytes: utf8('{"rules":"pay up to 400"}'),
        type: "application/json",
      },
      {
        what: ".yaml",
        kind: "policy",
        name: "policy.yaml",
        bytes: utf8("rules: pay up to 500\n"),
        type: "application/yaml",
      },
      {
        what: ".YML",
        kind: "template",
        name: "template.YML",
        bytes: utf8("rules: pay up to 600\n"),
        type: "application/yaml",
      },
      {
        what: "an unknown extension",
        kind: "policy",
        name: "policy.bin",
        bytes: Uint8Array.of(0x00, 0xff, 0x10, 0x80, 0x0a),
        type: "application/octet-stream",
      },
      {
        what: "no extension",
        kind: "template",
        name: "rules",
        bytes: utf8('{"rules":"pay up to 700"}'),
        type: "application/octet-stream",
      },
      {
        what: "standard input that is JSON",
        kind: "policy",
        name: null,
        bytes: utf8(' {"rules": "pay up to 800"}\n'),
        type: "application/json",
      },
      {
        what: "standard input that is text",
        kind: "template",
        name: null,
        bytes: utf8("pay up to 900\n"),
        type: "application/octet-stream",
      },
      {
        what: "standard input that is not UTF-8",
        kind: "policy",
        name: null,
        bytes: Uint8Array.of(0x22, 0xff, 0xfe, 0x22),
        type: "application/octet-stream",
      },
      {
        what: "--content-type over .txt",
        kind: "policy",
        name: "notes.txt",
        bytes: utf8("pay up to 1000\n"),
        flags: ["--content-type", "text/markdown"],
        type: "text/markdown",
      },
      {
        what: "--content-type over .json",
        kind: "template",
        name: "notes.json",
        bytes: utf8('{"rules":"pay up to 1100"}'),
        flags: ["--content-type", "text/plain"],
        type: "text/plain",
      },
      {
        what: "--content-type over standard input that is JSON",
        kind: "policy",
        name: null,
        bytes: utf8('{"rules":"pay up to 1200"}'),
        flags: ["--content-type", "application/vnd.example+json"],
        type: "application/vnd.example+json",
      },
    ];
    await Promise.all(cases.map(async (c) => {
      let arg = "-";
      if (c.name !== null) {
        // A directory per case: some names differ only in case.
        const dir = await Deno.makeTempDir({ dir: ctx.dir });
        arg = join(dir, c.name);
        await Deno.writeFile(arg, c.bytes);
      }
      const run = await cli([c.kind, "add", arg, ...(c.flags ?? []), "--json"], {
        env: ctx.env,
        stdin: c.name === null ? c.bytes : undefined,
      });
      assert.equal(run.code, 0, `${c.what}: ${run.stdout} ${run.stderr}`);
      const { id } = parseJson(run);
      const path = c.kind === "template" ? "templates" : "policies";
      const got = await fetch(`${ctx.server.url}/${path}/${id}`);
      assert.equal(got.status, 200, c.what);
      assert.equal(got.headers.get("content-type"), c.type, c.what);
      assert.deepEqual(new Uint8Array(await got.arrayBuffer()), c.bytes, c.what);
    }));
  });
});

Deno.test("policy add of a plain-text file says what it stored it as", async () => {
  await withServer(async (ctx) => {
    const file = join(ctx.dir, "rules.txt");
    await Deno.writeTextFile(file, "pay up to 100\n");
    const run = await cli(["policy", "add", file], { env: ctx.env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /stored policy as text\/plain; charset=utf-8/);
    const id = run.stdout.trim();
    assert.match(id, /^[1-9A-HJ-NP-Za-km-z]{43,44}$/);

    const again = await cli(["policy", "add", file], { env: ctx.env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /already stored policy/);
    assert.equal(again.stdout.trim(), id);

    const got = await cli(["policy", "get", id], { env: ctx.env });
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, "pay up to 100\n");
  });
});

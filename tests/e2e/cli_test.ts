import assert from "node:assert/strict";
import { join } from "node:path";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { canonicalBytes } from "@intents/protocol/jcs";
import {
  addDocumentByCli as addDocument,
  cli,
  parseJson,
  withCliServer as withServer,
} from "../support/cli.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

Deno.test("keygen --out writes a base58 key file whose keys belong together", async () => {
  const dir = await Deno.makeTempDir({ prefix: "intents-cli-" });
  try {
    const path = join(dir, "key.json");
    const run = await cli(["keygen", "--out", path]);
    assert.equal(run.code, 0, run.stderr);
    const file = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(Object.keys(file).sort(), ["kind", "public_key", "secret_key"]);
    assert.equal(file.kind, "Ed25519");
    const secret = base58.decode(file.secret_key);
    assert.equal(secret.length, 32);
    assert.equal(file.public_key, base58.encode(ed25519.getPublicKey(secret)));
    assert.match(run.stdout, new RegExp(file.public_key));
    assert.equal((await Deno.stat(path)).mode! & 0o077, 0, "the key file is private");

    const again = await cli(["keygen", "--out", path]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /exists/);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), file, "the key is not replaced");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sign, submit and get: a Variant A intent from the CLI is stored", async () => {
  await withServer(async (ctx) => {
    const key = join(ctx.dir, "key.json");
    assert.equal((await cli(["keygen", "--out", key])).code, 0);
    const keyFile = JSON.parse(await Deno.readTextFile(key));
    const templateId = await addDocument(ctx, "template", '{"name":"cli template"}');

    const signed = await cli(
      ["sign", "--key", key, "--template", templateId, "--id", "X", "--fields", '{"a":1}'],
      { env: ctx.env },
    );
    assert.equal(signed.code, 0, signed.stderr);
    const body = parseJson(signed) as Record<string, Record<string, unknown>>;
    assert.deepEqual(body.payload, {
      id: "X",
      template_id: templateId,
      attrs: { fields: { a: 1 } },
    });
    const sig = body.signature.Ed25519 as Record<string, string>;
    assert.equal(sig.pub_key, keyFile.public_key);
    assert.ok(
      ed25519.verify(
        base58.decode(sig.signature),
        canonicalBytes(body.payload),
        base58.decode(sig.pub_key),
        { zip215: false }, // strict RFC 8032, as the server verifies
      ),
    );

    const file = join(ctx.dir, "a.json");
    await Deno.writeTextFile(file, signed.stdout);
    const submitted = await cli(["submit", file, "--json"], { env: ctx.env });
    assert.equal(submitted.code, 0, submitted.stderr);
    const record = parseJson(submitted);
    assert.equal(record.id, "X");
    assert.equal(record.variant, "A");
    assert.deepEqual(record.authorship, { kind: "Ed25519", signers: [keyFile.public_key] });
    assert.deepEqual(record.request, body);

    const got = await cli(["get", "X", "--json"], { env: ctx.env });
    assert.equal(got.code, 0, got.stderr);
    assert.deepEqual(parseJson(got), record);

    const human = await cli(["get", "X"], { env: ctx.env });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /intent X \(variant A/);
    assert.match(human.stdout, /authorship: Ed25519/);
  });
});

Deno.test("sign --policy makes a Variant B body with a fresh UUID, submitted from stdin", async () => {
  await withServer(async (ctx) => {
    const key = join(ctx.dir, "key.json");
    assert.equal((await cli(["keygen", "--out", key])).code, 0);
    const policyId = await addDocument(ctx, "policy", '{"name":"cli policy"}');

    const signed = await cli(["sign", "--key", key, "--policy", policyId], { env: ctx.env });
    assert.equal(signed.code, 0, signed.stderr);
    const body = parseJson(signed) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(body).sort(), ["authorship", "intent"]);
    assert.match(body.intent.id as string, UUID);
    assert.equal(body.intent.policy_id, policyId);

    const submitted = await cli(["submit", "-", "--json"], { env: ctx.env, stdin: signed.stdout });
    assert.equal(submitted.code, 0, submitted.stderr);
    assert.equal(parseJson(submitted).variant, "B");

    const badId = await cli(["sign", "--key", key, "--policy", policyId, "--id", "X"], {
      env: ctx.env,
    });
    assert.equal(badId.code, 2);
    assert.match(badId.stderr, /--id must be a UUID/);
    assert.equal(badId.stdout, "");
  });
});

Deno.test("sign --payload reads a whole payload from a file", async () => {
  await withServer(async (ctx) => {
    const key = join(ctx.dir, "key.json");
    assert.equal((await cli(["keygen", "--out", key])).code, 0);
    const payload = { id: "from-file", template_id: "T", attrs: { fields: { n: 2 } } };
    const file = join(ctx.dir, "payload.json");
    await Deno.writeTextFile(file, JSON.stringify(payload));
    const signed = await cli(["sign", "--key", key, "--payload", file]);
    assert.equal(signed.code, 0, signed.stderr);
    assert.deepEqual(parseJson(signed).payload, payload);
  });
});

Deno.test("submit prints the server's {message, code} and exits 1 on refusal", async () => {
  await withServer(async (ctx) => {
    const key = join(ctx.dir, "key.json");
    assert.equal((await cli(["keygen", "--out", key])).code, 0);
    const templateId = await addDocument(ctx, "template", '{"name":"dup"}');
    const signed = await cli(["sign", "--key", key, "--template", templateId, "--id", "dup"]);
    const file = join(ctx.dir, "dup.json");
    await Deno.writeTextFile(file, signed.stdout);
    assert.equal((await cli(["submit", file, "--json"], { env: ctx.env })).code, 0);

    // The same body again is a replay (exit 0), said so; the id signed by another key is refused.
    assert.equal(parseJson(await cli(["submit", file, "--json"], { env: ctx.env })).id, "dup");
    const replayed = await cli(["submit", file], { env: ctx.env });
    assert.equal(replayed.code, 0);
    assert.match(replayed.stdout, /^already stored: the same intent, intent dup \(variant A/);
    const other = join(ctx.dir, "other.json");
    await cli(["keygen", "--out", other]);
    const theirs = await cli(["sign", "--key", other, "--template", templateId, "--id", "dup"]);
    const taken = await cli(["submit", "-", "--json"], { env: ctx.env, stdin: theirs.stdout });
    assert.equal(taken.code, 1);
    assert.deepEqual(parseJson(taken), {
      message: "an intent with this id already exists",
      code: "intent_exists",
    });
    const human = await cli(["submit", "-"], { env: ctx.env, stdin: theirs.stdout });
    assert.equal(human.code, 1);
    assert.match(human.stderr, /already exists \(intent_exists\)/);

    const tampered = signed.stdout.replace('"dup"', '"dup2"');
    const forged = await cli(["submit", "-", "--json"], { env: ctx.env, stdin: tampered });
    assert.equal(forged.code, 1);
    assert.equal(parseJson(forged).code, "invalid_signature");
  });
});

Deno.test("--url and --token override INTENTS_URL and ADMIN_TOKEN", async () => {
  await withServer(async (ctx) => {
    const wrongEnv = { INTENTS_URL: "http://127.0.0.1:9", ADMIN_TOKEN: "wrong-token-0123456789" };
    const denied = await cli(["list", "--json", "--url", ctx.server.url], { env: wrongEnv });
    assert.equal(denied.code, 1);
    assert.equal(parseJson(denied).code, "unauthorized");

    const listed = await cli(
      ["list", "--json", "--url", ctx.server.url, "--token", ctx.server.adminToken],
      { env: wrongEnv },
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(parseJson(listed), { items: [], cursor: null });

    const unreachable = await cli(["list", "--json"], { env: wrongEnv });
    assert.equal(unreachable.code, 1);
    assert.equal(parseJson(unreachable).code, "network");
  });
});

Deno.test("list pages with --limit and --cursor", async () => {
  await withServer(async (ctx) => {
    const key = join(ctx.dir, "key.json");
    assert.equal((await cli(["keygen", "--out", key])).code, 0);
    const templateId = await addDocument(ctx, "template", '{"name":"list"}');
    for (const id of ["one", "two", "three"]) {
      const signed = await cli(["sign", "--key", key, "--template", templateId, "--id", id]);
      const run = await cli(["submit", "-"], { env: ctx.env, stdin: signed.stdout });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`stored intent ${id}`));
    }
    const first = parseJson(await cli(["list", "--limit", "2", "--json"], { env: ctx.env }));
    assert.deepEqual((first.items as { id: string }[]).map((r) => r.id), ["three", "two"]);
    assert.equal(typeof first.cursor, "string");
    const second = await cli(["list", "--limit", "2", "--cursor", first.cursor as string], {
      env: ctx.env,
    });
    assert.equal(second.code, 0);
    assert.match(second.stdout, /\bone\n/);
    assert.doesNotMatch(second.stdout, /next page/);
  });
});

Deno.test("config get and config set, with the server's refusal on a bad URL", async () => {
  await withServer(async (ctx) => {
    const initial = parseJson(await cli(["config", "get", "--json"], { env: ctx.env }));
    assert.equal(initial.evidence_extractor_url, "");
    const set = await cli(["config", "set", "https://extractor.example/v1", "--json"], {
      env: ctx.env,
    });
    assert.equal(set.code, 0, set.stderr);
    assert.equal(parseJson(set).effective_url, "https://extractor.example/v1");
    const human = await cli(["config", "get"], { env: ctx.env });
    assert.match(human.stdout, /effective_url: https:\/\/extractor\.example\/v1/);

    const stale = await cli(["config", "set", "", "--if-match", '"default"', "--json"], {
      env: ctx.env,
    });
    assert.equal(stale.code, 1);
    assert.equal(parseJson(stale).code, "precondition_failed");

    const bad = await cli(["config", "set", "ftp://x", "--json"], { env: ctx.env });
    assert.equal(bad.code, 1);
    assert.equal(parseJson(bad).code, "invalid_evidence_extractor_url");
  });
});

Deno.test("--help works on every command and exits 0", async () => {
  const commands = [
    [],
    ["keygen"],
    ["template", "add"],
    ["template", "get"],
    ["policy", "add"],
    ["policy", "get"],
    ["sign"],
    ["submit"],
    ["get"],
    ["list"],
    ["events"],
    ["approvals"],
    ["approve"],
    ["config", "get"],
    ["config", "set"],
  ];
  await Promise.all(commands.map(async (command) => {
    const run = await cli([...command, "--help"]);
    assert.equal(run.code, 0, `${command.join(" ")}: ${run.stderr}`);
    assert.match(run.stdout, /^Usage: deno task cli/, command.join(" "));
    assert.match(run.stdout, /--url URL/);
  }));
});

Deno.test("usage errors exit 2 with a message", async () => {
  const unknown = await cli(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  const badFlag = await cli(["list", "--nope"]);
  assert.equal(badFlag.code, 2);
  const both = await cli(["sign", "--key", "k.json", "--template", "a", "--policy", "b"]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /exactly one of --template/);
  const noKey = await cli(["sign", "--key", "no-such-key.json", "--template", "a"]);
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /cannot read key file/);
});

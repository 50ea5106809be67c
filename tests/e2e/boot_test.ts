/**
 * Boot end to end: malformed settings stop the server with a one-line message
 * naming the variable (an evidence extractor URL not in its normal form names
 * that form), and a missing ADMIN_TOKEN is generated and printed once; the
 * log's verifier key is printed at start, and a start whose log settings
 * disagree with the store's log stops, naming the variable.
 */

import assert from "node:assert/strict";
import { runServerExpectingExit, startServer, tempKvPath } from "../support/server.ts";
import { auditIntents } from "../support/audit.ts";
import { spawnServer } from "../../testing/spawn_server.ts";
import { until } from "../support/time.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";

const MALFORMED: [string, string][] = [
  ["PORT", "abc"],
  ["PORT", "70000"],
  ["PORT", "-1"],
  ["ALLOW_UNSIGNED", "maybe"],
  ["ALLOW_UNSIGNED", "1"],
  ["PASSKEY_REQUIRE_UV", "yes"],
  ["EVIDENCE_EXTRACTOR_URL", "ftp://x"],
  ["EVIDENCE_EXTRACTOR_URL", "http://user@x.example"],
  ["EVIDENCE_EXTRACTOR_URL", "https://x.example/?q"],
  ["MAX_BODY_BYTES", "0"],
  ["MAX_BODY_BYTES", "lots"],
  ["PASSKEY_ORIGINS", "not-an-origin"],
  ["PASSKEY_ORIGINS", "https://ok.example,https://x.example/path"],
  ["PASSKEY_RP_IDS", "localhost,,example.com"],
  ["SHUTDOWN_TIMEOUT_MS", "ten"],
  ["RATE_LIMIT_PER_ADDRESS", "fifty"],
  ["RATE_LIMIT_PER_ADDRESS", "-1"],
  ["RATE_LIMIT_PER_SIGNER", "1.5"],
  ["TRUSTED_PROXIES", "10.0.0.0/33"],
  ["TRUSTED_PROXIES", "10.0.0.1,,10.0.0.2"],
  ["TRUSTED_PROXIES", "proxy.internal"],
  ["MAX_PENDING_PER_SIGNER", "0"],
  ["LOG_SIGNING_KEY", "PRIVATE+KEY+x+00000000+AQ=="],
  ["LOG_ORIGIN", "two words"],
  ["LOG_PUBLIC", "yes"],
  ["LOG_WITNESSES", "https://w.example=w.example+00000000+BA=="],
];

for (const [name, value] of MALFORMED) {
  Deno.test(`refuses to boot with ${name}=${value}, naming the variable in one line`, async () => {
    const { code, stderr } = await runServerExpectingExit({
      [name]: value,
      ADMIN_TOKEN: "boot-test-admin-token-0123456789",
    });
    assert.notEqual(code, 0);
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, `expected one line, got: ${stderr}`);
    assert.ok(lines[0].includes(name), lines[0]);
    assert.ok(!/\bat .*\.ts:\d+/.test(stderr), "no stack trace");
  });
}

/** Deceptive URLs and the normal form a URL parser reads them as. */
const DECEPTIVE_URLS: [string, string][] = [
  ["http://0x7f.1/", "http://127.0.0.1/"],
  ["http://EXAMPLE.com", "http://example.com/"],
  ["http://x.example:80/", "http://x.example/"],
];

Deno.test("EVIDENCE_EXTRACTOR_URL not in its normal form stops the boot, naming the normal form", async () => {
  for (const [url, normal] of DECEPTIVE_URLS) {
    const { code, stderr } = await runServerExpectingExit({
      EVIDENCE_EXTRACTOR_URL: url,
      ADMIN_TOKEN: "extractor-url-test-admin-token-01",
    });
    assert.notEqual(code, 0);
    const lines = stderr.trim().split("\n");
    assert.equal(lines.length, 1, stderr);
    assert.ok(lines[0].includes("EVIDENCE_EXTRACTOR_URL"), lines[0]);
    assert.ok(lines[0].includes(`write it as ${normal}`), lines[0]);
  }
});

/** This process's environment without ADMIN_TOKEN, and `KV_PATH`. */
function envWithoutToken(kvPath: string): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.ADMIN_TOKEN;
  return { ...env, KV_PATH: kvPath };
}

Deno.test("generates an ADMIN_TOKEN when unset, prints it once to stderr, and it works", async () => {
  const server = await spawnServer({ clearEnv: true, env: envWithoutToken(await tempKvPath()) });
  try {
    const err = server.stderr();
    const tokenMatch = /ADMIN_TOKEN[^\n]*?([A-Za-z0-9_\-]{32,})/.exec(err);
    assert.ok(tokenMatch, `no generated token in: ${err}`);
    const token = tokenMatch[1];
    assert.equal(err.split(token).length - 1, 1, "the token is printed exactly once");

    const ok = await fetch(`${server.url}/config`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const wrong = await fetch(`${server.url}/config`, {
      headers: { authorization: `Bearer ${token.slice(0, -1)}x` },
    });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    // Wait for both log lines (written in batches), then check the token never reaches stdout.
    await until(
      () => server.stdout().includes('"status":200') && server.stdout().includes('"status":401'),
      5_000,
      "the two requests' log lines",
    );
    assert.ok(!server.stdout().includes(token));
  } finally {
    await server.stop();
  }
  assert.equal(server.stderr().split("ADMIN_TOKEN").length - 1, 1);
});

Deno.test("two boots without ADMIN_TOKEN get different tokens", async () => {
  // A refused boot after the token is made would print nothing; compare the
  // tokens of two real boots through their stderr instead.
  const tokens: string[] = [];
  for (let i = 0; i < 2; i++) {
    const server = await spawnServer({
      clearEnv: true,
      env: envWithoutToken(":memory:"),
      stdout: "discard",
    });
    await server.stop();
    const match = /ADMIN_TOKEN[^\n]*?([A-Za-z0-9_\-]{32,})/.exec(server.stderr());
    assert.ok(match, server.stderr());
    tokens.push(match[1]);
  }
  assert.notEqual(tokens[0], tokens[1]);
});

Deno.test("serves intents stored before the feed, and takes them into it in their order", async () => {
  const kvPath = await tempKvPath();
  // The layout before the feed: blocks keyed by time, counter and writer id; pointers to them.
  const earlier = Array.from({ length: 45 }, (_, i) => {
    const id = crypto.randomUUID();
    const ms = Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000;
    // Literals as a relayer may send them: the feed stores numbers as JCS writes them.
    // Pretty-printed, as a client may send it: the feed keeps every body on one line.
    const body = `{"authorship": "Unsigned",\n "intent": {"id": "${id}", "policy_id": "p",` +
      `\n  "attrs": {"fields": {"n": 1.50, "z": -0, "big": 1e20}}}}`;
    return {
      id,
      variant: "B",
      refId: "p",
      authorship: { kind: "Unsigned", signers: [] },
      receivedAt: new Date(ms).toISOString(),
      receivedAtMs: ms,
      seq: i + 1,
      body: new TextEncoder().encode(body),
    };
  });
  const kv = await Deno.openKv(kvPath);
  // Three intents a block, written out of order by two writers.
  for (let b = 14; b >= 0; b--) {
    const block = earlier.slice(3 * b, 3 * b + 3);
    const writer = b % 2 === 0 ? "00000000000000aa" : "00000000000000bb";
    const op = kv.atomic().set(
      ["intent_batches", block[0].receivedAtMs, block[0].seq, writer],
      block,
    );
    block.forEach((record, index) => {
      op.set(["intents", record.id], [block[0].receivedAtMs, block[0].seq, writer, index]);
    });
    assert.ok((await op.commit()).ok);
  }
  kv.close();

  const server = await startServer({ kvPath });
  try {
    const auth = { authorization: `Bearer ${server.adminToken}` };
    const one = await fetch(`${server.url}/intents/${earlier[7].id}`, { headers: auth });
    assert.equal(one.status, 200);
    const record = await one.json();
    assert.equal(record.id, earlier[7].id);
    assert.equal(record.received_at, earlier[7].receivedAt);
    assert.equal(record.state, "accepted");
    assert.deepEqual(record.request.intent, {
      id: earlier[7].id,
      policy_id: "p",
      attrs: { fields: { n: 1.5, z: 0, big: 1e20 } },
    });
    const text = await (await fetch(`${server.url}/intents/${earlier[8].id}`, { headers: auth }))
      .text();
    assert.ok(!text.includes("\n"), "the record is one line");
    assert.ok(text.includes('"big":100000000000000000000'), text);
    const page = await fetch(`${server.url}/intents?limit=100`, { headers: auth });
    const { items, cursor } = await page.json();
    assert.deepEqual(items.map((r: { id: string }) => r.id), earlier.map((r) => r.id).reverse());
    assert.equal(cursor, null);
    const feed = await (await fetch(`${server.url}/events?limit=1000`, { headers: auth })).json();
    assert.deepEqual(
      feed.events.map((e: { record: { id: string } }) => e.record.id),
      earlier.map((r) => r.id),
    );
  } finally {
    await server.stop();
  }
  const after = await Deno.openKv(kvPath);
  try {
    const stored = await auditIntents(after);
    assert.equal(stored.length, 45);
  } finally {
    after.close();
  }
});

Deno.test("prints the log's verifier key; a start with another origin or key stops, naming it", async () => {
  const kvPath = await tempKvPath();
  const env = { KV_PATH: kvPath, ADMIN_TOKEN: "boot-test-admin-token-0123456789" };
  const server = await spawnServer({ env, stdout: "discard" });
  let vkey: string;
  try {
    vkey = await (await fetch(`${server.url}/log/key`)).text();
    assert.ok(server.stderr().includes(`the log's verifier key is ${vkey}`), server.stderr());
    assert.ok(!server.stderr().includes("PRIVATE+KEY"));
  } finally {
    await server.stop();
  }
  for (
    const [name, extra] of [
      ["LOG_ORIGIN", { LOG_ORIGIN: "other.example/log" }],
      ["LOG_SIGNING_KEY", { LOG_SIGNING_KEY: generateNoteKey("localhost/intents").signerKey }],
    ] as const
  ) {
    const { code, stderr } = await runServerExpectingExit({ ...env, ...extra });
    assert.equal(code, 2, stderr);
    const lines = stderr.trim().split("\n").filter((l) => !l.includes("ADMIN_TOKEN"));
    assert.equal(lines.length, 1, stderr);
    assert.ok(lines[0].startsWith(`intents: ${name}:`), lines[0]);
    assert.ok(!stderr.includes("PRIVATE+KEY"));
  }
  // The same settings start again with the same key.
  const again = await spawnServer({ env, stdout: "discard" });
  try {
    assert.equal(await (await fetch(`${again.url}/log/key`)).text(), vkey);
  } finally {
    await again.stop();
  }
});

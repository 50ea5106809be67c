/**
 * The CLI's `log` commands (docs/interface.md §14, "Clients") against the
 * app in process, served on a local port: a key made by `log keygen` signs
 * the app's log; `prove` writes a proof and its entry that `verify` checks
 * offline (and refuses tampered); `checkpoint`, `audit` and `watch --once`
 * check the service; `watch` fails with exit 3 on a split view, keeping its
 * state.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../../client/cli.ts";
import { generateEd25519Key, signVariantB } from "../../client/mod.ts";
import { newIntent } from "../support/fixtures.ts";
import { type AppHarness, startApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const key = generateEd25519Key();

/** Runs the CLI in process against `url`; its exit code and what it wrote. */
async function cli(url: string | null, args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...args, ...(url ? ["--url", url] : [])], {
    stdout: (text) => stdout += text,
    stderr: (text) => stderr += text,
    readStdin: () => Promise.resolve(new Uint8Array()),
    env: (name) => name === "EVENTS_TOKEN" ? EVENTS_TOKEN : undefined,
  });
  return { code, stdout, stderr };
}

/** The app on a local port, with the log key given. */
async function serve(signerKey: string) {
  const h = await startApp({ env: { EVENTS_TOKEN, LOG_SIGNING_KEY: signerKey } });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request, info) => h.app.handler(request, info),
  );
  const policy = (await h.client.addPolicy('{"log":"cli"}')).id;
  return {
    h,
    url: `http://127.0.0.1:${server.addr.port}`,
    submit: async (n: number) => {
      const records = [];
      for (let i = 0; i < n; i++) {
        records.push(await h.clientWith().submit(signVariantB(newIntent(policy), key)));
      }
      return records;
    },
    close: async () => {
      await server.shutdown();
      await h.close();
    },
  };
}

/** Waits until the served checkpoint covers `size` events. */
async function covered(h: AppHarness, size: number): Promise<void> {
  const headers = { authorization: `Bearer ${EVENTS_TOKEN}` };
  for (let i = 0; i < 200; i++) {
    const response = await h.fetch("/log/checkpoint", { headers });
    const text = await response.text();
    if (response.status === 200 && Number(text.split("\n")[1]) >= size) return;
    await sleep(50);
  }
  throw new Error(`no checkpoint of size ${size}`);
}

Deno.test("the log commands: keygen, prove, verify, checkpoint, audit, watch", async () => {
  const dir = await Deno.makeTempDir();
  const made = await cli(null, ["log", "keygen", "--name", "cli.example/log", "--json"]);
  assert.equal(made.code, 0, made.stderr);
  const { signer_key: signerKey, verifier_key: vkey } = JSON.parse(made.stdout);
  assert.match(signerKey, /^PRIVATE\+KEY\+cli\.example\/log\+[0-9a-f]{8}\+/);
  const one = await serve(signerKey);
  const two = await serve(signerKey);
  try {
    assert.equal(await (await one.h.fetch("/log/key")).text(), vkey);
    const [, record] = await one.submit(3);
    // The proof below is against the served checkpoint: one of all three (else its size is 2 or 3).
    await covered(one.h, 3);
    const recordFile = join(dir, "intent.json");
    await Deno.writeTextFile(recordFile, JSON.stringify(record));

    // prove --record: waits for the checkpoint, checks, writes the proof and the entry beside it.
    const proved = await cli(one.url, ["log", "prove", "--record", recordFile, "--key", vkey]);
    assert.equal(proved.code, 0, proved.stderr);
    assert.match(proved.stdout, /index 1, verified/);
    const proof = join(dir, "intent.tlog-proof");
    const entry = join(dir, "intent.entry");
    assert.match(await Deno.readTextFile(proof), /^c2sp\.org\/tlog-proof@v1\nindex 1\n/);

    const verified = await cli(null, ["log", "verify", proof, "--entry", entry, "--key", vkey]);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /^verified: entry 1 of cli\.example\/log: 3 entries/);
    // Another entry, another key, a witness that did not cosign: exit 3, each named.
    const other = join(dir, "other.entry");
    await Deno.writeTextFile(other, (await Deno.readTextFile(entry)).replace('"type"', '"Type"'));
    const refusals: [string[], string][] = [
      [["--entry", other, "--key", vkey], "not_included"],
      [[
        "--entry",
        entry,
        "--key",
        JSON.parse(
          (await cli(null, ["log", "keygen", "--name", "cli.example/log", "--json"]))
            .stdout,
        ).verifier_key,
      ], "no_log_signature"],
    ];
    for (const [args, code] of refusals) {
      const run = await cli(null, ["log", "verify", proof, ...args, "--json"]);
      assert.equal(run.code, 3, run.stdout);
      assert.equal(JSON.parse(run.stdout).code, code);
    }
    const noQuorum = await cli(null, [
      "log",
      "verify",
      proof,
      "--entry",
      entry,
      "--key",
      vkey,
      "--quorum",
      "1",
    ]);
    assert.equal(noQuorum.code, 2);

    // prove ID: the event's record from the feed (a token), written as event-ID.*.
    const byId = await cli(one.url, ["log", "prove", "3", "--out", join(dir, "e3.tlog-proof")]);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.stdout, /not checked/);
    const third = await cli(null, [
      "log",
      "verify",
      join(dir, "e3.tlog-proof"),
      "--entry",
      join(dir, "e3.entry"),
      "--key",
      vkey,
      "--json",
    ]);
    assert.equal(JSON.parse(third.stdout).index, 2);

    const checkpoint = await cli(one.url, ["log", "checkpoint", "--key", vkey, "--json"]);
    assert.equal(checkpoint.code, 0, checkpoint.stderr);
    assert.deepEqual(
      [JSON.parse(checkpoint.stdout).verified, JSON.parse(checkpoint.stdout).size],
      [true, 3],
    );
    const audit = await cli(one.url, ["log", "audit", "--key", vkey]);
    assert.equal(audit.code, 0, audit.stderr);
    assert.match(audit.stdout, /^audited 3 entries/);

    // watch --once: trusts the first, proves each next extends it; a split view is exit 3.
    const state = join(dir, "state.json");
    const watch = (url: string) =>
      cli(url, ["log", "watch", "--key", vkey, "--state", state, "--once", "--json"]);
    assert.equal(JSON.parse((await watch(one.url)).stdout).change, "first");
    await one.submit(2);
    await covered(one.h, 5);
    const grown = JSON.parse((await watch(one.url)).stdout);
    assert.deepEqual([grown.change, grown.previous_size, grown.size], ["grown", 3, 5]);
    const trusted = await Deno.readTextFile(state);
    await two.submit(5);
    await covered(two.h, 5);
    const split = await cli(two.url, ["log", "watch", "--key", vkey, "--state", state, "--once"]);
    assert.equal(split.code, 3);
    assert.match(split.stderr, /split_view/);
    assert.match(split.stderr, /keep these signed checkpoints as evidence/);
    assert.equal(await Deno.readTextFile(state), trusted);
  } finally {
    await one.close();
    await two.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the log commands' help, and their usage errors", async () => {
  for (const command of ["keygen", "checkpoint", "prove", "verify", "audit", "watch"]) {
    const run = await cli(null, ["log", command, "--help"]);
    assert.equal(run.code, 0, command);
    assert.match(run.stdout, new RegExp(`^Usage: deno task cli log ${command}`));
  }
  const group = await cli(null, ["log"]);
  assert.equal(group.code, 2);
  assert.match(group.stdout, /log watch/);
  const usage: string[][] = [
    ["keygen"],
    ["keygen", "--name", "a b"],
    ["verify", "p", "--entry", "e", "--key", "not-a-key"],
    ["watch", "--key", "a+00000000+AQ=="],
    ["prove"],
  ];
  for (const args of usage) {
    assert.equal((await cli(null, ["log", ...args])).code, 2, args.join(" "));
  }
});

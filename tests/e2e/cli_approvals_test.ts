/**
 * The CLI's side of approvals over time (docs/interface.md §10), as a process against
 * the real server: a governed policy, a submission stored pending, the
 * approvals view, approvals by key file until accepted, rejections until
 * rejected, and the feed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad } from "@scure/base";
import { canonicalBytes } from "@intents/protocol/jcs";
import { cli, parseJson } from "../support/cli.ts";
import { startServer, type TestServer } from "../support/server.ts";

interface Env {
  server: TestServer;
  dir: string;
  /** The admin's environment. */
  env: Record<string, string>;
  /** No token at all: what an approver has. */
  publicEnv: Record<string, string>;
}

async function withServer(fn: (ctx: Env) => Promise<void>) {
  const server = await startServer();
  const dir = await Deno.makeTempDir({ prefix: "intents-cli-approvals-" });
  try {
    await fn({
      server,
      dir,
      env: { INTENTS_URL: server.url, ADMIN_TOKEN: server.adminToken },
      publicEnv: { INTENTS_URL: server.url },
    });
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Makes key files with `keygen`; returns their paths and public keys. */
async function keys(
  ctx: Env,
  names: string[],
): Promise<Record<string, { file: string; pub: string }>> {
  const out: Record<string, { file: string; pub: string }> = {};
  for (const name of names) {
    const file = join(ctx.dir, `${name}.json`);
    const run = await cli(["keygen", "--out", file]);
    assert.equal(run.code, 0, run.stderr);
    out[name] = { file, pub: JSON.parse(await Deno.readTextFile(file)).public_key };
  }
  return out;
}

/** Stores a governed policy with `policy add` (with `authorization.rules` if given); its id. */
async function governedPolicy(
  ctx: Env,
  signers: Record<string, number>,
  threshold: number,
  rules?: unknown[],
) {
  const file = join(ctx.dir, `policy-${crypto.randomUUID()}.json`);
  const document = { rules: "pay up to 100", authorization: { signers, threshold, rules } };
  await Deno.writeTextFile(file, JSON.stringify(document, null, 2));
  const run = await cli(["policy", "add", file], { env: ctx.env });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.trim();
}

/** Signs a Variant B body with `sign`; returns the body file and the intent. */
async function signed(ctx: Env, key: string, policy: string) {
  const run = await cli(["sign", "--key", key, "--policy", policy, "--fields", '{"amount":42}']);
  assert.equal(run.code, 0, run.stderr);
  const file = join(ctx.dir, `body-${crypto.randomUUID()}.json`);
  await Deno.writeTextFile(file, run.stdout);
  return { file, intent: parseJson(run).intent as Record<string, unknown> & { id: string } };
}

Deno.test("a governed policy from the CLI: pending on submit, shown by approvals, accepted by approve", async () => {
  await withServer(async (ctx) => {
    const k = await keys(ctx, ["alice", "bob", "carol", "mallory"]);
    const policy = await governedPolicy(
      ctx,
      { [k.alice.pub]: 1, [k.bob.pub]: 1, [k.carol.pub]: 1 },
      2,
    );
    const { file, intent } = await signed(ctx, k.alice.file, policy);
    const id = intent.id;

    const submitted = await cli(["submit", file], { env: ctx.publicEnv });
    assert.equal(submitted.code, 0, submitted.stderr);
    assert.match(
      submitted.stdout,
      new RegExp(`^pending \\(weight 1 of 2\\): intent ${id} \\(variant B`),
    );
    assert.match(
      submitted.stdout,
      new RegExp(`approve with: deno task cli approve ${id} --key FILE`),
    );
    assert.match(
      submitted.stdout,
      new RegExp(`or reject with: deno task cli reject ${id} --key FILE`),
    );
    assert.match(submitted.stdout, /state: pending \(weight 1 of 2\), expires at \d{4}-/);

    // Human view: no token needed.
    const view = await cli(["approvals", id], { env: ctx.publicEnv });
    assert.equal(view.code, 0, view.stderr);
    assert.match(
      view.stdout,
      new RegExp(`^intent ${id}: pending \\(weight 1 of 2\\), expires at `),
    );
    assert.match(view.stdout, /"amount": 42/, "the signed object, pretty");
    assert.match(view.stdout, new RegExp(`"policy_id": "${policy}"`));
    assert.match(
      view.stdout,
      new RegExp(`\\[x\\] ${k.alice.pub}\\s+weight 1  approved at \\S+ \\(Ed25519\\)`),
    );
    assert.match(view.stdout, new RegExp(`\\[ \\] ${k.bob.pub}\\s+weight 1\\n`));
    assert.match(view.stdout, /signers \(threshold 2\)/);

    const json = await cli(["approvals", id, "--json"], { env: ctx.publicEnv });
    assert.equal(json.code, 0, json.stderr);
    const body = parseJson(json) as Record<string, unknown> & { approval: Record<string, unknown> };
    assert.equal(body.state, "pending");
    assert.deepEqual(body.signed, intent);
    assert.equal(body.challenge, base64urlnopad.encode(sha256(canonicalBytes(intent))));
    assert.equal(body.approval.weight, 1);
    assert.equal(body.approval.threshold, 2);

    // Refusals carry the service's code, exit 1.
    const stranger = await cli(["approve", id, "--key", k.mallory.file], { env: ctx.publicEnv });
    assert.equal(stranger.code, 1);
    assert.match(stranger.stderr, /\(signer_not_authorized\)/);
    // Alice's approval is her submission's signature: sent again, the view as it stands.
    const twice = await cli(["approve", id, "--key", k.alice.file], { env: ctx.publicEnv });
    assert.equal(twice.code, 0, twice.stderr);
    assert.equal(twice.stdout, "approved: weight 1 of 2, still pending\n");
    // Saying no after that is a second decision.
    const no = await cli(["reject", id, "--key", k.alice.file, "--json"], {
      env: ctx.publicEnv,
    });
    assert.equal(no.code, 1);
    assert.deepEqual(parseJson(no), {
      message: "this key has approved the intent",
      code: "already_approved",
    });

    const approved = await cli(["approve", id, "--key", k.bob.file], { env: ctx.publicEnv });
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stdout, "approved: accepted\n");

    const after = await cli(["approvals", id], { env: ctx.publicEnv });
    assert.equal(after.stdout, `intent ${id}: accepted\n`);
    assert.deepEqual(parseJson(await cli(["approvals", id, "--json"], { env: ctx.publicEnv })), {
      id,
      state: "accepted",
    });
    const late = await cli(["approve", id, "--key", k.carol.file], { env: ctx.publicEnv });
    assert.equal(late.code, 1);
    assert.match(late.stderr, /the intent is accepted \(not_pending\)/);

    const got = parseJson(await cli(["get", id, "--json"], { env: ctx.env }));
    assert.equal(got.state, "accepted");

    // The feed, human: one line per event with state and weight/threshold.
    const events = await cli(["events"], { env: ctx.env });
    assert.equal(events.code, 0, events.stderr);
    const lines = events.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2, events.stdout);
    assert.match(
      lines[0],
      new RegExp(`^1  \\S+  intent\\.pending\\s+  ${id}  pending 1/2  B policy`),
    );
    assert.match(
      lines[1],
      new RegExp(`^2  \\S+  intent\\.accepted\\s+  ${id}  accepted 2/2  B policy`),
    );
    const stream = await cli(["events", "--json"], { env: ctx.env });
    const types = stream.stdout.trimEnd().split("\n").map((line) => JSON.parse(line).type);
    assert.deepEqual(types, ["intent.pending", "intent.accepted"]);
  });
});

Deno.test("approve prints the weight while the intent stays pending; events show approval_added", async () => {
  await withServer(async (ctx) => {
    const k = await keys(ctx, ["alice", "bob", "carol"]);
    const policy = await governedPolicy(
      ctx,
      { [k.alice.pub]: 1, [k.bob.pub]: 1, [k.carol.pub]: 1 },
      3,
    );
    const { file, intent } = await signed(ctx, k.alice.file, policy);

    const submitted = await cli(["submit", file, "--json"], { env: ctx.publicEnv });
    assert.equal(submitted.code, 0, submitted.stderr);
    assert.equal(parseJson(submitted).state, "pending");

    const second = await cli(["approve", intent.id, "--key", k.bob.file], { env: ctx.publicEnv });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, "approved: weight 2 of 3, still pending\n");
    const third = await cli(["approve", intent.id, "--key", k.carol.file, "--json"], {
      env: ctx.publicEnv,
    });
    assert.deepEqual(parseJson(third), { id: intent.id, state: "accepted" });

    const events = await cli(["events"], { env: ctx.env });
    const summary = events.stdout.trimEnd().split("\n").map((line) =>
      line.split(/\s+/).slice(2, 5)
    );
    assert.deepEqual(summary, [
      ["intent.pending", intent.id, "pending"],
      ["intent.approval_added", intent.id, "pending"],
      ["intent.accepted", intent.id, "accepted"],
    ]);
    assert.match(events.stdout, /intent\.approval_added\s+\S+ {2}pending 2\/3/);

    // Under rules: the true rules, as the document writes them, and the kinds that count.
    const ruledPolicy = await governedPolicy(ctx, { [k.alice.pub]: 1, [k.bob.pub]: 1 }, 1, [
      { when: "intent.attrs.fields.amount > 10.0", threshold: 2 },
      { when: "intent.attrs.fields.amount > 1000.0", deny: "too much" },
      { when: "true", kinds: ["Ed25519"] },
    ]);
    const ruled = await signed(ctx, k.alice.file, ruledPolicy);
    const pending = await cli(["submit", ruled.file], { env: ctx.publicEnv });
    assert.equal(pending.code, 0, pending.stderr);
    const view = await cli(["approvals", ruled.intent.id], { env: ctx.publicEnv });
    assert.equal(view.code, 0, view.stderr);
    assert.match(
      view.stdout,
      /\n {2}under the document's rules: true 0, 2; kinds that count: Ed25519\n/,
    );
    assert.match(
      view.stdout,
      /\n {4}rules\[0\] when "intent.attrs.fields.amount > 10.0": threshold 2\n/,
    );
    assert.match(view.stdout, /\n {4}rules\[2\] when "true": kinds Ed25519\n/);
    assert.doesNotMatch(view.stdout, /rules\[1\]/);
    assert.match(view.stdout, /signers \(threshold 2\)/);
  });
});

Deno.test("reject says no with a key file: still pending, then rejected; the view and events show it", async () => {
  await withServer(async (ctx) => {
    const k = await keys(ctx, ["alice", "bob", "carol", "dave"]);
    // Threshold 3 of 4: one rejection leaves three; the second leaves two.
    const policy = await governedPolicy(
      ctx,
      { [k.alice.pub]: 1, [k.bob.pub]: 1, [k.carol.pub]: 1, [k.dave.pub]: 1 },
      3,
    );
    const { file, intent } = await signed(ctx, k.alice.file, policy);
    assert.equal((await cli(["submit", file], { env: ctx.publicEnv })).code, 0);

    const first = await cli(["reject", intent.id, "--key", k.bob.file], { env: ctx.publicEnv });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, "rejected by this key: weight 1 of 3, still pending\n");
    const view = await cli(["approvals", intent.id], { env: ctx.publicEnv });
    assert.match(
      view.stdout,
      new RegExp(`\\[-\\] ${k.bob.pub}\\s+weight 1  rejected at \\S+ \\(Ed25519\\)`),
    );
    assert.match(view.stdout, /reject challenge: [A-Za-z0-9_-]{43}\n/);
    // The same rejection again is the view; an approval by the same key is refused.
    const again = await cli(["reject", intent.id, "--key", k.bob.file], { env: ctx.publicEnv });
    assert.equal(again.code, 0, again.stderr);
    const turn = await cli(["approve", intent.id, "--key", k.bob.file], { env: ctx.publicEnv });
    assert.equal(turn.code, 1);
    assert.match(turn.stderr, /\(already_rejected\)/);

    const last = await cli(["reject", intent.id, "--key", k.carol.file, "--json"], {
      env: ctx.publicEnv,
    });
    assert.deepEqual(parseJson(last), { id: intent.id, state: "rejected" });
    const after = await cli(["approvals", intent.id], { env: ctx.publicEnv });
    assert.equal(after.stdout, `intent ${intent.id}: rejected\n`);
    const late = await cli(["approve", intent.id, "--key", k.dave.file], { env: ctx.publicEnv });
    assert.equal(late.code, 1);
    assert.match(late.stderr, /the intent is rejected \(not_pending\)/);

    const events = await cli(["events"], { env: ctx.env });
    const summary = events.stdout.trimEnd().split("\n").map((line) =>
      line.split(/\s+/).slice(2, 5)
    );
    assert.deepEqual(summary, [
      ["intent.pending", intent.id, "pending"],
      ["intent.rejection_added", intent.id, "pending"],
      ["intent.rejected", intent.id, "rejected"],
    ]);
  });
});

Deno.test("approvals and approve of an unknown id exit 1 with not_found; approve needs --key", async () => {
  await withServer(async (ctx) => {
    const missing = await cli(["approvals", "no-such-intent", "--json"], { env: ctx.publicEnv });
    assert.equal(missing.code, 1);
    assert.equal(parseJson(missing).code, "not_found");
    const k = await keys(ctx, ["alice"]);
    const approve = await cli(["approve", "no-such-intent", "--key", k.alice.file], {
      env: ctx.publicEnv,
    });
    assert.equal(approve.code, 1);
    assert.match(approve.stderr, /\(not_found\)/);
    const noKey = await cli(["approve", "some-id"], { env: ctx.publicEnv });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /--key is required/);
    const reject = await cli(["reject", "no-such-intent", "--key", k.alice.file], {
      env: ctx.publicEnv,
    });
    assert.equal(reject.code, 1);
    assert.match(reject.stderr, /\(not_found\)/);
    const rejectNoKey = await cli(["reject", "some-id"], { env: ctx.publicEnv });
    assert.equal(rejectNoKey.code, 2);
  });
});

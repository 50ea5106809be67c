/**
 * The measuring tools run end to end at small sizes: each spawns the real
 * server, drives it, and prints figures whose counts add up. (The figures of
 * speed are not asserted: they depend on the machine.)
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

async function runTool(
  script: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", join(root, script), ...args],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    out: decoder.decode(output.stdout),
    err: decoder.decode(output.stderr),
  };
}

Deno.test("load --spawn sends every body once, every one is accepted and covered by the log", async () => {
  const { code, out, err } = await runTool("tools/load/load.ts", [
    "--spawn",
    "--n",
    "200",
    "--warmup",
    "20",
    "--log-coverage",
    "--json",
  ]);
  assert.equal(code, 0, err);
  const figures = JSON.parse(out);
  assert.equal(figures.sent, 200);
  assert.deepEqual(figures.statuses, { "201": 200 });
  const coverage = figures.log_coverage_ms;
  assert.equal(coverage.measured, 200);
  assert.equal(coverage.not_covered, 0);
  assert.ok(coverage.checkpoints >= 1 && coverage.p50 <= coverage.max);
});

Deno.test("load --webhooks makes idle endpoints that receive nothing of the load", async () => {
  const { code, out, err } = await runTool("tools/load/load.ts", [
    "--spawn",
    "--n",
    "100",
    "--warmup",
    "0",
    "--webhooks",
    "3",
    "--json",
  ]);
  assert.equal(code, 0, err);
  const figures = JSON.parse(out);
  assert.deepEqual(figures.statuses, { "201": 100 });
  assert.deepEqual([figures.webhooks, figures.webhook_deliveries], [3, 0]);
});

Deno.test("load --base refuses a folder without the server script", async () => {
  const empty = await Deno.makeTempDir();
  try {
    const { code, err } = await runTool("tools/load/load.ts", ["--spawn", "--base", empty]);
    assert.equal(code, 2);
    assert.match(err, /there is no main\.ts in /);
  } finally {
    await Deno.remove(empty);
  }
});

Deno.test("feed-load --history reads every stored intent by pages, by one stream and by several", async () => {
  const { code, out, err } = await runTool("tools/feed_load/feed_load.ts", [
    "--history",
    "300",
    "--readers",
    "3",
    "--json",
  ]);
  assert.equal(code, 0, err);
  const figures = JSON.parse(out);
  assert.equal(figures.fill.intents, 300);
  assert.equal(figures.pull.events, 300);
  assert.equal(figures.stream.events, 300);
  assert.equal(figures.stream.same_last_id, true);
  assert.equal(figures.readers.events, 900);
  assert.equal(figures.readers.same_last_id, true);
});

Deno.test("feed-load --latency matches every 201 with its event on the stream", async () => {
  const { code, out, err } = await runTool("tools/feed_load/feed_load.ts", [
    "--latency",
    "--rate",
    "100",
    "--seconds",
    "2",
    "--warmup",
    "20",
    "--json",
  ]);
  assert.equal(code, 0, err);
  const figures = JSON.parse(out);
  assert.equal(figures.sent, 200);
  assert.equal(figures.accepted, 200);
  assert.equal(figures.delivered, 200);
  assert.equal(figures.missing_events, 0);
  assert.ok(figures.events_before_201 <= figures.delivered);
});

Deno.test("every measuring tool refuses an option it does not know: one line naming it, its usage, exit 2", async () => {
  const tools: [string, string][] = [
    ["tools/load/load.ts", "load"],
    ["tools/feed_load/feed_load.ts", "feed-load"],
    ["tools/approvals_load/approvals_load.ts", "approvals-load"],
    ["tools/webhook_load/webhook_load.ts", "webhooks-load"],
    ["tools/abuse_load/abuse_load.ts", "abuse-load"],
    ["tools/trickle/trickle.ts", "trickle"],
  ];
  for (const [script, name] of tools) {
    const { code, out, err } = await runTool(script, ["--", "--no-such-option", "1"]);
    assert.equal(code, 2, `${name}: ${err}`);
    assert.equal(out, "");
    const [first, usage, ...rest] = err.trimEnd().split("\n");
    assert.match(first, new RegExp(`^${name}: .*no-such-option`));
    assert.ok(usage.startsWith(`usage: deno task ${name} -- `), usage);
    assert.deepEqual(rest, []);
  }
});

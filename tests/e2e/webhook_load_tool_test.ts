/**
 * `deno task webhooks-load` runs end to end at a small size: it spawns the
 * real server, delivers a backlog and a steady rate to its own receiver, and
 * prints figures whose counts add up. (The speeds are not asserted: they
 * depend on the machine.)
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

Deno.test("webhooks-load delivers the backlog and every submission at the rate, in order", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      join(root, "tools/webhook_load/webhook_load.ts"),
      "--backlog",
      "200",
      "--rate",
      "50",
      "--seconds",
      "2",
      "--json",
    ],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const err = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, err);
  const figures = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(figures.backlog, 200);
  assert.equal(figures.latency_events, 100);
  assert.equal(figures.delivered, 300);
  assert.equal(figures.in_order, true);
  assert.ok(figures.events_per_second > 0);
  assert.ok(figures.p50_ms <= figures.p99_ms && figures.p99_ms <= figures.max_ms);
});

/**
 * The service's spans that end in batches (`src/telemetry/tracing.ts`,
 * docs/interface.md §13) as a real OTLP receiver gets them, on this Deno and
 * on the one Deno Deploy runs: each keeps the time it ended, not the time it
 * was handed to the runtime (read by the script on the same clock, at least
 * the 200 ms it held the event loop later), on the runtime's clock (it lies
 * inside the span the runtime stamped), and every one arrives, however many
 * end at once.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import { otelEnv, startOtlpReceiver } from "../support/otlp_receiver.ts";
import type { BatchedTimes } from "../support/batched_spans.ts";

const SCRIPT = fileURLToPath(new URL("../support/batched_spans.ts", import.meta.url));

/** An exported time (to the microsecond, truncated) against one read in the script. */
const MICROSECOND = 0.002;

async function batchedRun(deno: string): Promise<void> {
  const otlp = startOtlpReceiver();
  try {
    const run = await new Deno.Command(deno, {
      args: ["run", "-A", "--quiet", SCRIPT],
      env: otelEnv(otlp.endpoint),
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    const lines = new TextDecoder().decode(run.stdout).trim().split("\n");
    const times: BatchedTimes = JSON.parse(lines.at(-1)!);
    const named = (name: string) => otlp.spans.filter((s) => s.name === name);
    await otlp.until(
      () => named("test.parent").length === 1 && named("test.many").length === 600,
      10_000,
      "every span exported",
    );
    const [parent] = named("test.parent");
    const [child] = named("test.child");
    assert.equal(child.parentSpanId, parent.spanId);
    assert.equal(child.attributes["test.n"], 1);
    // Ended 5 ms (a timer's worth) after it started, with the time it was ended ...
    const took = child.endMs - child.startMs;
    assert.ok(took >= 4, `the child took ${took} ms`);
    const [ending, ended] = times.childEnded;
    assert.ok(
      child.endMs >= ending - MICROSECOND && child.endMs <= ended + MICROSECOND,
      `the child ended at ${child.endMs}, not between ${ending} and ${ended}`,
    );
    // ... not the time it was handed over, which came after the event loop was held.
    assert.ok(
      times.childHandedOver - ended >= 200,
      `handed over ${times.childHandedOver - ended} ms after it ended`,
    );
    assert.ok(child.startMs >= parent.startMs, "the child starts inside the runtime's span");
    assert.ok(child.endMs <= parent.endMs, "the child ends inside the runtime's span");
    assert.ok(named("test.many").every((s) => s.parentSpanId === parent.spanId));
    // Full batches went at once; the rest when their time was up.
    assert.ok(times.manyAtOnce > 0 && times.manyAtOnce < 600, `${times.manyAtOnce} at once`);
  } finally {
    await otlp.close();
  }
}

Deno.test("batched spans: their own end times, on the runtime's clock, all of them", async () => {
  await batchedRun(Deno.execPath());
});

Deno.test(`batched spans: the same on Deno ${DEPLOY_DENO}, as Deno Deploy runs it`, async () => {
  await batchedRun(await denoBinary(DEPLOY_DENO));
});

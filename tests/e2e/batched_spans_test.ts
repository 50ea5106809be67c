/**
 * The service's spans that end in batches (`src/telemetry/tracing.ts`,
 * docs/interface.md §13) as a real OTLP receiver gets them, on this Deno and
 * on the one Deno Deploy runs: each keeps the time it ended, not the time it
 * was handed to the runtime, on the runtime's clock (it lies inside the span
 * the runtime stamped), and every one arrives, however many end at once.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import { otelEnv, startOtlpReceiver } from "../support/otlp_receiver.ts";

const SCRIPT = fileURLToPath(new URL("../support/batched_spans.ts", import.meta.url));

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
    const took = child.endMs - child.startMs;
    // Ended 5 ms (a timer's worth) after it started; handed over more than 200 ms later.
    assert.ok(took >= 4 && took < 200, `the child took ${took} ms`);
    assert.ok(child.startMs >= parent.startMs, "the child starts inside the runtime's span");
    assert.ok(child.endMs <= parent.endMs, "the child ends inside the runtime's span");
    assert.ok(named("test.many").every((s) => s.parentSpanId === parent.spanId));
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

/**
 * Run with `OTEL_DENO=true` by `tests/e2e/batched_spans_test.ts`: spans the
 * service ends in batches (`endSpan`), under a span the runtime stamps.
 * `test.child` starts 5 ms into `test.parent` and ends 5 ms later, then the
 * event loop is held 200 ms before the batch can go; 600 `test.many` follow,
 * more than one batch holds, and the last of them go when their time is up.
 * @module
 */

import { endSpan, startBatchedSpan, startSpan } from "../../src/telemetry/tracing.ts";
import { sleep } from "./time.ts";

const parent = startSpan("test.parent");
if (parent === undefined) throw new Error("run with OTEL_DENO=true");
const under = { parent: parent.spanContext() };
await sleep(5);
const child = startBatchedSpan("test.child", { ...under, attributes: { "test.n": 1 } })!;
await sleep(5);
endSpan(child);
// Nothing else runs meanwhile: the child waits here to be handed over, ended already.
const until = performance.now() + 200;
while (performance.now() < until) {
  // held
}
for (let i = 0; i < 600; i++) endSpan(startBatchedSpan("test.many", under)!);
// Two batches of 256 went at once; the rest go when their time is up.
await sleep(300);
parent.end();

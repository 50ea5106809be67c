/**
 * Run with `OTEL_DENO=true` by `tests/e2e/batched_spans_test.ts`: spans the
 * service ends in batches (`endSpan`), under a span the runtime stamps.
 * `test.child` starts 5 ms into `test.parent` and ends 5 ms later, then the
 * event loop is held 200 ms before the batch can go; 600 `test.many` follow,
 * more than one batch holds, and the last of them go when their time is up.
 * Each span's hand-over to the runtime (its `end`) is watched, so the script
 * waits for it rather than for a while, and prints, on the clock spans are
 * stamped with (`spanTime`), when the child was ended and when it was handed
 * over: one line of JSON, {@link BatchedTimes}.
 * @module
 */

import type { Span } from "@opentelemetry/api";
import { endSpan, spanTime, startBatchedSpan, startSpan } from "../../src/telemetry/tracing.ts";
import { sleep, until } from "./time.ts";

/** What the script prints: times in ms since the epoch, on `spanTime`'s clock. */
export interface BatchedTimes {
  /** Read just before and just after `endSpan(child)`. */
  childEnded: [number, number];
  /** When the child was handed to the runtime. */
  childHandedOver: number;
  /** How many `test.many` were handed over at once as the 600th was ended. */
  manyAtOnce: number;
}

/** Counts each hand-over of `span` to the runtime, and calls `seen` with its time. */
function watched(span: Span, seen: (at: number) => void): Span {
  const end = span.end.bind(span);
  span.end = (time) => {
    seen(spanTime());
    end(time);
  };
  return span;
}

const parent = startSpan("test.parent");
if (parent === undefined) throw new Error("run with OTEL_DENO=true");
const under = { parent: parent.spanContext() };
await sleep(5);
let childHandedOver = 0;
const child = watched(
  startBatchedSpan("test.child", { ...under, attributes: { "test.n": 1 } })!,
  (at) => childHandedOver = at,
);
await sleep(5);
const before = spanTime();
endSpan(child);
const childEnded: [number, number] = [before, spanTime()];
// Nothing else runs meanwhile: the child waits here to be handed over, ended already.
const held = performance.now() + 200;
while (performance.now() < held) {
  // held
}
let many = 0;
const spans = Array.from(
  { length: 600 },
  () => watched(startBatchedSpan("test.many", under)!, () => many++),
);
for (const span of spans) endSpan(span);
// Two batches of 256 went at once; the rest go when their time is up.
const manyAtOnce = many;
await until(() => many === 600, 10_000, "the last batch handed over");
parent.end();
const times: BatchedTimes = { childEnded, childHandedOver, manyAtOnce };
console.log(JSON.stringify(times));

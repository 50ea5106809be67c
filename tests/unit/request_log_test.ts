import assert from "node:assert/strict";
import { createBatchedLog, type RequestLogLine } from "../../src/http/request_log.ts";
import { sleep } from "../support/time.ts";

function line(n: number): RequestLogLine {
  return {
    time: "2026-01-01T00:00:00.000Z",
    request_id: `r${n}`,
    method: "POST",
    path: "/intents",
    status: 201,
    duration_ms: n,
  };
}

function collector() {
  const writes: string[] = [];
  const decoder = new TextDecoder();
  return { writes, write: (bytes: Uint8Array) => void writes.push(decoder.decode(bytes)) };
}

Deno.test("request log: lines of one burst go out in one write, in order, after flushMs", async () => {
  const out = collector();
  const log = createBatchedLog({ write: out.write, flushMs: 5 });
  for (let i = 0; i < 100; i++) log.log(line(i));
  assert.equal(out.writes.length, 0);
  await sleep(30);
  assert.equal(out.writes.length, 1);
  const lines = out.writes[0].split("\n");
  assert.equal(lines.pop(), "");
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).request_id),
    [...Array(100)].map((_, i) => `r${i}`),
  );
});

Deno.test("request log: a full buffer is written at once; flush writes the rest", () => {
  const out = collector();
  const one = JSON.stringify(line(0)).length + 1;
  const log = createBatchedLog({ write: out.write, flushMs: 60_000, maxChars: one * 10 });
  for (let i = 0; i < 25; i++) log.log(line(i));
  assert.equal(out.writes.length, 2);
  log.flush();
  assert.equal(out.writes.length, 3);
  const ids = out.writes.join("").trim().split("\n").map((l) => JSON.parse(l).request_id);
  assert.deepEqual(ids, [...Array(25)].map((_, i) => `r${i}`));
  // Nothing pending: flush writes nothing and no timer is left behind.
  log.flush();
  assert.equal(out.writes.length, 3);
});

Deno.test("request log: a write that fails (a closed pipe) drops the lines, never throws", async () => {
  let calls = 0;
  const log = createBatchedLog({
    write: () => {
      calls++;
      throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
    },
    flushMs: 1,
    maxChars: 300,
  });
  for (let i = 0; i < 10; i++) log.log(line(i)); // passes maxChars: written at once
  await sleep(20); // and on the timer
  log.log(line(10));
  log.flush();
  assert.ok(calls >= 3, `${calls} writes`);
});

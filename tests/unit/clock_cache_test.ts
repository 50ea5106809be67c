import assert from "node:assert/strict";
import { ClockCache } from "../../src/clock_cache.ts";

Deno.test("ClockCache keeps at most its capacity and evicts the least recently used", () => {
  const cache = new ClockCache<number>(3);
  cache.set("a", 1);
  cache.set("b", 2);
  cache.set("c", 3);
  assert.equal(cache.get("a"), 1); // a is now the most recent
  cache.set("d", 4);
  assert.equal(cache.size, 3);
  assert.equal(cache.get("b"), undefined);
  assert.equal(cache.get("a"), 1);
  assert.equal(cache.get("c"), 3);
  assert.equal(cache.get("d"), 4);
  assert.throws(() => new ClockCache(0), RangeError);
});

Deno.test("ClockCache gives a second chance to entries read since eviction passed them", () => {
  const cache = new ClockCache<number>(4);
  for (const [i, key] of ["a", "b", "c", "d"].entries()) cache.set(key, i);
  cache.get("a");
  cache.get("c");
  cache.set("e", 4); // a and c were read: b, the oldest unread, goes
  assert.equal(cache.get("b"), undefined);
  cache.set("f", 5); // a and c lost their mark when passed over: d goes next
  assert.equal(cache.get("d"), undefined);
  cache.set("g", 6); // nothing read since: the oldest in line, e, goes (a and c went round)
  assert.deepEqual(["a", "c", "e", "f", "g"].map((k) => cache.get(k)), [0, 2, undefined, 5, 6]);
  assert.equal(cache.size, 4);
});

Deno.test("ClockCache never holds more than its capacity, whatever is read", () => {
  const cache = new ClockCache<number>(8);
  for (let i = 0; i < 1000; i++) {
    cache.set(`k${i}`, i);
    for (let j = Math.max(0, i - 5); j <= i; j++) cache.get(`k${j}`);
    assert.ok(cache.size <= 8);
  }
  assert.equal(cache.get("k999"), 999);
  cache.set("k999", -1);
  assert.equal(cache.get("k999"), -1);
  cache.delete("k999");
  assert.equal(cache.get("k999"), undefined);
});

Deno.test("ClockCache lists its keys oldest first, without marking them", () => {
  const cache = new ClockCache<number>(2);
  cache.set("a", 1);
  cache.set("b", 2);
  assert.deepEqual([...cache.keys()], ["a", "b"]);
  cache.set("c", 3);
  assert.deepEqual([...cache.keys()], ["b", "c"]);
});

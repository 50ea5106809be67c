import assert from "node:assert/strict";
import { LruCache } from "../../src/lru.ts";

Deno.test("LruCache keeps at most its capacity and evicts the least recently used", () => {
  const cache = new LruCache<number>(3);
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
  assert.throws(() => new LruCache(0), RangeError);
});

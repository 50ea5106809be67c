/** Unit tests of the token buckets and their headers, on a fake clock. */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DEFAULT_MAX_BUCKETS,
  type RateLimitDecision,
  RateLimiter,
  type RateLimiterOptions,
  rateLimitHeaders,
} from "../../src/http/rate_limit.ts";

/** A limiter on a clock that moves only when told. */
function fakeClock(options: Omit<RateLimiterOptions, "now" | "policy"> & { policy?: string }) {
  let ms = 1_000_000; // not 0: the limiter must count from its own start
  const limiter = new RateLimiter({ policy: "address", ...options, now: () => ms });
  return { limiter, advance: (by: number) => void (ms += by) };
}

/** The fields that vary, for compact comparisons. */
function brief(d: RateLimitDecision) {
  return {
    allowed: d.allowed,
    remaining: d.remaining,
    resetS: d.resetS,
    retryAfterS: d.retryAfterS,
  };
}

Deno.test("RateLimiter allows a burst of twice the rate, then refuses", () => {
  const { limiter } = fakeClock({ ratePerSecond: 5 });
  assert.equal(limiter.capacity, 10);
  for (let i = 1; i <= 10; i++) {
    const d = limiter.take("a");
    assert.equal(d.allowed, true, `request ${i}`);
    assert.equal(d.remaining, 10 - i);
    assert.equal(d.resetS, Math.ceil(i / 5), `request ${i}`);
    assert.equal(d.retryAfterS, 0);
  }
  assert.deepEqual(brief(limiter.take("a")), {
    allowed: false,
    remaining: 0,
    resetS: 2,
    retryAfterS: 1,
  });
  // Buckets are per key.
  assert.equal(limiter.take("b").remaining, 9);
});

Deno.test("RateLimiter refills at the rate, up to the capacity", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 5 });
  for (let i = 0; i < 10; i++) limiter.take("a");
  advance(199);
  assert.equal(limiter.take("a").allowed, false, "0.995 tokens are not one");
  advance(1);
  assert.deepEqual(brief(limiter.take("a")), {
    allowed: true,
    remaining: 0,
    resetS: 2,
    retryAfterS: 0,
  });
  advance(60_000);
  assert.deepEqual(brief(limiter.check("a")), {
    allowed: true,
    remaining: 9,
    resetS: 1,
    retryAfterS: 0,
  });
  assert.equal(limiter.take("a").remaining, 9, "a long pause refills no more than the capacity");
});

Deno.test("RateLimiter rounds remaining down and both waits up", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 1 });
  limiter.take("a");
  limiter.take("a");
  advance(500); // 0.5 tokens: none whole, 1.5 s until full, 0.5 s until one
  assert.deepEqual(brief(limiter.take("a")), {
    allowed: false,
    remaining: 0,
    resetS: 2,
    retryAfterS: 1,
  });
  advance(500);
  assert.deepEqual(brief(limiter.take("a")), {
    allowed: true,
    remaining: 0,
    resetS: 2,
    retryAfterS: 0,
  });
  advance(1500); // 1.5 tokens
  assert.deepEqual(brief(limiter.check("a")), {
    allowed: true,
    remaining: 0,
    resetS: 2,
    retryAfterS: 0,
  });
  const { limiter: slow } = fakeClock({ ratePerSecond: 1 });
  slow.take("a", 2);
  assert.equal(slow.take("a", 2).retryAfterS, 2, "two tokens at one a second take two seconds");
});

Deno.test("RateLimiter is exact at rates that do not divide a second", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 3 });
  for (let i = 0; i < 6; i++) assert.equal(limiter.take("a").allowed, true);
  assert.equal(limiter.take("a").allowed, false);
  advance(333);
  assert.equal(limiter.take("a").allowed, false, "333 ms refill 0.999 tokens");
  advance(1);
  assert.equal(limiter.take("a").allowed, true, "334 ms refill 1.002 tokens");
  advance(1666); // 2000 ms after the burst: 6 tokens refilled, 7 spent, 5 left
  assert.equal(limiter.check("a").remaining, 4, "what a take would leave");
  assert.equal(limiter.check("a").resetS, 1);
});

Deno.test("RateLimiter reads a fractional clock in whole milliseconds", () => {
  let ms = 10.9;
  const limiter = new RateLimiter({ policy: "p", ratePerSecond: 1, now: () => ms });
  limiter.take("a");
  limiter.take("a");
  ms = 1010.8; // 999.9 ms later, read as 1000
  assert.equal(limiter.take("a").allowed, true);
});

Deno.test("RateLimiter never allows more than the capacity plus the refill", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 300 }),
      (rate, gaps) => {
        const { limiter, advance } = fakeClock({ ratePerSecond: rate });
        let allowed = 0;
        let elapsed = 0;
        for (const gap of gaps) {
          advance(gap);
          elapsed += gap;
          if (limiter.take("k").allowed) allowed++;
          assert.ok(allowed <= 2 * rate + Math.floor((elapsed * rate) / 1000));
        }
      },
    ),
  );
});

Deno.test("RateLimiter evicts a bucket not used lately past its bound", () => {
  const { limiter } = fakeClock({ ratePerSecond: 1, maxBuckets: 3 });
  for (const key of ["a", "b", "c"]) limiter.take(key);
  limiter.take("a"); // a is now the most recently used: b is the oldest
  limiter.take("d");
  assert.equal(limiter.size, 3);
  assert.equal(limiter.check("b").remaining, 1, "b was dropped: its bucket is full again");
  assert.equal(limiter.check("a").allowed, false, "a kept its spent bucket");
  assert.equal(limiter.check("c").remaining, 0, "c kept its spent bucket");
  // Checks count as use too: a and c were checked after d was stored, so d goes next.
  limiter.take("e");
  assert.equal(limiter.check("d").remaining, 1);
  assert.equal(limiter.check("c").remaining, 0);
});

Deno.test("RateLimiter keeps at most its bound of buckets", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 10, maxBuckets: 100 });
  for (let i = 0; i < 10_000; i++) {
    limiter.take(`203.0.113.${i}`);
    if (i % 7 === 0) advance(1);
    assert.ok(limiter.size <= 100);
  }
  assert.equal(limiter.size, 100);
  assert.equal(new RateLimiter({ policy: "p", ratePerSecond: 1 }).maxBuckets, DEFAULT_MAX_BUCKETS);
});

Deno.test("RateLimiter stores nothing for a key that only looks, or whose bucket refilled", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 2 });
  assert.equal(limiter.check("a").remaining, 3, "what a take would leave");
  assert.equal(limiter.size, 0);
  limiter.take("a");
  assert.equal(limiter.size, 1);
  advance(500);
  assert.equal(limiter.check("a").remaining, 3);
  assert.equal(limiter.size, 0, "a full bucket needs no entry");
});

Deno.test("RateLimiter checks without spending and spends later", () => {
  const { limiter } = fakeClock({ ratePerSecond: 1 }); // capacity 2
  for (let i = 0; i < 5; i++) assert.equal(limiter.check("k").allowed, true);
  assert.equal(limiter.check("k").remaining, 1, "checks spent nothing");
  assert.deepEqual(brief(limiter.spend("k")), {
    allowed: true,
    remaining: 1,
    resetS: 1,
    retryAfterS: 0,
  });
  assert.equal(limiter.check("k").allowed, true);
  limiter.spend("k");
  assert.deepEqual(brief(limiter.check("k")), {
    allowed: false,
    remaining: 0,
    resetS: 2,
    retryAfterS: 1,
  });
});

Deno.test("RateLimiter lets concurrent spends go into debt, repaid before the next request", () => {
  const { limiter, advance } = fakeClock({ ratePerSecond: 1 }); // capacity 2
  limiter.spend("k");
  // Two requests pass the check on the last token, then both commit.
  assert.equal(limiter.check("k").allowed, true);
  assert.equal(limiter.check("k").allowed, true);
  limiter.spend("k");
  const debt = limiter.spend("k");
  assert.deepEqual(brief(debt), { allowed: false, remaining: 0, resetS: 3, retryAfterS: 2 });
  advance(1999);
  assert.equal(limiter.check("k").allowed, false);
  advance(1);
  assert.equal(limiter.check("k").allowed, true);
});

Deno.test("RateLimiter.checkAll reports the most constrained key, and spendAll spends each", () => {
  const { limiter } = fakeClock({ policy: "signer", ratePerSecond: 2 }); // capacity 4
  limiter.spendAll(["a", "b", "b"]);
  assert.equal(limiter.checkAll(["a", "b", "c"]).remaining, 1, "b has one token after this one");
  limiter.spendAll(["b", "b"]);
  const refused = limiter.checkAll(["a", "b", "c"]);
  assert.equal(refused.allowed, false);
  assert.equal(refused.policy, "signer");
  assert.deepEqual(brief(limiter.checkAll([])), {
    allowed: true,
    remaining: 3,
    resetS: 1,
    retryAfterS: 0,
  });
});

Deno.test("RateLimiter with rate 0 allows everything, stores nothing and adds no headers", () => {
  const { limiter } = fakeClock({ ratePerSecond: 0 });
  assert.equal(limiter.enabled, false);
  for (let i = 0; i < 1000; i++) {
    assert.equal(limiter.take(`k${i % 3}`).allowed, true);
    assert.equal(limiter.check("k").allowed, true);
    limiter.spend("k", 5);
  }
  assert.equal(limiter.size, 0);
  const d = limiter.take("k");
  assert.equal(d.limited, false);
  assert.deepEqual(rateLimitHeaders([d]), {});
  assert.equal(limiter.checkAll(["a", "b"]).limited, false);
});

Deno.test("RateLimiter refuses a bad cost or configuration", () => {
  const { limiter } = fakeClock({ ratePerSecond: 1 });
  for (const cost of [0, -1, 1.5, NaN, Infinity]) {
    assert.throws(() => limiter.take("k", cost), RangeError, String(cost));
    assert.throws(() => limiter.spend("k", cost), RangeError, String(cost));
  }
  assert.throws(() => limiter.take("k", 3), RangeError, "more than the capacity never fits");
  assert.throws(() => limiter.check("k", 3), RangeError);
  assert.equal(limiter.size, 0);
  const bad: Partial<RateLimiterOptions>[] = [
    { ratePerSecond: -1 },
    { ratePerSecond: 0.5 },
    { ratePerSecond: NaN },
    { ratePerSecond: 1, maxBuckets: 0 },
    { ratePerSecond: 1, maxBuckets: 1.5 },
    { ratePerSecond: 1, policy: "" },
    { ratePerSecond: 1, policy: "é" },
    { ratePerSecond: 1, policy: "a\nb" },
  ];
  for (const options of bad) {
    assert.throws(
      () => new RateLimiter({ policy: "p", ratePerSecond: 1, ...options }),
      RangeError,
      JSON.stringify(options),
    );
  }
});

Deno.test("rateLimitHeaders writes the address policy exactly as §12 pins it", () => {
  const { limiter } = fakeClock({ ratePerSecond: 50 });
  const headers = new Headers(rateLimitHeaders([limiter.take("192.0.2.1")]));
  assert.equal(headers.get("RateLimit-Policy"), '"address";q=100;w=2');
  assert.equal(headers.get("RateLimit"), '"address";r=99;t=1');
  assert.equal(headers.get("Retry-After"), null, "no Retry-After on an allowed request");
  assert.deepEqual([...headers.keys()], ["ratelimit", "ratelimit-policy"]);
});

Deno.test("rateLimitHeaders on a 429 for the address carries Retry-After", () => {
  const { limiter } = fakeClock({ ratePerSecond: 1 });
  limiter.take("a");
  limiter.take("a");
  assert.deepEqual(rateLimitHeaders([limiter.take("a")]), {
    "ratelimit-policy": '"address";q=2;w=2',
    "ratelimit": '"address";r=0;t=2',
    "retry-after": "1",
  });
});

Deno.test("rateLimitHeaders on a 429 for a key names both policies, the signer's last", () => {
  const { limiter: address } = fakeClock({ ratePerSecond: 50 });
  const { limiter: signer, advance } = fakeClock({ policy: "signer", ratePerSecond: 10 });
  for (let i = 0; i < 20; i++) signer.spend("key");
  advance(50); // half a token back: one whole token is 50 ms away
  const headers = rateLimitHeaders([address.take("192.0.2.1"), signer.check("key")]);
  assert.deepEqual(headers, {
    "ratelimit-policy": '"address";q=100;w=2, "signer";q=20;w=2',
    "ratelimit": '"address";r=99;t=1, "signer";r=0;t=2',
    "retry-after": "1",
  });
  // The longest wait among the refusals wins.
  const { limiter: a } = fakeClock({ ratePerSecond: 1 });
  a.take("x", 2);
  const twoSeconds = a.check("x", 2);
  const oneSecond = a.check("x", 1);
  assert.equal(rateLimitHeaders([oneSecond, twoSeconds])["retry-after"], "2");
});

Deno.test("rateLimitHeaders quotes a policy name as a structured-field String", () => {
  const limiter = new RateLimiter({ policy: 'a "b" \\c', ratePerSecond: 1, now: () => 0 });
  const headers = rateLimitHeaders([limiter.check("k")]);
  assert.equal(headers["ratelimit-policy"], '"a \\"b\\" \\\\c";q=2;w=2');
  assert.deepEqual(rateLimitHeaders([]), {});
});

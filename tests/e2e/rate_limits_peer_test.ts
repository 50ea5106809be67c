/**
 * The rate limits through a real server (docs/interface.md §12): the peer address
 * `Deno.serve` reports reaches the limiter, `X-Forwarded-For` counts only
 * behind `TRUSTED_PROXIES`, and the defaults are on for a server started
 * without any limit setting, wrong bearer tokens included. A budget refills
 * while the requests are sent, so what each may let in is measured against
 * the time the requests took here ({@link Budget}): on a quick machine
 * exactly its capacity.
 */

import assert from "node:assert/strict";
import { withProcess } from "../support/process.ts";

/**
 * What a budget of `capacity` refilled at `perSecond` may have let in since
 * it was made (made before the first request is sent): the capacity and
 * every whole token refilled meanwhile.
 */
class Budget {
  readonly #since = performance.now();
  /** What it holds when full: what it lets in at once. */
  readonly capacity: number;
  readonly #perSecond: number;

  constructor(options: { capacity: number; perSecond: number }) {
    this.capacity = options.capacity;
    this.#perSecond = options.perSecond;
  }

  /** The most it may have let in so far. */
  most(): number {
    const refilled = Math.floor((performance.now() - this.#since) / 1000 * this.#perSecond);
    return this.capacity + refilled;
  }
}

/**
 * Sends `request(i)` one after another until one is refused with 429 (at
 * most `limit`), and returns their statuses.
 */
async function untilRefused(
  request: (i: number) => Promise<number>,
  limit: number,
): Promise<number[]> {
  const statuses: number[] = [];
  while (statuses.at(-1) !== 429) {
    assert.ok(statuses.length < limit, `no 429 in ${limit} requests: ${statuses}`);
    statuses.push(await request(statuses.length));
  }
  return statuses;
}

/**
 * Asserts that `statuses` are `allowed` answers, at least `least` (default:
 * the budget's capacity) and no more than the budget may have let in, then
 * one 429.
 */
function expectSpent(
  statuses: number[],
  options: { allowed: number; budget: Budget; least?: number },
): void {
  const { allowed, budget, least = budget.capacity } = options;
  const most = budget.most();
  const admitted = statuses.length - 1;
  assert.deepEqual(statuses, [...Array(admitted).fill(allowed), 429]);
  assert.ok(
    admitted >= least && admitted <= most,
    `${admitted} let in, at least ${least}, at most ${most}`,
  );
}

/** `POST /intents` with a body that is not JSON (a 400 once let in), with `headers`. */
async function post(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{",
  });
  await response.body?.cancel();
  return response;
}

Deno.test("the defaults are on: a burst of 100 from one address, then 429", async () => {
  // Empty values are the defaults, as if the variables were not set.
  const env = { RATE_LIMIT_PER_ADDRESS: "", RATE_LIMIT_PER_SIGNER: "" };
  await withProcess({ env }, async (h) => {
    // 50 a second, bursts of 100: of 160 at once, 100 and what refilled meanwhile get in. Where
    // 160 took so long that the refill let them all in, another 160 follow, until a 429.
    const budget = new Budget({ capacity: 100, perSecond: 50 });
    const answers: Response[] = [];
    for (let round = 0; !answers.some((a) => a.status === 429); round++) {
      assert.ok(round < 10, "no 429 in 10 bursts of 160");
      answers.push(...await Promise.all(Array.from({ length: 160 }, () => post(h.url))));
    }
    const most = budget.most();
    const allowed = answers.filter((a) => a.status === 400);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(allowed.length + refused.length, answers.length);
    assert.ok(allowed.length >= 100 && allowed.length <= most, `${allowed.length} let in`);
    for (const answer of answers) {
      assert.equal(answer.headers.get("ratelimit-policy"), '"address";q=100;w=2');
    }
    for (const answer of refused) assert.ok(Number(answer.headers.get("retry-after")) >= 1);
  });
});

Deno.test("the peer is the client, unless it is a trusted proxy naming one", async () => {
  // 1 a second, bursts of 2.
  const env = { RATE_LIMIT_PER_ADDRESS: "1" };
  const budget = () => new Budget({ capacity: 2, perSecond: 1 });
  await withProcess({ env }, async (h) => {
    // Not trusted: whatever X-Forwarded-For says, the peer (127.0.0.1) is one client.
    const spent = budget();
    const statuses = await untilRefused(
      async (i) => (await post(h.url, { "x-forwarded-for": `203.0.113.${i}` })).status,
      50,
    );
    expectSpent(statuses, { allowed: 400, budget: spent });
  });
  await withProcess({ env: { ...env, TRUSTED_PROXIES: "127.0.0.1" } }, async (h) => {
    // Trusted: each address it names is a client of its own; without one, the proxy is.
    for (let i = 0; i < 3; i++) {
      const response = await post(h.url, { "x-forwarded-for": `203.0.113.${i}` });
      assert.equal(response.status, 400);
      assert.equal(response.headers.get("ratelimit"), '"address";r=1;t=1');
    }
    const spent = budget();
    const statuses = await untilRefused(async () => (await post(h.url)).status, 50);
    expectSpent(statuses, { allowed: 400, budget: spent });
  });
});

/** `GET /intents` with `token` as the bearer token, with `headers`. */
async function list(url: string, token: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/intents`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * Spends the `"auth"` budget with wrong tokens (sent with `headers`) until a
 * 429, then sends the right one with `rightHeaders`: refused while the budget
 * is empty. Where the right one got in, a token refilled since that 429 (the
 * budget may have let in one more than the wrong ones it took): it is spent
 * again, and the right one sent again.
 */
async function expectRightTokenRefused(options: {
  url: string;
  adminToken: string;
  headers: Record<string, string>;
  rightHeaders: Record<string, string>;
}): Promise<void> {
  // 20 a minute: one token every 3 s.
  const budget = new Budget({ capacity: 20, perSecond: 20 / 60 });
  let taken = 0;
  for (let round = 0;; round++) {
    assert.ok(round < 10, "the right token got in 10 times: the machine is slower than the refill");
    const statuses = await untilRefused(
      (i) => list(options.url, `guess-${round}-${i}-0123456789abcdef`, options.headers),
      100,
    );
    // The first time, the whole budget; later, what refilled.
    expectSpent(statuses, { allowed: 401, budget, least: round === 0 ? budget.capacity : 0 });
    taken += statuses.length - 1;
    assert.ok(taken <= budget.most(), `${taken} wrong tokens let in`);
    const right = await list(options.url, options.adminToken, options.rightHeaders);
    if (right === 429) return;
    assert.equal(right, 200);
    assert.ok(taken + 1 <= budget.most(), `the right token got in after ${taken} wrong ones`);
  }
}

Deno.test("20 wrong tokens a minute by default; then the right one is refused too, behind an untrusted proxy for everyone", async () => {
  const env = { RATE_LIMIT_AUTH_FAILURES: "" };
  await withProcess({ env }, async (h) => {
    // Every client behind this address (here: every client, since nothing is a trusted proxy).
    await expectRightTokenRefused({
      url: h.url,
      adminToken: h.adminToken,
      headers: {},
      rightHeaders: { "x-forwarded-for": "203.0.113.7" },
    });
  });
  await withProcess({ env: { ...env, TRUSTED_PROXIES: "127.0.0.1" } }, async (h) => {
    // Behind a trusted proxy only the guesser it names is locked out.
    const guesser = { "x-forwarded-for": "203.0.113.66" };
    await expectRightTokenRefused({
      url: h.url,
      adminToken: h.adminToken,
      headers: guesser,
      rightHeaders: guesser,
    });
    assert.equal(await list(h.url, h.adminToken, { "x-forwarded-for": "203.0.113.7" }), 200);
  });
});

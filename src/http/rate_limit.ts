/**
 * Per-process token buckets for the rate limits of docs/interface.md §12, and
 * the `RateLimit-Policy`, `RateLimit` and `Retry-After` headers that report
 * them (draft-ietf-httpapi-ratelimit-headers-10); `limits.ts` applies them.
 *
 * A key's {@link RateLimiter.check} only looks and its {@link RateLimiter.spend}
 * comes once the work is done, so requests of one key in flight at once may
 * all pass on its last token: the bucket then goes into debt and the key waits
 * until refill repays it. A reservation refunded on failure would close that
 * gap, but replays of a key's bodies sent by others would then hold its tokens
 * while in flight, which §12 rules out.
 *
 * `Retry-After` is the earliest whole second at which the refused request
 * would pass, often less than `t` (the draft's advice that it not be earlier
 * presumes `t` means "until some quota returns"; here it means "until full").
 * @module
 */

import { ClockCache } from "../clock_cache.ts";
import type { LimitSettings } from "../limits_settings.ts";

/** The window `w` of the per-second policies: a full bucket lasts two seconds at the full rate. */
const RATE_LIMIT_WINDOW_S = 2;

/** The buckets a limiter keeps at most, unless told otherwise (docs/interface.md §12). */
export const DEFAULT_MAX_BUCKETS = 100_000;

/** The outcome of a check, take or spend on one bucket. */
export interface RateLimitDecision {
  /** The policy name the headers show (`"address"`, `"signer"`, `"auth"`). */
  readonly policy: string;
  /** False when the limiter is off (rate 0): always allowed, and no headers. */
  readonly limited: boolean;
  /** The bucket's capacity, `q` of `RateLimit-Policy`. */
  readonly quota: number;
  /** The seconds an empty bucket takes to fill, `w` of `RateLimit-Policy`. */
  readonly windowS: number;
  /** Whether the request is within the budget. */
  readonly allowed: boolean;
  /** Whole tokens left after this decision, at least 0 (`r`); `Infinity` when not limited. */
  readonly remaining: number;
  /** Seconds until the bucket is full, rounded up (`t`). */
  readonly resetS: number;
  /** When refused, whole seconds (at least 1) until the request would be allowed; else 0. */
  readonly retryAfterS: number;
}

/** How a {@link RateLimiter} is built. */
export interface RateLimiterOptions {
  /** The name the headers give this limit; printable ASCII. */
  policy: string;
  /**
   * Tokens refilled per second, a whole number; bursts up to twice that (a
   * window of 2 s). 0: no limit. Give this or `capacity` and `windowS`.
   */
  ratePerSecond?: number;
  /** Tokens a full bucket holds, a whole number; 0: no limit. */
  capacity?: number;
  /** Whole seconds an empty bucket takes to fill again. */
  windowS?: number;
  /** Buckets kept at most; past it, one not used lately goes (CLOCK). Default 100,000. */
  maxBuckets?: number;
  /** A monotonic clock in milliseconds; default `performance.now`. */
  now?: () => number;
}

/** Whether `value` is a safe integer of at least `min`. */
function isWhole(value: number | undefined, min: number): value is number {
  return Number.isSafeInteger(value) && value! >= min;
}

function checkCost(cost: number): void {
  if (!Number.isSafeInteger(cost) || cost < 1) {
    throw new RangeError(`Cannot spend tokens: cost must be a positive integer`);
  }
}

/**
 * Token buckets keyed by string: each holds up to `2 × ratePerSecond` tokens
 * and refills at `ratePerSecond`. A bucket that is full is not stored, so
 * looking at a key that spent nothing lately costs no memory.
 *
 * Each stored bucket is one number, the time (in token units of refill) at
 * which it is full again, kept in the one bounded cache (`ClockCache`): past
 * `maxBuckets` one not used lately goes (coming back full). The clock
 * is read in whole milliseconds from construction, so refill and rounding are
 * exact integer sums.
 *
 * @example
 * ```ts ignore
 * const limiter = new RateLimiter({ policy: "address", ratePerSecond: 50 });
 * const decision = limiter.take("192.0.2.1");
 * if (!decision.allowed) return tooMany(rateLimitHeaders([decision]));
 * ```
 */
export class RateLimiter {
  /** The name the headers give this limit. */
  readonly policy: string;
  /** Tokens a full bucket holds; 0 when off. */
  readonly capacity: number;
  /** Seconds an empty bucket takes to fill. */
  readonly windowS: number;
  /** Buckets kept at most. */
  readonly maxBuckets: number;
  readonly #now: () => number;
  readonly #origin: number;
  /** Units a token is, and units refilled per millisecond: whole numbers, so sums stay exact. */
  readonly #unitsPerToken: number;
  readonly #unitsPerMs: number;
  readonly #capacityUnits: number;
  /**
   * Key → the refill time (token units since origin) at which the bucket is
   * full; past `maxBuckets`, a bucket not used lately goes (it starts full).
   */
  readonly #fullAt: ClockCache<number>;
  readonly #unlimited: RateLimitDecision;

  /** @throws {RangeError} for a rate or bound that is not a suitable whole number. */
  constructor(options: RateLimiterOptions) {
    const { policy, ratePerSecond: rate, maxBuckets = DEFAULT_MAX_BUCKETS } = options;
    const capacity = rate === undefined ? options.capacity : rate * RATE_LIMIT_WINDOW_S;
    const windowS = rate === undefined ? options.windowS : RATE_LIMIT_WINDOW_S;
    if (
      !/^[\x20-\x7e]+$/.test(policy) || (rate !== undefined && !isWhole(rate, 0)) ||
      !isWhole(capacity, 0) || !isWhole(windowS, 1) || !isWhole(maxBuckets, 1)
    ) {
      throw new RangeError(
        "Cannot create RateLimiter: the policy must be printable ASCII, the rate or capacity " +
          "a whole number, windowS and maxBuckets positive integers",
      );
    }
    this.policy = policy;
    this.capacity = capacity;
    this.windowS = windowS;
    this.maxBuckets = maxBuckets;
    this.#fullAt = new ClockCache(maxBuckets);
    this.#now = options.now ?? (() => performance.now());
    this.#origin = Math.floor(this.#now());
    // A full bucket is capacity × unitsPerToken units, refilled in windowS × 1000 ms: with
    // unitsPerToken = windowS × 1000 / g and capacity / g units a millisecond, g their common
    // divisor, both are whole (1000 units a token and the rate a millisecond for w = 2).
    const g = gcd(Math.max(capacity, 1), windowS);
    this.#unitsPerToken = (windowS * 1000) / g;
    this.#unitsPerMs = capacity / g;
    this.#capacityUnits = this.capacity * this.#unitsPerToken;
    this.#unlimited = Object.freeze({
      policy,
      limited: false,
      quota: 0,
      windowS,
      allowed: true,
      remaining: Infinity,
      resetS: 0,
      retryAfterS: 0,
    });
  }

  /** Whether the limiter limits anything (its rate is not 0). */
  get enabled(): boolean {
    return this.capacity > 0;
  }

  /** Buckets currently stored: those that spent lately (a refilled one goes when next checked). */
  get size(): number {
    return this.#fullAt.size;
  }

  /**
   * Spends `cost` tokens from `key`'s bucket when it holds them; a refused request spends nothing.
   *
   * @throws {RangeError} when `cost` is not a positive integer or exceeds the capacity.
   */
  take(key: string, cost = 1): RateLimitDecision {
    if (!this.enabled) return this.#unlimited;
    const costUnits = this.#costUnits(cost);
    const now = this.#nowUnits();
    const missing = this.#missing(key, now);
    if (missing + costUnits > this.#capacityUnits) {
      this.#touch(key);
      return this.#decision(missing, costUnits, false);
    }
    this.#store(key, now + missing + costUnits);
    return this.#decision(missing + costUnits, costUnits, true);
  }

  /**
   * Whether `key` could spend `cost` tokens now, without spending them (what
   * {@link take} would decide); {@link spend} follows once the work is done.
   *
   * @throws {RangeError} when `cost` is not a positive integer or exceeds the capacity.
   */
  check(key: string, cost = 1): RateLimitDecision {
    if (!this.enabled) return this.#unlimited;
    const costUnits = this.#costUnits(cost);
    const missing = this.#missing(key, this.#nowUnits());
    // A bucket found full again needs no entry; one still refilling is in use.
    if (missing === 0) this.#fullAt.delete(key);
    else this.#touch(key);
    const allowed = missing + costUnits <= this.#capacityUnits;
    return this.#decision(allowed ? missing + costUnits : missing, costUnits, allowed);
  }

  /**
   * Spends `cost` tokens from `key`'s bucket unconditionally, into debt if need
   * be (see the module's notes); `allowed` says whether the tokens were there.
   *
   * @throws {RangeError} when `cost` is not a positive integer.
   */
  spend(key: string, cost = 1): RateLimitDecision {
    if (!this.enabled) return this.#unlimited;
    checkCost(cost);
    const costUnits = cost * this.#unitsPerToken;
    const now = this.#nowUnits();
    const missing = this.#missing(key, now) + costUnits;
    this.#store(key, now + missing);
    return this.#decision(missing, costUnits, missing <= this.#capacityUnits);
  }

  /**
   * {@link check} for each of `keys` (the signers of one request): the
   * refused decision with the longest wait, or when all are allowed the one
   * with the fewest tokens left. With no keys, an allowed decision for a full bucket.
   */
  checkAll(keys: Iterable<string>, cost = 1): RateLimitDecision {
    let worst: RateLimitDecision | undefined;
    for (const key of keys) {
      const decision = this.check(key, cost);
      if (worst === undefined || worse(decision, worst)) worst = decision;
    }
    return worst ??
      (this.enabled ? this.#decision(this.#costUnits(cost), 0, true) : this.#unlimited);
  }

  /** {@link spend} for each of `keys`, once the request they signed has been stored. */
  spendAll(keys: Iterable<string>, cost = 1): void {
    for (const key of keys) this.spend(key, cost);
  }

  #costUnits(cost: number): number {
    checkCost(cost);
    if (cost > this.capacity) {
      throw new RangeError(`Cannot spend tokens: cost exceeds the capacity of ${this.capacity}`);
    }
    return cost * this.#unitsPerToken;
  }

  /** Refill since construction, in token units. */
  #nowUnits(): number {
    return (Math.floor(this.#now()) - this.#origin) * this.#unitsPerMs;
  }

  /** Units missing from a full bucket at `now`; more than the capacity when in debt. */
  #missing(key: string, now: number): number {
    const fullAt = this.#fullAt.get(key);
    return fullAt === undefined || fullAt <= now ? 0 : fullAt - now;
  }

  /** Marks `key`'s bucket used. */
  #touch(key: string): void {
    this.#fullAt.get(key);
  }

  #store(key: string, fullAt: number): void {
    this.#fullAt.set(key, fullAt);
  }

  /** The decision once `missing` units are missing from the bucket. */
  #decision(missing: number, costUnits: number, allowed: boolean): RateLimitDecision {
    const unitsPerSecond = this.#unitsPerMs * 1000;
    return {
      policy: this.policy,
      limited: true,
      quota: this.capacity,
      windowS: this.windowS,
      allowed,
      remaining: Math.max(0, Math.floor((this.#capacityUnits - missing) / this.#unitsPerToken)),
      resetS: Math.ceil(missing / unitsPerSecond),
      retryAfterS: allowed
        ? 0
        : Math.max(1, Math.ceil((missing + costUnits - this.#capacityUnits) / unitsPerSecond)),
    };
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Whether `a` is more constraining than `b`. */
function worse(a: RateLimitDecision, b: RateLimitDecision): boolean {
  if (a.allowed !== b.allowed) return !a.allowed;
  return a.allowed ? a.remaining < b.remaining : a.retryAfterS > b.retryAfterS;
}

/** A String of RFC 9651 §3.3.3, as the draft requires policy names to be. */
function sfString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `RateLimit-Policy` and `RateLimit` headers (lower case) for the given
 * decisions, one List member per limited policy in their order (RFC 9651
 * §4.1.1), and `Retry-After` when one refused: the longest wait. Decisions of
 * a limiter that is off add nothing.
 *
 * @example
 * ```ts ignore
 * rateLimitHeaders([addressDecision]);
 * // { "ratelimit-policy": '"address";q=100;w=2', ratelimit: '"address";r=99;t=1' }
 * ```
 */
export function rateLimitHeaders(decisions: readonly RateLimitDecision[]): Record<string, string> {
  const policies: string[] = [];
  const limits: string[] = [];
  let retryAfterS = 0;
  for (const d of decisions) {
    if (!d.limited) continue;
    const name = sfString(d.policy);
    policies.push(`${name};q=${d.quota};w=${d.windowS}`);
    limits.push(`${name};r=${d.remaining};t=${d.resetS}`);
    if (!d.allowed) retryAfterS = Math.max(retryAfterS, d.retryAfterS, 1);
  }
  if (policies.length === 0) return {};
  const headers: Record<string, string> = {
    "ratelimit-policy": policies.join(", "),
    "ratelimit": limits.join(", "),
  };
  if (retryAfterS > 0) headers["retry-after"] = String(retryAfterS);
  return headers;
}

/** The limiters of one process. */
export class RequestLimits {
  /** One bucket per client address (an IPv6 /64 counts as one). */
  readonly address: RateLimiter;
  /** One bucket per public key (its id: a P-256 key in compressed form). */
  readonly signer: RateLimiter;
  /** One bucket of wrong or missing bearer tokens per client address, a minute's worth. */
  readonly auth: RateLimiter;

  /**
   * @param settings `RATE_LIMIT_PER_ADDRESS`, `RATE_LIMIT_PER_SIGNER`,
   *   `RATE_LIMIT_AUTH_FAILURES`, `TRUSTED_PROXIES`, `MAX_PENDING_PER_SIGNER`.
   * @param now a monotonic clock in milliseconds (default `performance.now`).
   */
  constructor(readonly settings: LimitSettings, now?: () => number) {
    this.address = new RateLimiter({
      policy: "address",
      ratePerSecond: settings.ratePerAddress,
      now,
    });
    this.signer = new RateLimiter({ policy: "signer", ratePerSecond: settings.ratePerSigner, now });
    const { authFailuresPerMinute: capacity } = settings;
    this.auth = new RateLimiter({ policy: "auth", capacity, windowS: 60, now });
  }
}

/**
 * The abuse-control limits of docs/interface.md §12 at the HTTP edge, per
 * process: a token bucket per client address on `POST /intents` and the
 * approval and rejection endpoints, checked before anything else; a bucket per
 * public key, checked once its signature has verified and spent only by a
 * request that stored something; and the headers that report them on every
 * answer of those endpoints. `rate_limit.ts` holds the buckets and the header
 * syntax; `client_address.ts` says who a request counts as.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { clientAddress } from "./client_address.ts";
import type { RequestContext } from "./context.ts";
import { type RateLimitDecision, rateLimitHeaders } from "./rate_limit.ts";

/**
 * `Retry-After` of a `too_many_pending`: nothing tells when one of the key's
 * pending intents ends, so a client is asked to wait a minute.
 */
export const PENDING_RETRY_AFTER_S = 60;

/** The per-address decision a request of a limited endpoint was let in with. */
const ADMITTED = new WeakMap<RequestContext, RateLimitDecision>();

function refuse(ctx: RequestContext, decisions: RateLimitDecision[], limit: "address" | "signer") {
  Object.assign(ctx.headers, rateLimitHeaders(decisions));
  ctx.limited = limit;
  const wait = ctx.headers["retry-after"];
  return new ServiceError(
    "rate_limited",
    limit === "address"
      ? `too many requests from this address; retry after ${wait} s`
      : `too many requests signed by this key; retry after ${wait} s`,
  );
}

/**
 * Spends a token of the request's client address, before anything else is
 * looked at; every answer then carries `RateLimit-Policy` and `RateLimit`.
 *
 * @throws {ServiceError} `rate_limited` (with `Retry-After`) when the
 *   address has no token left.
 */
export function admitAddress(request: Request, ctx: RequestContext): void {
  const { limits } = ctx.app;
  // Off: nothing to count, nothing to say.
  if (!limits.address.enabled) return;
  // A request handed to the app without its peer (a test's direct call) counts as one client.
  const bucket = ctx.peer === undefined ? "unknown" : clientAddress({
    remoteAddr: ctx.peer,
    headers: request.headers,
    trustedProxies: limits.settings.trustedProxies,
  }).bucketKey;
  const decision = limits.address.take(bucket);
  ADMITTED.set(ctx, decision);
  if (!decision.allowed) throw refuse(ctx, [decision], "address");
  Object.assign(ctx.headers, rateLimitHeaders([decision]));
}

/**
 * Checks the buckets of the keys that signed, once their signatures
 * verified; spends nothing (see {@link spendSigners}).
 *
 * @throws {ServiceError} `rate_limited` naming both policies, with the key's
 *   `Retry-After`, when a key has no token left.
 */
export function checkSigners(ctx: RequestContext, keyIds: readonly string[]): void {
  if (!ctx.app.limits.signer.enabled) return;
  const decision = ctx.app.limits.signer.checkAll(keyIds);
  if (decision.allowed) return;
  const address = ADMITTED.get(ctx);
  throw refuse(ctx, address ? [address, decision] : [decision], "signer");
}

/** Spends a token of each key that signed a request that stored or recorded something. */
export function spendSigners(ctx: RequestContext, keyIds: readonly string[]): void {
  ctx.app.limits.signer.spendAll(keyIds);
}

/** Marks a `too_many_pending` refusal: its `Retry-After`, and the metric's limit. */
export function refusedPending(ctx: RequestContext): void {
  ctx.headers["retry-after"] = String(PENDING_RETRY_AFTER_S);
  ctx.limited = "pending";
}

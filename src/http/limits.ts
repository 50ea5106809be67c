/**
 * Who may call a route, and the limits of docs/interface.md §12, applied as
 * each route declares them (`route.ts`): its bearer token (a bucket of wrong
 * ones per client address), or its cost to the client address's bucket; then
 * a request's further work, and the keys that signed it. Tokens are compared
 * in constant time; `rate_limit.ts` holds the buckets and the headers,
 * `client_address.ts` says who a request counts as.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { ServiceError } from "../errors.ts";
import { clientAddress } from "./client_address.ts";
import type { RequestContext } from "./context.ts";
import { ACCESS, type AddressCost, type Route } from "./route.ts";
import { type RateLimitDecision, rateLimitHeaders } from "./rate_limit.ts";
import { HttpError } from "./respond.ts";

/**
 * `Retry-After` of a `too_many_pending`: nothing tells when one of the key's
 * pending intents ends, so a client is asked to wait a minute.
 */
const PENDING_RETRY_AFTER_S = 60;

/** The per-address decision a request of a route with a cost was let in with, and the cost. */
const ADMITTED = new WeakMap<
  RequestContext,
  { bucket: string; decision: RateLimitDecision; cost: AddressCost }
>();

function refuse(
  ctx: RequestContext,
  decisions: RateLimitDecision[],
  limit: "address" | "signer" | "auth",
) {
  Object.assign(ctx.headers, rateLimitHeaders(decisions));
  ctx.limited = limit;
  const wait = ctx.headers["retry-after"];
  const says = {
    address: "too many requests from this address",
    signer: "too many requests signed by this key",
    auth: "too many requests with a wrong token from this address",
  };
  return new ServiceError("rate_limited", `${says[limit]}; retry after ${wait} s`);
}

/** The bucket of the request's client address (docs/interface.md §12). */
function bucketOf(request: Request, ctx: RequestContext): string {
  // A request handed to the app without its peer (a test's direct call) counts as one client.
  if (ctx.peer === undefined) return "unknown";
  return clientAddress({
    remoteAddr: ctx.peer,
    headers: request.headers,
    trustedProxies: ctx.app.limits.settings.trustedProxies,
  }).bucketKey;
}

/**
 * Lets a request through to its route's handler as the route declares, before
 * anything else of it is looked at: its bearer token, or its address's token.
 *
 * @throws {ServiceError} `rate_limited`; {@link HttpError} 401 `unauthorized`.
 */
export function admit(request: Request, ctx: RequestContext, route: Route): void {
  const asPublic = route.publicWhen !== undefined && !request.headers.has("authorization") &&
    route.publicWhen(request, ctx.app.settings);
  if (asPublic) {
    admitAddress(request, ctx, "one");
  } else if (route.access !== "public") {
    requireToken(request, ctx, ACCESS[route.access].tokens(ctx.app.settings));
  } else if (route.cost !== undefined && route.cost !== "none") {
    admitAddress(request, ctx, route.cost);
  }
}

/**
 * Spends a token of the request's client address; every answer then carries
 * `RateLimit-Policy` and `RateLimit`. With `"work"`, {@link chargeWork} charges the rest later.
 */
function admitAddress(
  request: Request,
  ctx: RequestContext,
  cost: Exclude<AddressCost, "none">,
): void {
  const { limits } = ctx.app;
  // Off: nothing to count, nothing to say.
  if (!limits.address.enabled) return;
  const bucket = bucketOf(request, ctx);
  const decision = limits.address.take(bucket);
  ADMITTED.set(ctx, { bucket, decision, cost });
  if (!decision.allowed) throw refuse(ctx, [decision], "address");
  Object.assign(ctx.headers, rateLimitHeaders([decision]));
}

/**
 * Charges the tokens of a request's work beyond the first, once its body is
 * read and before any signature is verified: all or none, on a route whose
 * cost is `"work"`; work past the capacity costs the whole bucket.
 *
 * @param work max(1, signatures carried, public keys named) (`workOf`).
 * @throws {ServiceError} `rate_limited` (with `Retry-After`, the headers
 *   saying what is left) when the address lacks them; nothing is spent then.
 */
export function chargeWork(ctx: RequestContext, work: number): void {
  const { address } = ctx.app.limits;
  const admitted = ADMITTED.get(ctx);
  if (!address.enabled || admitted === undefined || admitted.cost !== "work") return;
  const further = Math.min(work, address.capacity) - 1;
  if (further <= 0) return;
  const decision = address.take(admitted.bucket, further);
  if (!decision.allowed) throw refuse(ctx, [decision], "address");
  ADMITTED.set(ctx, { ...admitted, decision });
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
  const decision = ctx.app.limits.signer.checkAll(keyIds);
  if (decision.allowed) return;
  const address = ADMITTED.get(ctx)?.decision;
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

/**
 * Lets the request through when it carries one of `tokens` (undefined ones
 * skipped). An address whose budget of wrong tokens is empty is refused before
 * its token is compared; a wrong or missing token spends one. A 401 and the
 * refusal carry the `"auth"` policy's headers.
 */
function requireToken(
  request: Request,
  ctx: RequestContext,
  tokens: readonly (string | undefined)[],
): void {
  const { auth } = ctx.app.limits;
  // A limiter that is off decides without looking at the bucket, and its decisions add no headers.
  const bucket = auth.enabled ? bucketOf(request, ctx) : "";
  const decision = auth.check(bucket);
  if (!decision.allowed) throw refuse(ctx, [decision], "auth");
  if (bearerMatches(request, tokens)) return;
  // The 401 is the answer whatever the bucket says now: its headers say what is left.
  const spent = auth.spend(bucket);
  throw new HttpError("unauthorized", "a valid bearer token is required", {
    "www-authenticate": "Bearer",
    ...rateLimitHeaders([{ ...spent, allowed: true }]),
  });
}

const encoder = new TextEncoder();

/**
 * Compares two strings without leaking, through timing, where they differ or
 * how long the expected one is: both are hashed first, then every byte of the
 * digests is compared.
 */
function constantTimeEqual(a: string, b: string): boolean {
  const x = sha256(encoder.encode(a));
  const y = sha256(encoder.encode(b));
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

/**
 * Whether the request carries one of `tokens` (undefined ones skipped) as its
 * `Authorization: Bearer` token. Every accepted token is compared, so timing
 * does not tell which matched.
 */
function bearerMatches(
  request: Request,
  tokens: readonly (string | undefined)[],
): boolean {
  const given = /^Bearer[ ]+([^\s]+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  let ok = false;
  for (const token of tokens) {
    if (token !== undefined && given !== undefined && constantTimeEqual(given, token)) ok = true;
  }
  return ok;
}

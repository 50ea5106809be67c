/**
 * A submission's verification as a span (docs/interface.md §13): on the
 * serving thread, or on a verify worker as the child of the request's span,
 * whose ids the pool sends with the body.
 * @module
 */

import type { VerifiedSubmission } from "../domain/verify_submission.ts";
import {
  type Attributes,
  endSpan,
  failed,
  type SpanContext,
  spanTime,
  startBatchedSpan,
  TRACING,
} from "../telemetry/tracing.ts";

const REFUSED_ON_WORKER = { "intents.verify.thread": "worker", "intents.outcome": "refused" };
const REFUSED_SERVING = { "intents.verify.thread": "serving", "intents.outcome": "refused" };

/** A span's ids as a message carries them to another thread. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** The ids of a span, copied for a message (a span context may hold more than a message can carry). */
export function traceParentOf(
  span: { spanContext(): SpanContext } | undefined,
): TraceParent | undefined {
  if (span === undefined) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { traceId, spanId, traceFlags };
}

/**
 * A verification (`verify`: `verifyRead` of a body read before) in a span
 * `intents.verify`: the variant and the
 * signature kind when it verified (`intents.outcome` `verified`), the
 * refusal's code when it did not (`refused`). Without tracing, the call alone.
 *
 * @param options.parent the request's span, from another thread; default the active span.
 * @param options.thread where it runs: `serving` or `worker`.
 * @throws what `verify` throws.
 */
export function verifyInSpan(
  verify: () => Promise<VerifiedSubmission>,
  options: { parent?: TraceParent; thread: "serving" | "worker" },
): Promise<VerifiedSubmission> {
  // Without tracing, the call alone: no frame of its own on the serving path.
  return TRACING ? verifyTraced(verify, options) : verify();
}

/** {@link verifyInSpan} when tracing: the span is made once the outcome is known, every attribute at once. */
async function verifyTraced(
  verify: () => Promise<VerifiedSubmission>,
  options: { parent?: TraceParent; thread: "serving" | "worker" },
): Promise<VerifiedSubmission> {
  const startTime = spanTime();
  let attributes: Attributes = options.thread === "worker" ? REFUSED_ON_WORKER : REFUSED_SERVING;
  let refusal: { error: unknown } | undefined;
  try {
    const verified = await verify();
    attributes = {
      "intents.verify.thread": options.thread,
      "intents.outcome": "verified",
      "intents.variant": verified.submission.variant,
      "intents.signature.kind": verified.verified?.authorship.kind ?? "Unsigned",
    };
    return verified;
  } catch (error) {
    refusal = { error };
    throw error;
  } finally {
    const span = startBatchedSpan("intents.verify", {
      attributes,
      startTime,
      parent: options.parent && { ...options.parent, isRemote: true },
    })!;
    if (refusal) failed(span, refusal.error);
    endSpan(span);
  }
}

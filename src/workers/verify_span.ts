/**
 * A submission's verification as a span (docs/interface.md §13): on the
 * serving thread, or on a verify worker as the child of the request's span,
 * whose ids the pool sends with the body.
 * @module
 */

import type { VerifiedSubmission } from "../domain/verify_submission.ts";
import { failed, type SpanContext, startSpan } from "../telemetry/tracing.ts";

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
 * A verification (`verify`: `verifySubmissionBody`, or `verifyRead` of a
 * body read before) in a span `intents.verify`: the variant and the
 * signature kind when it verified (`intents.outcome` `verified`), the
 * refusal's code when it did not (`refused`). Without tracing, the call alone.
 *
 * @param options.parent the request's span, from another thread; default the active span.
 * @param options.thread where it runs: `serving` or `worker`.
 * @throws what `verify` throws.
 */
export async function verifyInSpan(
  verify: () => Promise<VerifiedSubmission>,
  options: { parent?: TraceParent; thread: "serving" | "worker" },
): Promise<VerifiedSubmission> {
  const span = startSpan("intents.verify", {
    parent: options.parent && { ...options.parent, isRemote: true },
    attributes: { "intents.verify.thread": options.thread },
  });
  if (span === undefined) return await verify();
  try {
    const verified = await verify();
    span.setAttributes({
      "intents.outcome": "verified",
      "intents.variant": verified.submission.variant,
      "intents.signature.kind": verified.verified?.authorship.kind ?? "Unsigned",
    });
    return verified;
  } catch (error) {
    span.setAttribute("intents.outcome", "refused");
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A submission's verification as a span (docs/interface.md §13): on the
 * serving thread, or on a verify worker as the child of the request's span,
 * whose ids the pool sends with the body.
 * @module
 */

import { type VerifiedSubmission, verifySubmissionBody } from "../domain/verify_submission.ts";
import type { VerifyContext } from "../domain/authorship.ts";
import { endSpan, failed, type SpanContext, startBatchedSpan } from "../telemetry/tracing.ts";

const ON_WORKER = { "intents.verify.thread": "worker" } as const;
const SERVING = { "intents.verify.thread": "serving" } as const;

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
 * `verifySubmissionBody` in a span `intents.verify`: the variant and the
 * signature kind when it verified (`intents.outcome` `verified`), the
 * refusal's code when it did not (`refused`). Without tracing, the call alone.
 *
 * @param options.parent the request's span, from another thread; default the active span.
 * @param options.thread where it runs: `serving` or `worker`.
 * @throws {ServiceError} as `verifySubmissionBody`.
 */
export async function verifyInSpan(
  ctx: VerifyContext,
  bytes: Uint8Array,
  options: { parent?: TraceParent; thread: "serving" | "worker" },
): Promise<VerifiedSubmission> {
  const span = startBatchedSpan("intents.verify", {
    attributes: options.thread === "worker" ? ON_WORKER : SERVING,
    parent: options.parent && { ...options.parent, isRemote: true },
  });
  if (span === undefined) return await verifySubmissionBody(ctx, bytes);
  try {
    const verified = await verifySubmissionBody(ctx, bytes);
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
    endSpan(span);
  }
}

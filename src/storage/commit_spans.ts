/**
 * The commit of accepted intents as spans (docs/interface.md §13): each
 * insert has a span for its wait, `intents.commit.wait`, the child of its
 * request's span; each commit has a span of its own, `intents.commit`, in a
 * trace of its own (it serves several requests), linked to the waits of the
 * inserts it carries. From a request's trace, the wait leads to the commit
 * that carried it and to the requests that shared it.
 * @module
 */

import type { CommitObserver, CommitOutcome } from "./group_commit.ts";
import type { InsertResult } from "../domain/store.ts";
import { endSpan, failed, type Span, startBatchedSpan, TRACING } from "../telemetry/tracing.ts";

const observer: CommitObserver<Span | undefined> = {
  waiting: () => startBatchedSpan("intents.commit.wait"),
  committing(waits) {
    const span = startBatchedSpan("intents.commit", {
      root: true,
      attributes: { "intents.commit.inserts": waits.length },
    });
    for (const wait of waits) if (wait) span?.addLink({ context: wait.spanContext() });
    return (outcome: CommitOutcome) => {
      if (span === undefined) return;
      if (Array.isArray(outcome)) {
        let created = 0;
        let failures = 0;
        for (const result of outcome) {
          if (result.outcome === "created") created++;
          else if (result.outcome === "failed") failures++;
        }
        // A batch may go in several commits; one that threw fails only its own inserts.
        const all = failures === outcome.length;
        span.setAttributes({
          "intents.outcome": all ? "failed" : "committed",
          "intents.commit.created": created,
        });
      } else {
        span.setAttribute("intents.outcome", "failed");
        failed(span, outcome.error);
      }
      endSpan(span);
    };
  },
  answered(wait, outcome: InsertResult | { error: unknown }) {
    if (wait === undefined) return;
    if ("error" in outcome) {
      wait.setAttribute("intents.outcome", "failed");
      failed(wait, outcome.error);
    } else {
      wait.setAttribute("intents.outcome", outcome.outcome);
    }
    endSpan(wait);
  },
};

/**
 * The observer that traces the writer's waits and commits, or undefined
 * when not tracing (the writer then does nothing more per insert).
 */
export function commitSpans(): CommitObserver | undefined {
  return TRACING ? observer as CommitObserver : undefined;
}

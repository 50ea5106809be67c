/**
 * A signer's decision as a span (docs/interface.md §13): `decideIntent` in
 * `intents.decide`, under the request's span.
 * @module
 */

import { type DecideDeps, decideIntent, type Decision, type DecisionOutcome } from "./decide.ts";
import { inSpan } from "../telemetry/tracing.ts";

/**
 * `decideIntent` in a span: `intents.decision` (approval or rejection),
 * `intents.outcome` (`recorded`, or `repeated` for a decision stored before),
 * `intents.ended` when it ended the intent, `error.type` for a refusal's code.
 * Without tracing, the call alone.
 *
 * @throws {ServiceError} as `decideIntent`.
 */
export function decideInSpan(
  deps: DecideDeps,
  id: string | null,
  value: unknown,
  decision: Decision,
): Promise<DecisionOutcome> {
  return inSpan(
    "intents.decide",
    { attributes: { "intents.decision": decision } },
    async (span) => {
      const result = await decideIntent(deps, id, value, decision);
      span?.setAttribute("intents.outcome", result.outcome);
      if (result.ended) span?.setAttribute("intents.ended", result.ended);
      return result;
    },
  );
}

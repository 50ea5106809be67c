/**
 * `POST /intents/dry-run` (docs/interface.md §15) and its OpenAPI operation:
 * a submission's checks, in the same order, stopping before the id check.
 * @module
 */

import { trySubmission } from "../../domain/submit.ts";
import { renderDryRun } from "../../domain/record.ts";
import { json } from "../respond.ts";
import type { RequestContext } from "../context.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import { jsonResponse, shared, tooManyRequests } from "../openapi/responses.ts";
import { readVerified, submissionBody, submissionRefusals } from "./intents.ts";

/**
 * `POST /intents/dry-run`: 200 with what the submission would become. It
 * spends the address's budget, never a signer's, and reads or stores no id.
 */
async function dryRun(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const { verified, ref } = await readVerified(request, ctx);
  const intent = trySubmission(
    { allowUnsigned: app.settings.allowUnsigned, now: app.now, keys: app.verifyContext.keys },
    verified,
    ref,
  );
  return json(200, renderDryRun(intent, app.now().toISOString()));
}

/** The dry run of a submission: it costs its work, as a submission does. */
export const DRY_RUN_ROUTES: Route[] = [
  {
    method: "POST",
    path: "/intents/dry-run",
    access: "public",
    cost: "work",
    handler: dryRun,
    operation: ({ intents }) => ({
      operationId: "intents_dry_run",
      summary: "Try a submission without storing it (public)",
      description: "The body of `POST /intents`, checked as it would be, in the same order, " +
        "up to the id check, which it never reaches: nothing is read of ids and nothing is " +
        "stored. The client address's budget is spent as by a submission; no signer's is. " +
        "Under a document with rules they are evaluated now (docs/rules.md); the answer says " +
        "whether the intent would be accepted or pending, its effective quorum, and the " +
        "rules that were true. Any refusal is the one the submission would get.",
      tags: ["intents"],
      requestBody: submissionBody(intents),
      responses: {
        "200": jsonResponse("What the submission would become.", ref("DryRun")),
        ...submissionRefusals(),
        ...shared("405", "408", "413", "415", "500", "503"),
        "429": tooManyRequests(),
      },
    }),
  },
];

/**
 * `GET /intents/{id}/approvals`, `POST /intents/{id}/approvals` and
 * `POST /intents/{id}/rejections` (public, docs/interface.md §10): the id is
 * shared among the signers of a governed document.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { readApprovals } from "../../domain/approve.ts";
import type { Decision } from "../../domain/decide.ts";
import { decideInSpan } from "../../domain/decide_span.ts";
import { readJsonBody, type RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { checkSigners, spendSigners } from "../limits.ts";
import { intentIdOf } from "./intents.ts";

/**
 * `GET /intents/{id}/approvals`: its endpoint costs an address token, so
 * that ids cannot be probed at line rate.
 */
export async function getApprovals(_request: Request, ctx: RequestContext): Promise<Response> {
  const id = intentIdOf(ctx.params[0]);
  if (id === null) throw new ServiceError("not_found", "no such intent awaiting approvals");
  return json(200, await readApprovals({ store: ctx.app.store, now: ctx.app.now }, id));
}

/** A decision's route: 200 with the view after it (or as it stands, for a repeat). */
function postDecision(decision: Decision) {
  return async (request: Request, ctx: RequestContext): Promise<Response> => {
    const { app } = ctx;
    const { value } = await readJsonBody(request, app);
    // An impossible id is a 404 without a store read, after the body's 400s
    // (the order of docs/interface.md §10).
    const result = await decideInSpan(
      {
        ...app.verifyContext,
        store: app.store,
        now: app.now,
        admitSigner: (keyId) => checkSigners(ctx, [keyId]),
      },
      intentIdOf(ctx.params[0]),
      value,
      decision,
    );
    if (result.outcome === "repeated") {
      ctx.replayed = true;
    } else {
      spendSigners(ctx, [result.keyId]);
      if (decision === "approval") ctx.approved = { accepted: result.ended === "accepted" };
      else ctx.rejected = { rejected: result.ended === "rejected" };
    }
    return json(200, result.view);
  };
}

/** `POST /intents/{id}/approvals`: 200 with the view after the approval. */
export const postApproval = postDecision("approval");

/** `POST /intents/{id}/rejections`: 200 with the view after the rejection. */
export const postRejection = postDecision("rejection");

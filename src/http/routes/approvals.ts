/**
 * `GET /intents/{id}/approvals` and `POST /intents/{id}/approvals` (public,
 * docs/interface.md §10): the id is shared among the signers of a governed
 * document.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { approveIntent, readApprovals } from "../../domain/approve.ts";
import { readJsonBody, type RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { intentIdOf } from "./intents.ts";

function deps(ctx: RequestContext) {
  const { app } = ctx;
  return { ...app.verifyContext, store: app.store, now: app.now };
}

/** `GET /intents/{id}/approvals`. */
export async function getApprovals(_request: Request, ctx: RequestContext): Promise<Response> {
  const id = intentIdOf(ctx.params[0]);
  if (id === null) throw new ServiceError("not_found", "no such intent awaiting approvals");
  return json(200, await readApprovals(deps(ctx), id));
}

/** `POST /intents/{id}/approvals`: 200 with the view after the approval. */
export async function postApproval(request: Request, ctx: RequestContext): Promise<Response> {
  const { value } = await readJsonBody(request, ctx.app);
  // An impossible id is a 404 without a store read, after the body's 400s
  // (the order of docs/interface.md §10).
  const view = await approveIntent(deps(ctx), intentIdOf(ctx.params[0]), value);
  ctx.approved = { accepted: view.state === "accepted" };
  return json(200, view);
}

/**
 * `GET /intents/{id}/approvals`, `POST /intents/{id}/approvals` and
 * `POST /intents/{id}/rejections` (docs/interface.md §10), and their OpenAPI
 * operations: an approval's and a rejection's differ only in their texts.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { readApprovals } from "../../domain/approve.ts";
import { decideInSpan, type Decision } from "../../domain/decide.ts";
import { readJsonBody, type RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { checkSigners, spendSigners } from "../limits.ts";
import { intentIdOf } from "./intents.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import { ERR, errorResponse, idParameter, jsonResponse, shared } from "../openapi/responses.ts";

/** `GET /intents/{id}/approvals`: what a pending intent waits for. */
async function getApprovals(_request: Request, { app, params }: RequestContext) {
  const id = intentIdOf(params[0]);
  if (id === null) throw new ServiceError("not_found", "no such intent awaiting approvals");
  return json(200, await readApprovals({ store: app.store, now: app.now }, id));
}

/** What tells an approval's operation from a rejection's. */
const TEXTS = {
  approval: {
    operationId: "approvals_add",
    summary: "Add one signer's approval (public)",
    description: "One Ed25519 or Passkey signature over the intent's signed bytes (the " +
      "same bytes its submission signed). Checks run in this order: 429 for the client " +
      "address, 415, 413, 400 (JSON, shape, encodings), 404, 409 `not_pending`, 400 " +
      "`invalid_signature`, 429 for the key, 403 `signer_not_authorized`, 409 " +
      "`already_approved` or `already_rejected` (the key has decided), then 200. The same " +
      "approval again (the same key and signature, already recorded, the submission's " +
      "included) is 200 with the view as it stands, whatever the state: a retry learns " +
      "that it counted. Each approval is one atomic commit checked against the intent's " +
      "current version: concurrent decisions are all counted, and exactly one ends the " +
      "intent.",
    after: "The view after the approval: still pending, or accepted when it reached the " +
      "threshold (or as it stands, for the same approval again).",
  },
  rejection: {
    operationId: "rejections_add",
    summary: "Add one signer's rejection (public)",
    description: "One Ed25519 or Passkey signature over the rejection bytes: UTF-8 " +
      "`intents:reject:` followed by the intent's signed bytes (a passkey signs the " +
      "view's `reject_challenge`). An approval's signature never counts as a rejection, " +
      "nor the reverse. Checks run in the order of approvals: 429 for the client address, " +
      "415, 413, 400 (JSON, shape, encodings), 404, 409 `not_pending`, 400 " +
      "`invalid_signature`, 429 for the key, 403 `signer_not_authorized`, 409 " +
      "`already_approved` or `already_rejected`, then 200. Each key decides once; the " +
      "intent becomes `rejected` (a final state) as soon as the weight of the keys that " +
      "have not rejected can no longer reach the threshold. The same rejection again is " +
      "200 with the view as it stands, whatever the state.",
    after: "The view after the rejection: still pending, or rejected when the others can no " +
      "longer reach the threshold (or as it stands, for the same rejection again).",
  },
} as const;

/**
 * `POST /intents/{id}/approvals` or `POST /intents/{id}/rejections`: 200 with
 * the view after the decision (or as it stands, for a repeat).
 */
function decisionRoute(decision: Decision): Route {
  const { operationId, summary, description, after } = TEXTS[decision];
  return {
    method: "POST",
    path: `/intents/{id}/${decision === "approval" ? "approvals" : "rejections"}`,
    access: "public",
    cost: "one",
    handler: async (request, ctx) => {
      const { app } = ctx;
      const value = await readJsonBody(request, app);
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
    },
    operation: () => ({
      operationId,
      summary,
      description,
      tags: ["approvals"],
      parameters: [idParameter("The intent id.")],
      requestBody: {
        required: true,
        content: { "application/json": { schema: ref("ApprovalBody") } },
      },
      responses: {
        "200": jsonResponse(after, ref("ApprovalView")),
        "400": ERR.invalidJsonBody(["invalid_signature"]),
        "403": errorResponse("The key is not a signer of the document.", [
          "signer_not_authorized",
        ]),
        "404": ERR.notFound("intent under a governed document"),
        ...shared("405", "408", "413", "415", "500"),
        "409": errorResponse(
          "The intent is accepted, expired or rejected, or this key has approved or " +
            "rejected it (with another signature).",
          ["not_pending", "already_approved", "already_rejected"],
        ),
      },
    }),
  };
}

/** The routes of approvals and rejections (docs/interface.md §10): each costs a token. */
export const APPROVAL_ROUTES: Route[] = [
  {
    method: "GET",
    path: "/intents/{id}/approvals",
    access: "public",
    cost: "one",
    handler: getApprovals,
    operation: () => ({
      operationId: "approvals_get",
      summary: "What a pending intent waits for (public)",
      description: "For a pending intent under a governed document: the object every " +
        "approver signs, its challenge for passkeys (and the challenge of a rejection), the " +
        "quorum and who has approved or rejected. For an accepted, expired or rejected one, " +
        "its state only. The id is shared among the signers. Each request spends a token of " +
        "the client address, so that ids cannot be probed at line rate.",
      tags: ["approvals"],
      parameters: [idParameter("The intent id.")],
      responses: {
        "200": jsonResponse("The view.", ref("ApprovalView")),
        "404": ERR.notFound("intent under a governed document"),
        ...shared("405", "500"),
      },
    }),
  },
  decisionRoute("approval"),
  decisionRoute("rejection"),
];

/**
 * The OpenAPI operations of a signer's decision on a pending intent
 * (docs/interface.md §10): an approval and a rejection take the same body,
 * answer the same view and are refused the same ways; only their texts differ.
 * @module
 */

import { ref } from "./components.ts";
import { ERR, errorResponse, idParameter, jsonResponse, type Obj } from "./responses.ts";

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

/** `POST /intents/{id}/approvals` or `POST /intents/{id}/rejections`. */
export function decisionOperation(decision: keyof typeof TEXTS): Obj {
  const { operationId, summary, description, after } = TEXTS[decision];
  return {
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
      "405": ERR.methodNotAllowed,
      "408": ERR.timeout,
      "409": errorResponse(
        "The intent is accepted, expired or rejected, or this key has approved or " +
          "rejected it (with another signature).",
        ["not_pending", "already_approved", "already_rejected"],
      ),
      "413": ERR.tooLarge,
      "415": ERR.mediaType,
      "500": ERR.internal,
    },
  };
}

/** `/intents/{id}/rejections`. */
export function rejectionPaths(): Obj {
  return { "/intents/{id}/rejections": { post: decisionOperation("rejection") } };
}

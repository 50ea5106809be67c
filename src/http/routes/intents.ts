/**
 * `POST /intents`, `GET /intents`, `GET /intents/{id}`, and their OpenAPI operations.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { findReference, type Stored, storeSubmission } from "../../domain/submit.ts";
import type { DocumentRef } from "../../domain/intent.ts";
import { renderIntent } from "../../domain/record.ts";
import { INTENT_STATES, type IntentState } from "../../domain/intent.ts";
import { normalizeIntentId } from "../../domain/submission.ts";
import type { VerifiedSubmission } from "../../domain/verify_submission.ts";
import { json } from "../respond.ts";
import { readJsonBytes, type RequestContext } from "../context.ts";
import { chargeWork, checkSigners, refusedPending, spendSigners } from "../limits.ts";
import { readPosition, readQuery, wholeNumber } from "./query.ts";
import type { Route } from "../route.ts";
import type { OpenApiExamples } from "../openapi/examples.ts";
import { ref } from "../openapi/components.ts";
import {
  ERR,
  errorResponse,
  examplesOf,
  idParameter,
  integerParameter,
  jsonResponse,
  location,
  type Obj,
  shared,
  strictQuery,
  tooManyRequests,
} from "../openapi/responses.ts";

/** The query parameters of `GET /intents`, and the bounds of `limit`. */
export const LIST_QUERY = ["limit", "cursor", "state"] as const;
export const LIST_LIMIT = { min: 1, max: 100, fallback: 20 } as const;

/**
 * A submission's body read, its work charged, its document found and its
 * signature verified: docs/interface.md §4's checks up to the signature, in
 * order, shared by `POST /intents` and its dry run.
 */
export async function readVerified(
  request: Request,
  ctx: RequestContext,
): Promise<{ verified: VerifiedSubmission; ref: DocumentRef }> {
  const { app } = ctx;
  // Read here or on a worker thread (settings: VERIFY_WORKERS); then the cheap refusals of
  // docs/interface.md §4, the work's tokens and the document, before any signature is verified.
  const body = await app.verifier.read(await readJsonBytes(request, app));
  let ref: DocumentRef;
  try {
    chargeWork(ctx, body.summary.work);
    ref = await findReference(
      { store: app.store, allowUnsigned: app.settings.allowUnsigned },
      body.summary,
    );
  } catch (error) {
    body.drop();
    throw error;
  }
  return { verified: await body.verify(), ref };
}

/** The body of `POST /intents`, as its OpenAPI operation and its dry run's state it. */
export function submissionBody(intents: OpenApiExamples["intents"]): Obj {
  return {
    required: true,
    content: {
      "application/json": {
        schema: { oneOf: [ref("VariantA"), ref("VariantB")] },
        examples: examplesOf(intents, (key) => intents[key].body),
      },
    },
  };
}

/** The 400 and 403 of a submission's checks before the id, shared with its dry run. */
export function submissionRefusals(): Obj {
  return {
    "400": ERR.invalidJsonBody([
      "invalid_signature",
      "unsigned_not_permitted",
      "template_not_found",
      "policy_not_found",
      "quorum_mismatch",
    ]),
    "403": errorResponse(
      "Under a governed document: a key that signed is not one of its signers or does " +
        "not count under its rules, a rule denies the intent or fails, or the keys that " +
        "count cannot reach the threshold (docs/rules.md).",
      ["signer_not_authorized", "rule_denied", "rule_error", "quorum_unreachable"],
    ),
  };
}

/**
 * `POST /intents`: 201 with the stored record and its `Location` (202 when
 * pending); 200 with `Idempotent-Replayed: true` and the record as it stands
 * for the same signed submission sent again.
 */
async function postIntent(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const { verified, ref } = await readVerified(request, ctx);
  const keyIds = verified.verified?.signedBy.map((s) => s.keyId) ?? [];
  checkSigners(ctx, keyIds);
  let stored: Stored;
  try {
    stored = await storeSubmission(
      {
        store: app.store,
        writer: app.writer,
        allowUnsigned: app.settings.allowUnsigned,
        maxPendingPerSigner: app.limits.settings.maxPendingPerSigner,
        now: app.now,
        keys: app.verifyContext.keys,
      },
      verified,
      ref,
    );
  } catch (error) {
    if (error instanceof ServiceError && error.code === "too_many_pending") refusedPending(ctx);
    throw error;
  }
  const { record, replayed } = stored;
  const location = `/intents/${encodeURIComponent(record.id)}`;
  if (replayed) {
    // Nothing stored now: the key's budget is not spent.
    ctx.replayed = true;
    return json(200, renderIntent(record, { now: app.now() }), {
      location,
      "idempotent-replayed": "true",
    });
  }
  spendSigners(ctx, keyIds);
  const pending = record.state === "pending";
  ctx.accepted = { variant: record.variant, kind: record.authorship.kind, pending };
  // 202: stored, and waiting for approvals (docs/interface.md §10); either way the id is taken.
  return json(pending ? 202 : 201, renderIntent(record, { attrs: verified.attrs }), { location });
}

/**
 * The stored id a `{id}` path segment names, or null when no intent can have
 * it (empty, over 128 code points, or with control characters): a 404 without a read.
 */
export function intentIdOf(rawId: string): string | null {
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    return null;
  }
  if (id.length === 0 || [...id].length > 128 || /\p{Cc}/u.test(id)) return null;
  return normalizeIntentId(id);
}

/** `GET /intents/{id}`: the stored intent, or 404. */
async function getIntent(_request: Request, { app, params }: RequestContext) {
  const id = intentIdOf(params[0]);
  const record = id === null ? null : await app.store.getIntent(id);
  if (!record) throw new ServiceError("not_found", "no such intent");
  return json(200, renderIntent(record, { now: app.now() }));
}

const STATES = new Set<string>(INTENT_STATES);

/** `GET /intents?limit=&cursor=&state=`: newest first. */
async function listIntents(request: Request, { app }: RequestContext): Promise<Response> {
  const params = readQuery(request, LIST_QUERY);
  const limit = wholeNumber(params, "limit", LIST_LIMIT);
  const rawState = params.get("state");
  if (rawState !== null && !STATES.has(rawState)) {
    throw new ServiceError("invalid_body", "state: must be pending, accepted, expired or rejected");
  }
  const state = rawState === null ? undefined : rawState as IntentState;
  // An empty cursor is the first page, as an absent one.
  const cursor = params.get("cursor") || null;
  const before = cursor === null ? undefined : await readPosition(app.store, cursor);
  if (before === null) {
    throw new ServiceError("invalid_body", "cursor: is not a cursor this service handed out");
  }
  const now = app.now();
  const page = await app.store.listIntents({ limit, before, state, now });
  const items = page.items.map((record) => renderIntent(record, { now }));
  const next = page.next === null ? null : String(page.next);
  return json(200, `{"items":[${items.join(",")}],"cursor":${JSON.stringify(next)}}`);
}

/** The routes of intents (docs/interface.md §4, §7): a submission costs its work. */
export const INTENT_ROUTES: Route[] = [
  {
    method: "POST",
    path: "/intents",
    access: "public",
    cost: "work",
    handler: postIntent,
    operation: ({ intents }) => ({
      operationId: "intents_submit",
      summary: "Submit a signed intent (public)",
      description: "The top-level members select the variant: exactly `payload` and " +
        "`signature` is Variant A, exactly `authorship` and `intent` is Variant B. The body is " +
        "parsed strictly (no duplicate members, nesting at most 32, integer literals within " +
        "±(2^53−1) unless written as JCS writes the double they parse to). Checks run in this " +
        "order: 429 for the client address (one token), 415, 413, 400 (JSON, shape, " +
        "encodings), 429 for the client address (the further tokens of its work: max(1, " +
        "signatures carried, public keys named) in all), 400 missing template or policy, " +
        "400 signature (a Multisig stops at its first signature that does not verify), 429 " +
        "for a key that signed, the governing document's 400s and 403s (its rules last), the " +
        "id (409, or 200 " +
        "for the same signed submission sent again), 429 `too_many_pending`, then 201 (or " +
        "202). A request whose authorship does not verify never learns whether an id " +
        "exists. A retry is safe: the " +
        "same signed body again (equal as JSON values) answers 200 with " +
        "`Idempotent-Replayed: true` and the record as it stands now. 503 `unavailable` " +
        "means nothing was stored and the same body may be sent again.",
      tags: ["intents"],
      requestBody: submissionBody(intents),
      responses: {
        "200": jsonResponse(
          "The same signed submission was stored before (a retry after a lost answer): " +
            "nothing is stored now; the record as it stands now, whatever its state.",
          ref("IntentRecord"),
          {
            headers: {
              ...location("/intents/{id}"),
              "Idempotent-Replayed": {
                description: "`true`: this answer replays an earlier submission.",
                schema: { type: "string", enum: ["true"] },
              },
            },
          },
        ),
        "201": jsonResponse("Stored and accepted.", ref("IntentRecord"), {
          examples: examplesOf(intents, (key) => intents[key].record),
          headers: location("/intents/{id}"),
        }),
        "202": jsonResponse(
          "Stored pending: under a governed document whose threshold the submission's " +
            "signers do not reach; approvals arrive through POST /intents/{id}/approvals. " +
            "The id is taken.",
          ref("IntentRecord"),
          { headers: location("/intents/{id}") },
        ),
        ...submissionRefusals(),
        ...shared("405", "408", "413", "415", "500", "503"),
        "409": errorResponse(
          "An intent with this id exists, and this body is not the signed submission that " +
            "took it (`Unsigned` bodies are never replayed).",
          ["intent_exists"],
        ),
        "429": tooManyRequests(["too_many_pending"]),
      },
    }),
  },
  {
    method: "GET",
    path: "/intents",
    access: "admin",
    handler: listIntents,
    operation: ({ intents: { variant_a_ed25519: { record } } }) => ({
      operationId: "intents_list",
      summary: "List stored intents, newest first (admin)",
      description: strictQuery(LIST_QUERY),
      tags: ["intents"],
      parameters: [
        integerParameter("limit", LIST_LIMIT, "Most intents in a page."),
        {
          name: "cursor",
          in: "query",
          required: false,
          description: "The `cursor` of the previous page; absent or empty: the first page.",
          // The cursors handed out are OpaqueIds; an empty one stands for none.
          schema: { type: "string", maxLength: 128, pattern: "^[\\x21-\\x7e]*$" },
        },
        {
          name: "state",
          in: "query",
          required: false,
          description: "Only intents in this state now. A filtered page may hold fewer than " +
            "`limit` intents and still have a `cursor`: a page looks at a bounded number of " +
            "intents.",
          schema: { type: "string", enum: ["pending", "accepted", "expired", "rejected"] },
        },
      ],
      responses: {
        "200": jsonResponse("A page.", ref("IntentPage"), {
          example: { items: [record], cursor: null },
        }),
        "400": errorResponse(
          "A bad `limit` or `cursor`, or an unknown or repeated query parameter.",
          ["invalid_body"],
        ),
        ...shared("500"),
      },
    }),
  },
  {
    method: "GET",
    path: "/intents/{id}",
    access: "admin",
    handler: getIntent,
    operation: ({ intents: { variant_a_ed25519: { record } } }) => ({
      operationId: "intents_get",
      summary: "Read a stored intent (admin)",
      tags: ["intents"],
      parameters: [idParameter("The intent id (URL-encoded; UUIDs match in any case).")],
      responses: {
        "200": jsonResponse("The stored intent.", ref("IntentRecord"), { example: record }),
        "404": ERR.notFound("intent"),
        ...shared("405", "500"),
      },
    }),
  },
];

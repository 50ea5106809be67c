/**
 * `POST /intents`, `GET /intents`, `GET /intents/{id}`.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { findReference, type Stored, storeSubmission } from "../../domain/submit.ts";
import type { DocumentRef } from "../../domain/intent.ts";
import { renderIntent } from "../../domain/record.ts";
import { INTENT_STATES, type IntentState } from "../../domain/intent.ts";
import { normalizeIntentId } from "../../domain/submission.ts";
import { json } from "../respond.ts";
import { readJsonBytes, type RequestContext } from "../context.ts";
import { readPosition } from "./positions.ts";
import { chargeWork, checkSigners, refusedPending, spendSigners } from "../limits.ts";
import { readQuery, wholeNumber } from "./query.ts";

/** The query parameters of `GET /intents`, and the bounds of `limit`. */
export const LIST_QUERY = ["limit", "cursor", "state"] as const;
export const LIST_LIMIT = { min: 1, max: 100, fallback: 20 } as const;

/**
 * `POST /intents`: 201 with the stored record and its `Location` (202 when
 * pending); 200 with `Idempotent-Replayed: true` and the record as it stands
 * for the same signed submission sent again.
 */
export async function postIntent(request: Request, ctx: RequestContext): Promise<Response> {
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
  const verified = await body.verify();
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

// An id no intent can have: over 128 characters (UTF-16 units bound code
// points from above) or holding control characters.
const IMPOSSIBLE_ID = /\p{Cc}/u;

/**
 * The stored id a `{id}` path segment names, or null when no intent can have
 * it (then no store read is needed to answer 404).
 */
export function intentIdOf(rawId: string): string | null {
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    return null;
  }
  if (id.length === 0 || [...id].length > 128 || IMPOSSIBLE_ID.test(id)) return null;
  return normalizeIntentId(id);
}

/** `GET /intents/{id}`. */
export async function getIntent(_request: Request, ctx: RequestContext) {
  const { app } = ctx;
  const id = intentIdOf(ctx.params[0]);
  const record = id === null ? null : await app.store.getIntent(id);
  if (!record) throw new ServiceError("not_found", "no such intent");
  return json(200, renderIntent(record, { now: app.now() }));
}

const STATES = new Set<string>(INTENT_STATES);

/** `GET /intents?limit=&cursor=&state=`: newest first. */
export async function listIntents(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const params = readQuery(request, LIST_QUERY);
  const limit = wholeNumber(params, "limit", LIST_LIMIT);
  const rawState = params.get("state");
  if (rawState !== null && !STATES.has(rawState)) {
    throw new ServiceError(
      "invalid_body",
      "state: must be pending, accepted, expired or rejected",
    );
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

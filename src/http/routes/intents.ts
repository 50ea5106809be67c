/**
 * `POST /intents`, `GET /intents`, `GET /intents/{id}`.
 * @module
 */

import { badRequest, ServiceError } from "../../errors.ts";
import { submitIntent } from "../../domain/submit.ts";
import { renderIntent } from "../../domain/record.ts";
import { normalizeIntentId } from "../../domain/submission.ts";
import { InvalidCursorError } from "../../storage/store.ts";
import { requireBearer } from "../auth.ts";
import { json } from "../respond.ts";
import { type AppContext, readJsonBody } from "../context.ts";

/** What `POST /intents` stored, for the request observers (metrics). */
export interface AcceptedIntent {
  variant: "A" | "B";
  kind: string;
}

// Keyed by request, so the entry goes when the request does.
const accepted = new WeakMap<Request, AcceptedIntent>();

/** The variant and signature kind of the intent `request` stored, if it stored one. */
export function acceptedIntentOf(request: Request): AcceptedIntent | undefined {
  return accepted.get(request);
}

/** `POST /intents`: 201 with the stored record and its `Location`. */
export async function postIntent(request: Request, ctx: AppContext): Promise<Response> {
  const { bytes, value } = await readJsonBody(request, ctx);
  const record = await submitIntent(
    {
      store: ctx.store,
      writer: ctx.writer,
      allowUnsigned: ctx.settings.allowUnsigned,
      passkey: ctx.passkey,
      now: ctx.now,
    },
    bytes,
    value,
  );
  accepted.set(request, { variant: record.variant, kind: record.authorship.kind });
  return json(201, renderIntent(record, value), {
    location: `/intents/${encodeURIComponent(record.id)}`,
  });
}

/** `GET /intents/{id}` (admin). */
export async function getIntent(
  request: Request,
  ctx: AppContext,
  [rawId]: string[],
): Promise<Response> {
  requireBearer(request, [ctx.settings.adminToken]);
  let id: string;
  try {
    id = normalizeIntentId(decodeURIComponent(rawId));
  } catch {
    throw new ServiceError(404, "not_found", "no such intent");
  }
  const record = await ctx.store.getIntent(id);
  if (!record) throw new ServiceError(404, "not_found", "no such intent");
  return json(200, renderIntent(record));
}

/** `GET /intents?limit=&cursor=` (admin): newest first. */
export async function listIntents(request: Request, ctx: AppContext): Promise<Response> {
  requireBearer(request, [ctx.settings.adminToken]);
  const params = new URL(request.url).searchParams;
  const rawLimit = params.get("limit");
  let limit = 20;
  if (rawLimit !== null) {
    if (!/^[0-9]{1,3}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 100) {
      throw badRequest("invalid_body", "limit: must be a whole number from 1 to 100");
    }
    limit = Number(rawLimit);
  }
  const cursor = params.get("cursor") ?? undefined;
  try {
    const page = await ctx.store.listIntents({ limit, cursor: cursor || undefined });
    const items = page.items.map((record) => renderIntent(record));
    return json(200, `{"items":[${items.join(",")}],"cursor":${JSON.stringify(page.cursor)}}`);
  } catch (error) {
    if (error instanceof InvalidCursorError) {
      throw badRequest("invalid_body", "cursor: is not a cursor this service handed out");
    }
    throw error;
  }
}

/**
 * What route handlers are given: the dependencies of the app, built once by
 * `createApp`.
 * @module
 */

import type { Settings } from "../settings.ts";
import type { Store } from "../storage/store.ts";
import type { IntentWriter } from "../domain/submit.ts";
import type { PasskeyPolicy } from "../domain/passkey.ts";
import { ServiceError } from "../errors.ts";
import { readBody } from "./read_body.ts";
import type { DeadlineSweeper } from "./deadlines.ts";
import { parseStrictJson, StrictJsonError } from "../domain/strict_json.ts";

/** Dependencies shared by every handler. */
export interface AppContext {
  settings: Settings;
  store: Store;
  writer: IntentWriter;
  passkey: PasskeyPolicy;
  now: () => Date;
  /** Shared body-read deadlines; without them each read arms its own timer. */
  deadlines?: DeadlineSweeper;
}

/** A route handler: path parameters come from the route's pattern. */
export type Handler = (
  request: Request,
  ctx: AppContext,
  params: string[],
) => Promise<Response> | Response;

/** True when the request's media type is `application/json` (parameters allowed). */
export function isJsonContentType(request: Request): boolean {
  const type = request.headers.get("content-type");
  if (!type) return false;
  return type.split(";", 1)[0].trim().toLowerCase() === "application/json";
}

/**
 * Reads a JSON request body: 415 unless `application/json`, 413 past the
 * size limit, 408 past the time limit, 400 `invalid_json` unless strict JSON.
 *
 * @returns the exact bytes and their parsed value.
 */
export async function readJsonBody(
  request: Request,
  ctx: AppContext,
): Promise<{ bytes: Uint8Array; value: unknown }> {
  if (!isJsonContentType(request)) {
    throw new ServiceError(
      415,
      "unsupported_media_type",
      "Content-Type must be application/json",
    );
  }
  const bytes = await readBody(request, {
    maxBytes: ctx.settings.maxBodyBytes,
    timeoutMs: ctx.settings.bodyTimeoutMs,
    deadlines: ctx.deadlines,
  });
  try {
    return { bytes, value: parseStrictJson(bytes) };
  } catch (error) {
    if (error instanceof StrictJsonError) {
      const message = error.hint ? `${error.message}; ${error.hint}` : error.message;
      throw new ServiceError(400, "invalid_json", message);
    }
    throw error;
  }
}

/**
 * Query strings read as strictly as bodies: an operation takes only the
 * parameters it names, each at most once. A misspelt `after` would otherwise
 * restart a feed from its beginning, and a misspelt `limit` silently give the
 * default; of a repeated parameter, layers disagree on which one counts.
 * And feed positions on the wire: event ids and listing cursors are the
 * position in decimal, and only positions the feed has handed out are taken.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { fieldPath } from "../../domain/validate.ts";
import type { Store } from "../../domain/store.ts";

/**
 * The query parameters of `request`.
 *
 * @param known the parameters the operation takes.
 * @throws {ServiceError} 400 `invalid_body` naming the first parameter that is
 *   not known or is given twice (names are bounded as member names are).
 */
export function readQuery(request: Request, known: readonly string[]): URLSearchParams {
  const params = new URL(request.url).searchParams;
  const seen = new Set<string>();
  for (const name of params.keys()) {
    const shown = fieldPath("", name);
    if (!known.includes(name)) {
      throw new ServiceError("invalid_body", `${shown}: unknown query parameter`);
    }
    if (seen.has(name)) {
      throw new ServiceError("invalid_body", `${shown}: must be given at most once`);
    }
    seen.add(name);
  }
  return params;
}

/** A whole-number parameter's bounds, and its value when absent. */
export interface WholeNumberBounds {
  min: number;
  max: number;
  fallback: number;
}

/**
 * A whole-number query parameter: decimal digits only, no more of them than
 * `max` has, from `min` to `max`; `fallback` when absent.
 *
 * @throws {ServiceError} `invalid_body` naming the parameter and its bounds.
 *
 * @example
 * ```ts
 * const params = new URLSearchParams("limit=50");
 * wholeNumber(params, "limit", { min: 1, max: 100, fallback: 20 }); // 50
 * ```
 */
export function wholeNumber(
  params: URLSearchParams,
  name: string,
  bounds: WholeNumberBounds,
): number {
  const raw = params.get(name);
  if (raw === null) return bounds.fallback;
  const { min, max } = bounds;
  const value = Number(raw);
  if (
    !/^[0-9]+$/.test(raw) || raw.length > String(max).length || value < min || value > max
  ) {
    throw new ServiceError("invalid_body", `${name}: must be a whole number from ${min} to ${max}`);
  }
  return value;
}

const DECIMAL = /^[1-9][0-9]{0,15}$/;

/** The position `text` names, or null when it is not one the feed handed out. */
export async function readPosition(
  store: Pick<Store, "isPosition">,
  text: string,
): Promise<number | null> {
  if (!DECIMAL.test(text)) return null;
  const position = Number(text);
  return await store.isPosition(position) ? position : null;
}

/**
 * The position to start after: 0 (the beginning) for null, else the event id `name` gives.
 *
 * @throws {ServiceError} 400 `invalid_body` when it is not an event id the feed handed out.
 */
export async function eventPosition(
  store: Pick<Store, "isPosition">,
  id: string | null,
  name: string,
): Promise<number> {
  if (id === null) return 0;
  const position = await readPosition(store, id);
  if (position === null) {
    throw new ServiceError("invalid_body", `${name}: is not an event id this service handed out`);
  }
  return position;
}

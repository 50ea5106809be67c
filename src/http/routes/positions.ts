/**
 * Feed positions on the wire: event ids (`GET /events`) and listing cursors
 * (`GET /intents`) are the position in decimal, and only positions the feed
 * has handed out are accepted.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import type { Store } from "../../domain/store.ts";

const DECIMAL = /^[1-9][0-9]{0,15}$/;

/**
 * The position `text` names, or null when it is not one the feed handed out.
 */
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

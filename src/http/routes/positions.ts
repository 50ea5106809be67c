/**
 * Feed positions on the wire: event ids (`GET /events`) and listing cursors
 * (`GET /intents`) are the position in decimal, and only positions the feed
 * has handed out are accepted.
 * @module
 */

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

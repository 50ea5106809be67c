/**
 * The kinds of due work this version does, each with its handler.
 * @module
 */

import { expireIntent } from "../domain/approve.ts";
import { EXPIRY_WORK, type Store } from "../domain/store.ts";
import type { DueHandler } from "./due_work.ts";

/** What the handlers need. */
export interface HandlerDeps {
  store: Pick<Store, "changeIntent">;
  now: () => Date;
  /** Told of each intent this process expired (metrics). */
  expired?: () => void;
}

/**
 * The handlers by kind: a pending intent's expiry records its
 * `intent.expired` in the commit that removes the work.
 */
export function dueWorkHandlers(deps: HandlerDeps): Record<string, DueHandler> {
  return {
    [EXPIRY_WORK]: async (work) => {
      const outcome = await expireIntent(deps, work.id);
      if (outcome === "expired") {
        deps.expired?.();
        return "done";
      }
      // Accepted or expired meanwhile, the work is gone with that commit; else it is stale.
      return outcome === "unchanged" ? "drop" : "later";
    },
  };
}

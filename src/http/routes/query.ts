/**
 * Query strings read as strictly as bodies: an operation takes only the
 * parameters it names, each at most once. A misspelt `after` would otherwise
 * restart a feed from its beginning, and a misspelt `limit` silently give the
 * default; of a repeated parameter, layers disagree on which one counts.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { fieldPath } from "../../domain/validate.ts";

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

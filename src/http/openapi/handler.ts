/**
 * `GET /openapi.json`.
 * @module
 */

import type { RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { buildOpenApiDocument, type Declared } from "./document.ts";

/**
 * The `GET /openapi.json` handler for the given endpoints. The document is
 * built on the first request and kept: it depends on nothing that changes.
 */
export function openApiHandler(endpoints: readonly Declared[]) {
  let text: string | undefined;
  return (_request: Request, _ctx: RequestContext): Response => {
    text ??= JSON.stringify(buildOpenApiDocument(endpoints));
    return json(200, text, { "cache-control": "public, max-age=300" });
  };
}

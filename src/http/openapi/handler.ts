/**
 * `GET /openapi.json`.
 * @module
 */

import type { RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { buildOpenApiDocument, type RouteShape } from "./document.ts";

/**
 * The `GET /openapi.json` handler for the given route table. The document is
 * built on the first request and kept: it depends on nothing that changes.
 */
export function openApiHandler(routes: readonly RouteShape[]) {
  let text: string | undefined;
  return (_request: Request, _ctx: RequestContext): Response => {
    text ??= JSON.stringify(buildOpenApiDocument(routes));
    return json(200, text, { "cache-control": "public, max-age=300" });
  };
}

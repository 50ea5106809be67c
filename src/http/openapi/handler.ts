/**
 * `GET /openapi.json`.
 * @module
 */

import type { Settings } from "../../settings.ts";
import type { RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { buildOpenApiDocument, type Declared } from "./document.ts";

/**
 * The `GET /openapi.json` handler for the given endpoints. The document
 * follows the app's settings (what the process accepts); it is built on the
 * first request for those settings and kept: they do not change.
 */
export function openApiHandler(endpoints: readonly Declared[]) {
  const texts = new WeakMap<Settings, string>();
  return (_request: Request, ctx: RequestContext): Response => {
    const { settings } = ctx.app;
    let text = texts.get(settings);
    if (text === undefined) {
      text = JSON.stringify(buildOpenApiDocument(endpoints, settings));
      texts.set(settings, text);
    }
    return json(200, text, { "cache-control": "public, max-age=300" });
  };
}

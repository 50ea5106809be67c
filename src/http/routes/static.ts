/**
 * The passkey page: `GET /` and `GET /static/{name}`, served from an allow-list
 * of files under `static/` with a strict Content-Security-Policy. The files
 * are read once per app (`static_files.ts`), and never by a path taken from
 * the URL. And their OpenAPI operations.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import type { RequestContext } from "../context.ts";
import type { StaticFiles } from "../static_files.ts";
import type { Route } from "../route.ts";
import { ERR } from "../openapi/responses.ts";

/**
 * The page's Content-Security-Policy: scripts, styles, images and fetches from
 * this origin only, nothing inline, no plugins, no framing, no form posts, and
 * DOM sinks such as `innerHTML` disabled by Trusted Types.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

const SCRIPT = "text/javascript; charset=utf-8";

/** The files the page is made of, under `static/`, and their media types. */
export const STATIC_FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": SCRIPT,
  "approve.js": SCRIPT,
  "dom.js": SCRIPT,
  "json_view.js": SCRIPT,
  "log_proof.js": SCRIPT,
  "passkeys.js": SCRIPT,
  "client.js": SCRIPT,
  "style.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** True when `If-None-Match` lists the current ETag (or `*`). */
function notModified(request: Request, etag: string): boolean {
  const given = request.headers.get("if-none-match");
  if (!given) return false;
  return given.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

async function serve(request: Request, files: StaticFiles, name: string): Promise<Response> {
  const file = await files.load(name, STATIC_FILES[name]);
  const headers = {
    "content-type": file.type,
    "content-security-policy": PAGE_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    // Revalidate every time: the files change with each deployment, the ETag makes it cheap.
    "cache-control": "no-cache",
    "etag": file.etag,
  };
  if (notModified(request, file.etag)) return new Response(null, { status: 304, headers });
  return new Response(file.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers });
}

/** `GET /`: the passkey page. */
function getPage(request: Request, { app }: RequestContext): Promise<Response> {
  return serve(request, app.staticFiles, "index.html");
}

/** `GET /static/{name}`: one allow-listed file, else 404. */
function getStatic(
  request: Request,
  { app, params: [name] }: RequestContext,
): Promise<Response> {
  if (!Object.hasOwn(STATIC_FILES, name)) {
    throw new ServiceError("not_found", "no such file");
  }
  return serve(request, app.staticFiles, name);
}

/** The passkey page's routes (docs/interface.md §7). */
export const PAGE_ROUTES: Route[] = [
  {
    method: "GET",
    path: "/",
    access: "public",
    handler: getPage,
    operation: () => ({
      operationId: "page_get",
      summary: "The passkey page (public)",
      tags: ["operations"],
      responses: {
        "200": {
          description: "An HTML page that signs and submits intents with a passkey.",
          content: { "text/html": { schema: { type: "string" } } },
        },
      },
    }),
  },
  {
    method: "GET",
    path: "/static/{name}",
    access: "public",
    handler: getStatic,
    operation: () => ({
      operationId: "static_get",
      summary: "A file of the passkey page (public)",
      tags: ["operations"],
      parameters: [{
        name: "name",
        in: "path",
        required: true,
        description: "One of the page's files (an allow-list; anything else is 404).",
        schema: { type: "string" },
      }],
      responses: {
        "200": {
          description: "The file, with its media type.",
          content: { "*/*": { schema: {} } },
        },
        "404": ERR.notFound("file"),
      },
    }),
  },
];

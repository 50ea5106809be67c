/**
 * The passkey page: `GET /` and `GET /static/{name}`, served from an allow-list
 * of files under `static/` with a strict Content-Security-Policy.
 *
 * Files are read relative to this module's URL (so they travel with the code,
 * on Deno Deploy too), once per process, and never by a path taken from the URL.
 * @module
 */

import { hex } from "@scure/base";
import { ServiceError } from "../../errors.ts";
import type { RequestContext } from "../context.ts";

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

/** The files the page is made of: public name → file under `static/` and its media type. */
export const STATIC_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  "index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "approve.js": { file: "approve.js", type: "text/javascript; charset=utf-8" },
  "dom.js": { file: "dom.js", type: "text/javascript; charset=utf-8" },
  "json_view.js": { file: "json_view.js", type: "text/javascript; charset=utf-8" },
  "passkeys.js": { file: "passkeys.js", type: "text/javascript; charset=utf-8" },
  "client.js": { file: "client.js", type: "text/javascript; charset=utf-8" },
  "style.css": { file: "style.css", type: "text/css; charset=utf-8" },
  "favicon.svg": { file: "favicon.svg", type: "image/svg+xml" },
};

const STATIC_DIR = new URL("../../../static/", import.meta.url);

interface LoadedFile {
  bytes: Uint8Array;
  type: string;
  etag: string;
}

const loaded = new Map<string, Promise<LoadedFile>>();

async function readStatic(file: string): Promise<Uint8Array> {
  const url = new URL(file, STATIC_DIR);
  if (url.protocol === "file:") return await Deno.readFile(url);
  // Running from a remote module URL: the files sit beside it at the same base.
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** The file behind an allow-listed name, read once and kept (the set is small and fixed). */
function load(name: string): Promise<LoadedFile> {
  let file = loaded.get(name);
  if (!file) {
    const entry = STATIC_FILES[name];
    file = (async () => {
      const bytes = await readStatic(entry.file);
      const digest = new Uint8Array(
        await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
      );
      const etag = `"${hex.encode(digest.subarray(0, 16))}"`;
      return { bytes, type: entry.type, etag };
    })();
    // A failed read is not cached, so a transient error does not stick.
    file.catch(() => loaded.delete(name));
    loaded.set(name, file);
  }
  return file;
}

/** True when `If-None-Match` lists the current ETag (or `*`). */
function notModified(request: Request, etag: string): boolean {
  const given = request.headers.get("if-none-match");
  if (!given) return false;
  return given.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

async function serve(request: Request, name: string): Promise<Response> {
  const file = await load(name);
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
export function getPage(request: Request): Promise<Response> {
  return serve(request, "index.html");
}

/** `GET /static/{name}`: one allow-listed file, else 404. */
export function getStatic(request: Request, { params: [name] }: RequestContext): Promise<Response> {
  if (!Object.hasOwn(STATIC_FILES, name)) {
    throw new ServiceError("not_found", "no such file");
  }
  return serve(request, name);
}

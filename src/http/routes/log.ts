/**
 * The verifiable log's routes (docs/interface.md §14, C2SP tlog-tiles):
 * `GET /log/checkpoint`, `/log/tile/{L}/{N}[.p/{W}]`,
 * `/log/tile/entries/{N}[.p/{W}]`, `/log/proof?leaf=|id=` and `/log/key`,
 * read through the log's port (`src/domain/log.ts`), with their OpenAPI
 * operations.
 * @module
 */

import { base64urlnopad } from "@scure/base";
import { parseTilePath, type Tile, TILE_WIDTH } from "@intents/protocol/log/tile";
import type { LogReader } from "../../domain/log.ts";
import { ServiceError } from "../../errors.ts";
import type { RequestContext } from "../context.ts";
import { HttpError } from "../respond.ts";
import type { Route } from "../route.ts";
import { readQuery } from "./query.ts";
import { errorResponse, REQUEST_ID_HEADER, shared, strictQuery } from "../openapi/responses.ts";

/** The query parameters of `GET /log/proof`: exactly one of them. */
export const PROOF_QUERY = ["leaf", "id"] as const;

const TEXT = "text/plain; charset=utf-8";
/** A full tile or bundle never changes (docs/interface.md §14). */
const IMMUTABLE = "private, max-age=31536000, immutable";

function logOf(ctx: RequestContext): LogReader {
  const { tlog } = ctx.app;
  if (tlog === undefined) throw new ServiceError("not_found", "no such resource");
  return tlog;
}

/** An answer of the log: text unless told, cached as told, never sniffed. */
function text(body: BodyInit, cacheControl: string, contentType = TEXT): Response {
  return new Response(body, {
    headers: {
      "content-type": contentType,
      "cache-control": cacheControl,
      "vary": "Authorization",
      "x-content-type-options": "nosniff",
    },
  });
}

async function getCheckpoint(_request: Request, ctx: RequestContext): Promise<Response> {
  const served = await logOf(ctx).checkpoint();
  if (served.state === "empty") {
    throw new ServiceError("not_found", "the log is empty: no checkpoint is signed yet");
  }
  if (served.state === "catching_up") {
    throw new HttpError("unavailable", "the log is catching up with the feed; try again later", {
      "retry-after": "1",
    });
  }
  if (served.state === "witnessing") {
    throw new HttpError(
      "unavailable",
      "no checkpoint has the witnesses' cosignatures yet; try again later",
      { "retry-after": "1" },
    );
  }
  const cache = ctx.app.settings.log.public ? "public, max-age=1" : "private, max-age=1";
  return text(served.text, cache);
}

async function getTile(_request: Request, ctx: RequestContext): Promise<Response> {
  let tile: Tile;
  try {
    tile = parseTilePath(`tile/${ctx.params[0]}`);
  } catch {
    throw new ServiceError(
      "invalid_body",
      "path: not a canonical tile path (tile/{L}/{N}[.p/{W}] or tile/entries/{N}[.p/{W}])",
    );
  }
  const data = await logOf(ctx).tile(tile);
  if (data === null) throw new ServiceError("not_found", "the tree does not hold this tile");
  // A partial tile of one width never changes either; the full one replaces it soon.
  const cache = tile.width === TILE_WIDTH ? IMMUTABLE : "private, max-age=1";
  return text(data, cache, "application/octet-stream");
}

async function getProof(request: Request, ctx: RequestContext): Promise<Response> {
  const params = readQuery(request, PROOF_QUERY);
  const leaf = params.get("leaf");
  const id = params.get("id");
  if ((leaf === null) === (id === null)) {
    throw new ServiceError("invalid_body", "query: give exactly one of leaf and id");
  }
  const log = logOf(ctx);
  let proof: string | null;
  if (leaf !== null) {
    let hash: Uint8Array | null = null;
    try {
      hash = base64urlnopad.decode(leaf);
    } catch {
      hash = null;
    }
    if (hash === null || hash.length !== 32) {
      throw new ServiceError("invalid_body", "leaf: must be base64url (no padding) of 32 bytes");
    }
    proof = await log.proveLeaf(hash);
  } else {
    if (!/^[1-9][0-9]{0,15}$/.test(id!) || !Number.isSafeInteger(Number(id))) {
      throw new ServiceError("invalid_body", "id: must be an event id (decimal, from 1)");
    }
    proof = await log.proveIndex(Number(id) - 1);
  }
  if (proof === null) {
    throw new ServiceError("not_found", "no such entry, or not yet covered by the checkpoint");
  }
  return text(proof, "private, max-age=1");
}

async function getKey(_request: Request, ctx: RequestContext): Promise<Response> {
  return text(await logOf(ctx).verifierKey(), "public, max-age=300");
}

const textContent = (example?: string) => ({
  [TEXT]: { schema: { type: "string" }, ...(example ? { example } : {}) },
});

const notFound = (what: string) => errorResponse(what, ["not_found"]);

/** The log's routes (docs/interface.md §14). */
export const LOG_ROUTES: Route[] = [
  {
    method: "GET",
    path: "/log/checkpoint",
    access: "admin_or_events",
    publicWhen: (_request, settings) => settings.log.public,
    handler: getCheckpoint,
    operation: () => ({
      operationId: "log_checkpoint_get",
      summary: "The log's newest signed checkpoint (token, or public with LOG_PUBLIC=true)",
      description: "A C2SP signed note whose body is a tlog-checkpoint: the origin " +
        "(`LOG_ORIGIN`), the tree size in decimal and the base64 root hash, then the log's " +
        "Ed25519 signature and the witnesses' cosignatures held for it. It covers every event " +
        "at most about 3 seconds after its 201 or 202 (plus the witnesses' answer time with " +
        "`LOG_WITNESS_QUORUM`). `Cache-Control: private, max-age=1` (`public` where it needs " +
        "no token).",
      tags: ["log"],
      responses: {
        "200": {
          description: "The signed checkpoint.",
          headers: { "X-Request-Id": REQUEST_ID_HEADER },
          content: textContent(
            "localhost/intents\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n" +
              "— localhost/intents AAAAAA…\n",
          ),
        },
        "404": notFound("The log is empty: no event, no checkpoint."),
        ...shared("405", "500"),
        "503": errorResponse(
          "The log is still catching up with a feed older than it, or no checkpoint has the " +
            "cosignatures of `LOG_WITNESS_QUORUM` witnesses yet (`Retry-After`).",
          ["unavailable"],
        ),
      },
    }),
  },
  {
    method: "GET",
    path: "/log/tile/{tile}",
    access: "admin_or_events",
    rest: true,
    handler: getTile,
    operation: () => ({
      operationId: "log_tile_get",
      summary: "A hash tile or an entry bundle of the log (admin or events token)",
      description: "C2SP tlog-tiles: `{tile}` is `{L}/{N}[.p/{W}]` (a hash tile of level L, " +
        "0–63) or `entries/{N}[.p/{W}]` (an entry bundle: each entry a big-endian uint16 " +
        "length, then the entry), N in 3-digit path elements (`x001/x234/067`), W 1–255 for a " +
        "partial tile; it spans several path segments. A partial tile is served at every " +
        "width up to the current one. A full tile: `Cache-Control: private, " +
        "max-age=31536000, immutable`, `Vary: Authorization`.",
      tags: ["log"],
      parameters: [{
        name: "tile",
        in: "path",
        required: true,
        description: "The tile's path below `/log/tile/`, in its one canonical form.",
        schema: { type: "string" },
      }],
      responses: {
        "200": {
          description: "The tile's hashes (32 bytes each), or the bundle's entries.",
          headers: { "X-Request-Id": REQUEST_ID_HEADER },
          content: { "application/octet-stream": { schema: { type: "string" } } },
        },
        "400": errorResponse("The path is malformed or not canonical.", ["invalid_body"]),
        "404": notFound("The tree does not hold this tile (or this width of it)."),
        ...shared("405", "500"),
      },
    }),
  },
  {
    method: "GET",
    path: "/log/proof",
    access: "admin_or_events",
    publicWhen: (request) => new URL(request.url).searchParams.has("leaf"),
    handler: getProof,
    operation: () => ({
      operationId: "log_proof_get",
      summary: "An entry's inclusion proof (by leaf hash: public; by event id: token)",
      description: "A `c2sp.org/tlog-proof@v1` proof of the entry against the served " +
        "checkpoint: by `leaf` (base64url of its leaf hash, public: knowing a leaf hash means " +
        `knowing the entry) or by \`id\` (an event id, with a token). ${strictQuery(PROOF_QUERY)}`,
      tags: ["log"],
      parameters: [
        {
          name: "leaf",
          in: "query",
          required: false,
          description: "base64url without padding of the entry's leaf hash SHA-256(0x00 ‖ entry).",
          schema: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" },
        },
        {
          name: "id",
          in: "query",
          required: false,
          description: "An event id (the entry at index id − 1).",
          schema: { type: "string", pattern: "^[1-9][0-9]{0,15}$" },
        },
      ],
      responses: {
        "200": {
          description: "The proof.",
          headers: { "X-Request-Id": REQUEST_ID_HEADER },
          content: textContent(),
        },
        "400": errorResponse(
          "Not exactly one of `leaf` and `id`, a malformed one, or another parameter.",
          ["invalid_body"],
        ),
        "404": notFound("No such entry, or the served checkpoint does not cover it yet."),
        ...shared("405", "500"),
      },
    }),
  },
  {
    method: "GET",
    path: "/log/key",
    access: "public",
    cost: "one",
    handler: getKey,
    operation: () => ({
      operationId: "log_key_get",
      summary: "The log's verifier key",
      description: "`<name>+<8 lowercase hex key id>+<base64 of 0x01 ‖ Ed25519 public key>`, " +
        "as `golang.org/x/mod/sumdb/note` reads it; no trailing newline.",
      tags: ["log"],
      responses: {
        "200": {
          description: "The verifier key.",
          headers: { "X-Request-Id": REQUEST_ID_HEADER },
          content: textContent(),
        },
        ...shared("405", "500"),
      },
    }),
  },
];

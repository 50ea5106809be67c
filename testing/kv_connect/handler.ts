/**
 * The HTTP side of a KV Connect server, as a fetch-style handler over a
 * {@link KvBackend}: the metadata exchange at `POST /` and the data path at
 * `POST /v2/snapshot_read`, `/v2/atomic_write` and `/v2/watch`, answering
 * what denokv (`denokv/main.rs`) answers, errors included.
 * @module
 */

import { API_ERRORS, type ApiError, apiErrorOf } from "./api_errors.ts";
import { BackendError, type BackendWatch, type KvBackend } from "./backend.ts";
import { LENGTH_DELIMITED, readFields } from "./protobuf.ts";

/** denokv serves one database, whose id is the nil UUID. */
export const DATABASE_ID = "00000000-0000-0000-0000-000000000000";
/** denokv's `MAX_WATCHED_KEYS` (`proto/limits.rs`). */
export const MAX_WATCHED_KEYS = 10;
/** denokv's `MAX_WRITE_KEY_SIZE_BYTES` (`proto/limits.rs`). */
export const MAX_WRITE_KEY_SIZE_BYTES = 2048;
/** axum's default request body limit, in force in denokv. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** denokv sends an empty frame on a watch stream every 5 s. */
const WATCH_KEEPALIVE_MS = 5_000;
/** Metadata is valid for a day, as denokv grants. */
const METADATA_TTL_MS = 24 * 60 * 60 * 1000;

/** Options of {@link createKvConnectHandler}. */
export interface HandlerOptions {
  backend: KvBackend;
  /** The access token clients must present. */
  token: string;
  /**
   * Loses the answer of every Nth atomic write (1: every one): the write is
   * applied, then answered 503, as when a connection is cut after a commit.
   * Deno's KV Connect client then sends the same write again, whose checks
   * now fail. Default: none is lost.
   */
  loseAnswers?: number;
}

/** A handler and the means to end the watch streams it keeps open. */
export interface KvConnectHandler {
  handle(request: Request): Promise<Response>;
  /** Ends every open watch stream, so a server can finish its responses. */
  endWatches(): void;
}

function errorResponse(error: ApiError): Response {
  return new Response(error.message, {
    status: error.status,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

function protobufResponse(body: Uint8Array): Response {
  return new Response(body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": "application/x-protobuf" },
  });
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** Checks `Authorization: Bearer <token>` as denokv does; null when it passes. */
function checkBearer(request: Request, token: string): ApiError | null {
  const authorization = request.headers.get("authorization");
  if (authorization === null) return API_ERRORS.malformedAuthorization;
  const space = authorization.indexOf(" ");
  if (space < 0) return API_ERRORS.malformedAuthorization;
  const scheme = authorization.slice(0, space);
  const presented = authorization.slice(space + 1);
  if (scheme.toLowerCase() !== "bearer" || !constantTimeEqual(presented, token)) {
    return API_ERRORS.invalidAccessToken;
  }
  return null;
}

/** Accepts the nil UUID in the forms `Uuid::parse_str` reads. */
function isNilUuid(text: string): boolean {
  const bare = text.replace(/^urn:uuid:/i, "").replace(/^\{(.*)\}$/, "$1");
  return /^0{8}-0{4}-0{4}-0{4}-0{12}$/.test(bare) || /^0{32}$/.test(bare);
}

async function readBody(request: Request): Promise<Uint8Array | ApiError> {
  if (request.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of request.body) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) return API_ERRORS.bodyTooLarge;
    chunks.push(chunk);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.length;
  }
  return body;
}

function metadata(body: Uint8Array, request: Request, token: string): Response {
  let versions: unknown;
  try {
    versions = (JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>)
      ?.supportedVersions;
  } catch {
    versions = undefined;
  }
  if (!Array.isArray(versions) || !versions.every((v) => Number.isInteger(v) && v >= 0)) {
    return errorResponse(API_ERRORS.minimumProtocolVersion);
  }
  const version = versions.includes(3) ? 3 : versions.includes(2) ? 2 : 0;
  if (version === 0) return errorResponse(API_ERRORS.noMatchingProtocolVersion);
  const refused = checkBearer(request, token);
  if (refused) return errorResponse(refused);
  return Response.json({
    version,
    databaseId: DATABASE_ID,
    endpoints: [{ url: "/v2", consistency: "strong" }],
    token,
    expiresAt: new Date(Date.now() + METADATA_TTL_MS).toISOString(),
  });
}

/** The data path's header checks, in denokv's order; null when they pass. */
function checkDataPath(request: Request, token: string): ApiError | null {
  const version = request.headers.get("x-denokv-version");
  if (version !== "2" && version !== "3") return API_ERRORS.invalidProtocolVersion;
  const refused = checkBearer(request, token);
  if (refused) return refused;
  const databaseId = request.headers.get("x-denokv-database-id");
  if (databaseId === null || !isNilUuid(databaseId)) return API_ERRORS.invalidDatabaseId;
  return null;
}

/**
 * denokv checks a `Watch` request's keys (`TryFrom<pb::Watch>`), which the
 * addon's `startWatch` skips; the same checks, on an already decoded request.
 */
function checkWatchKeys(request: Uint8Array): ApiError | null {
  const bytesFields = (message: Uint8Array) =>
    readFields(message).flatMap((f) =>
      f.number === 1 && f.wireType === LENGTH_DELIMITED ? [f.value] : []
    );
  let keys: Uint8Array[];
  try {
    // A WatchKey's key is its last field 1, as protobuf decoders read it.
    keys = bytesFields(request).map((watchKey) => bytesFields(watchKey).at(-1) ?? new Uint8Array());
  } catch {
    // The backend decoded it; wire forms this reader skips carry no keys.
    return null;
  }
  if (keys.length > MAX_WATCHED_KEYS) return API_ERRORS.tooManyWatchedKeys;
  if (keys.some((key) => key.length > MAX_WRITE_KEY_SIZE_BYTES)) return API_ERRORS.keyTooLong;
  return null;
}

function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + message.length);
  new DataView(out.buffer).setUint32(0, message.length, true);
  out.set(message, 4);
  return out;
}

/**
 * A watch answer: frames of a little-endian u32 length and a `WatchOutput`,
 * and an empty frame every 5 s so that either side notices a dead peer.
 */
function watchStream(watch: BackendWatch, open: Set<() => void>): ReadableStream<Uint8Array> {
  let stop = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let done = false;
      const keepalive = setInterval(
        () => controller.enqueue(frame(new Uint8Array())),
        WATCH_KEEPALIVE_MS,
      );
      stop = () => {
        if (done) return;
        done = true;
        clearInterval(keepalive);
        open.delete(stop);
        watch.end();
        try {
          controller.close();
        } catch {
          // Already cancelled by the client.
        }
      };
      open.add(stop);
      (async () => {
        while (!done) {
          const message = await watch.next().catch(() => undefined);
          if (message === undefined || done) break;
          controller.enqueue(frame(message));
        }
        stop();
      })();
    },
    cancel() {
      stop();
    },
  });
}

/** Builds the handler for one backend and token. */
export function createKvConnectHandler(options: HandlerOptions): KvConnectHandler {
  const { backend, token, loseAnswers } = options;
  const openWatches = new Set<() => void>();
  let writes = 0;

  async function dataPath(request: Request, route: string): Promise<Response> {
    const refused = checkDataPath(request, token);
    if (refused) return errorResponse(refused);
    const body = await readBody(request);
    if (!(body instanceof Uint8Array)) return errorResponse(body);
    try {
      if (route === "snapshot_read") return protobufResponse(await backend.snapshotRead(body));
      if (route === "atomic_write") {
        const answer = await backend.atomicWrite(body);
        if (loseAnswers !== undefined && ++writes % loseAnswers === 0) {
          return errorResponse({ status: 503, message: "the answer of this write was lost" });
        }
        return protobufResponse(answer);
      }
      const watch = await backend.watch(body);
      const overLimit = checkWatchKeys(body);
      if (overLimit) {
        watch.end();
        return errorResponse(overLimit);
      }
      return new Response(watchStream(watch, openWatches), {
        headers: { "content-type": "application/octet-stream" },
      });
    } catch (error) {
      if (!(error instanceof BackendError)) throw error;
      const answer = apiErrorOf(error.message);
      if (answer.status >= 500) console.error(`kv-connect: ${route}: ${error.message}`);
      return errorResponse(answer);
    }
  }

  return {
    async handle(request) {
      const { pathname } = new URL(request.url);
      const route = pathname === "/" ? "metadata" : /^\/v2\/(snapshot_read|atomic_write|watch)$/
        .exec(pathname)?.[1];
      if (route === undefined) return errorResponse(API_ERRORS.notFound);
      // axum answers a known path with another method 405, without a body.
      if (request.method !== "POST") return new Response(null, { status: 405 });
      if (route !== "metadata") return await dataPath(request, route);
      const body = await readBody(request);
      if (!(body instanceof Uint8Array)) return errorResponse(body);
      return metadata(body, request, token);
    },
    endWatches() {
      for (const stop of [...openWatches]) stop();
    },
  };
}

/**
 * What route handlers are given: the app's dependencies, built once by
 * `createApp`, and the state of the one request being answered.
 * @module
 */

import type { Settings } from "../settings.ts";
import type { IntentWriter, Store } from "../domain/store.ts";
import type { LogReader } from "../domain/log.ts";
import type { WebhookStore } from "../webhooks/store.ts";
import type { VerifyContext } from "../domain/authorship.ts";
import { ServiceError } from "../errors.ts";
import type { RequestMetrics, RequestOutcome } from "./metrics.ts";
import type { MetricsRegistry } from "../telemetry/registry.ts";
import { readBody } from "./read_body.ts";
import type { DeadlineSweeper } from "./deadlines.ts";
import { parseJsonBody } from "../domain/strict_json.ts";
import { isJsonMediaType } from "../media_type.ts";
import type { Verifier } from "../workers/verify_pool.ts";
import type { StaticFiles } from "./static_files.ts";
import type { RequestLimits } from "./rate_limit.ts";

/** Dependencies shared by every handler. */
export interface AppContext {
  settings: Settings;
  store: Store;
  /** Webhook endpoints, their leases and attempts (docs/interface.md §11). */
  webhooks: WebhookStore;
  /** How `POST /intents` stores what it accepted: one commit each, or grouped. */
  writer: IntentWriter;
  /** The serving thread's verify context: the passkey policy and its caches (approvals use it). */
  verifyContext: VerifyContext;
  /** Where `POST /intents` bodies are parsed and verified. */
  verifier: Verifier;
  /** The passkey page's files, read once. */
  staticFiles: StaticFiles;
  now: () => Date;
  /** The edge's own series. */
  metrics: RequestMetrics;
  /** Every series `GET /metrics` serves, the edge's among them. */
  registry: MetricsRegistry;
  /** Aborted when the server stops: long-polls and event streams end. */
  stopping: AbortSignal;
  /** Shared body-read deadlines; without them each read arms its own timer. */
  deadlines?: DeadlineSweeper;
  /** This process's rate limits (docs/interface.md §12). */
  limits: RequestLimits;
  /** The verifiable log (docs/interface.md §14), when served. */
  tlog?: LogReader;
}

/** One request's context: the app, the path parameters, and what the handler reports. */
export interface RequestContext extends RequestOutcome {
  readonly app: AppContext;
  /** The route pattern's capture groups, still URL-encoded. */
  readonly params: readonly string[];
  /** The connection's peer, as `Deno.serve` reports it; absent when the app is called directly. */
  readonly peer?: Deno.Addr;
  /** Headers the answer carries, whatever it is (the rate limits' headers). */
  readonly headers: Record<string, string>;
}

/** A route handler. */
export type Handler = (request: Request, ctx: RequestContext) => Promise<Response> | Response;

/**
 * Reads a JSON request body's bytes: 415 `unsupported_media_type` unless
 * `application/json`, 413 past the size limit, 408 past the time limit.
 */
export async function readJsonBytes(request: Request, app: AppContext): Promise<Uint8Array> {
  const type = request.headers.get("content-type");
  if (type === null || !isJsonMediaType(type)) {
    throw new ServiceError("unsupported_media_type", "Content-Type must be application/json");
  }
  return await readBody(request, {
    maxBytes: app.settings.maxBodyBytes,
    timeoutMs: app.settings.bodyTimeoutMs,
    deadlines: app.deadlines,
  });
}

/**
 * Reads a JSON request body as {@link readJsonBytes} does, and its value:
 * 400 `invalid_json` unless strict JSON (`parseJsonBody`).
 */
export async function readJsonBody(request: Request, app: AppContext): Promise<unknown> {
  return parseJsonBody(await readJsonBytes(request, app)).value;
}

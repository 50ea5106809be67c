/**
 * Operator settings read from the environment. Every setting is validated at
 * boot; a malformed one stops the server with a one-line message naming it.
 * @module
 */

import { SettingsError } from "./errors.ts";
import { hex } from "@scure/base";
import { checkExtractorUrl } from "./domain/extractor_url.ts";
import { MAX_STORED_BODY_BYTES } from "./domain/intent.ts";
import { type Env, type LimitSettings, readLimitSettings, wholeNumber } from "./limits_settings.ts";
import { type LogSettings, readLogSettings } from "./log/settings.ts";

/** The validated settings the service runs with. */
export interface Settings {
  port: number;
  hostname: string;
  /** KV location: a file path, `:memory:`, a KV Connect URL, or undefined for `Deno.openKv()`'s default. */
  kvPath: string | undefined;
  adminToken: string;
  /** True when the token was generated at boot (it is then printed once). */
  adminTokenGenerated: boolean;
  allowUnsigned: boolean;
  evidenceExtractorUrl: string;
  passkeyRpIds: string[];
  passkeyOrigins: string[];
  passkeyRequireUv: boolean;
  maxBodyBytes: number;
  /** How long a client may take to send its whole body. */
  bodyTimeoutMs: number;
  /** Bearer token for `GET /metrics` besides the admin token; undefined: admin only. */
  metricsToken: string | undefined;
  /** Bearer token for `GET /events` besides the admin token; undefined: admin only. */
  eventsToken: string | undefined;
  /** How often an idle event stream sends a comment line. */
  eventsKeepaliveMs: number;
  /** Concurrent submissions grouped into one KV commit at most; 1 disables grouping. */
  commitBatchMax: number;
  /** After SIGTERM or SIGINT, the most time in-flight requests get before the process exits. */
  shutdownTimeoutMs: number;
  /** Worker threads parsing and verifying submissions; 0: the serving thread does it. */
  verifyWorkers: number;
  /** `WEBHOOKS_ALLOW_HTTP`: webhook URLs may be plain `http:` (docs/interface.md §11). */
  webhooksAllowHttp: boolean;
  /** `WEBHOOKS_ALLOW_PRIVATE`: webhook URLs and their names' addresses may be inside (§11). */
  webhooksAllowPrivate: boolean;
  /**
   * `DENO_DEPLOY=true`: the service runs on Deno Deploy, whose rules apply
   * (plain TCP to port 443 is refused: webhooks to it connect by name).
   */
  denoDeploy: boolean;
  /** `WEBHOOK_TIMEOUT_MS`: the most one delivery attempt may take. */
  webhookTimeoutMs: number;
  /**
   * `WEBHOOK_RETRY_SCHEDULE_MS`: the delays before each retry of a failed
   * delivery; default §11's (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). An
   * internal setting, for tests: production keeps the contract's schedule.
   */
  webhookRetryScheduleMs: readonly number[];
  /** The abuse-control limits (docs/interface.md §12). */
  limits: LimitSettings;
  /** The verifiable log's settings (docs/interface.md §14). */
  log: LogSettings;
}

/** The largest body accepted: an intent record stores the body, within a KV value. */
export const MAX_BODY_BYTES_LIMIT = MAX_STORED_BODY_BYTES;

function parseBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new SettingsError(`${name} must be "true" or "false"`);
}

function parseList(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const items = raw.split(",").map((s) => s.trim());
  if (items.some((s) => s === "" || /[\s\p{Cc}]/u.test(s))) {
    throw new SettingsError(`${name} must be a comma-separated list of non-empty values`);
  }
  return items;
}

function parseToken(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new SettingsError(`${name} must be at least 16 printable ASCII characters`);
  }
  return raw;
}

/** §11's retry schedule: the delays before the 1st to 7th retry of a failed delivery. */
export const WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  300_000,
  1_800_000,
  7_200_000,
  18_000_000,
  36_000_000,
  36_000_000,
];

/** Longest delay `WEBHOOK_RETRY_SCHEDULE_MS` may name: a day. */
const MAX_RETRY_DELAY_MS = 86_400_000;
/** Most retries `WEBHOOK_RETRY_SCHEDULE_MS` may name. */
const MAX_RETRIES = 20;

function parseSchedule(env: Env, name: string, fallback: readonly number[]): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const items = raw.split(",").map((s) => s.trim());
  const message =
    `${name} must be 1 to ${MAX_RETRIES} comma-separated whole numbers of milliseconds, each at most ${MAX_RETRY_DELAY_MS}`;
  if (items.length > MAX_RETRIES) throw new SettingsError(message);
  return items.map((item) => {
    if (!/^[0-9]{1,9}$/.test(item) || Number(item) > MAX_RETRY_DELAY_MS) {
      throw new SettingsError(message);
    }
    return Number(item);
  });
}

function randomToken(): string {
  return hex.encode(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Reads the settings from an environment map.
 *
 * @param env variables, e.g. `Deno.env.toObject()`.
 * @param cpus the CPUs this process may use (`VERIFY_WORKERS`' default).
 * @returns validated settings with defaults applied.
 * @throws {SettingsError} naming the first malformed variable.
 */
export function readSettings(
  env: Env,
  cpus: number = navigator.hardwareConcurrency ?? 1,
): Settings {
  const port = wholeNumber(env, "PORT", 8000, 0, 65535);
  const hostname = env.HOSTNAME || "0.0.0.0";
  if (/[\s\p{Cc}/]/u.test(hostname)) {
    throw new SettingsError("HOSTNAME must be a host name or address");
  }

  const kvPath = env.KV_PATH === "" ? undefined : env.KV_PATH;
  const given = parseToken(env, "ADMIN_TOKEN");
  const evidenceExtractorUrl = env.EVIDENCE_EXTRACTOR_URL ?? "http://localhost:8081";
  const urlProblem = evidenceExtractorUrl === ""
    ? "must not be empty"
    : checkExtractorUrl(evidenceExtractorUrl);
  if (urlProblem) throw new SettingsError(`EVIDENCE_EXTRACTOR_URL ${urlProblem}`);

  const origins = parseList(env, "PASSKEY_ORIGINS", [`http://localhost:${port}`]);
  for (const origin of origins) {
    let ok = false;
    try {
      ok = new URL(origin).origin === origin;
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new SettingsError(
        "PASSKEY_ORIGINS must list origins such as https://example.com (scheme, host, optional port)",
      );
    }
  }

  return {
    port,
    hostname,
    kvPath,
    adminToken: given ?? randomToken(),
    adminTokenGenerated: given === undefined,
    allowUnsigned: parseBool(env, "ALLOW_UNSIGNED", false),
    evidenceExtractorUrl,
    passkeyRpIds: parseList(env, "PASSKEY_RP_IDS", ["localhost"]),
    passkeyOrigins: origins,
    passkeyRequireUv: parseBool(env, "PASSKEY_REQUIRE_UV", false),
    maxBodyBytes: wholeNumber(env, "MAX_BODY_BYTES", 32_768, 1_024, MAX_BODY_BYTES_LIMIT),
    bodyTimeoutMs: wholeNumber(env, "BODY_TIMEOUT_MS", 10_000, 100, 600_000),
    metricsToken: parseToken(env, "METRICS_TOKEN"),
    eventsToken: parseToken(env, "EVENTS_TOKEN"),
    eventsKeepaliveMs: wholeNumber(env, "EVENTS_KEEPALIVE_MS", 10_000, 1_000, 15_000),
    commitBatchMax: wholeNumber(env, "COMMIT_BATCH_MAX", 64, 1, 99),
    // Deno Deploy kills an instance 5 s after its SIGINT: stop within that.
    shutdownTimeoutMs: wholeNumber(
      env,
      "SHUTDOWN_TIMEOUT_MS",
      env.DENO_DEPLOY === "true" ? 4_000 : 10_000,
      100,
      600_000,
    ),
    // One worker from three CPUs on, none below: docs/decisions.md says why.
    verifyWorkers: wholeNumber(env, "VERIFY_WORKERS", cpus >= 3 ? 1 : 0, 0, 8),
    webhooksAllowHttp: parseBool(env, "WEBHOOKS_ALLOW_HTTP", false),
    webhooksAllowPrivate: parseBool(env, "WEBHOOKS_ALLOW_PRIVATE", false),
    denoDeploy: env.DENO_DEPLOY === "true",
    webhookTimeoutMs: wholeNumber(env, "WEBHOOK_TIMEOUT_MS", 15_000, 100, 120_000),
    webhookRetryScheduleMs: parseSchedule(
      env,
      "WEBHOOK_RETRY_SCHEDULE_MS",
      WEBHOOK_RETRY_SCHEDULE_MS,
    ),
    limits: readLimitSettings(env),
    log: readLogSettings(env),
  };
}

/**
 * The abuse-control settings of docs/interface.md §2 and §12, read from the
 * environment like the others in `settings.ts`: validated at boot, a malformed
 * one stopping the server with a one-line message naming the variable.
 * @module
 */

import { parseCidr, type ParsedCidr } from "./ip_address.ts";
import { SettingsError } from "./errors.ts";

/** The validated abuse-control settings. */
export interface LimitSettings {
  /** `RATE_LIMIT_PER_ADDRESS`: requests per second per client address; 0: no limit. */
  ratePerAddress: number;
  /** `RATE_LIMIT_PER_SIGNER`: stored submissions, approvals, rejections per second per key; 0: no limit. */
  ratePerSigner: number;
  /** `RATE_LIMIT_AUTH_FAILURES`: wrong or missing bearer tokens a minute per client address; 0: no limit. */
  authFailuresPerMinute: number;
  /** `TRUSTED_PROXIES`: reverse proxies whose `X-Forwarded-For` names the client; empty: none. */
  trustedProxies: ParsedCidr[];
  /** `MAX_PENDING_PER_SIGNER`: pending intents one key may have submitted under one governed document. */
  maxPendingPerSigner: number;
}

/**
 * The largest rate accepted. One process serves far fewer requests than this
 * per second, so a larger value would mean "no limit", which is spelled `0`.
 */
export const MAX_RATE_SETTING = 1_000_000;

/** The largest `MAX_PENDING_PER_SIGNER` accepted. */
export const MAX_PENDING_SETTING = 1_000_000;

/** Environment variables by name. */
export type Env = Record<string, string | undefined>;

/** A whole-number setting from `min` to `max`, `fallback` when unset or empty; else `SettingsError`. */
export function wholeNumber(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) {
    throw new SettingsError(`${name} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** At most this much of a refused entry is quoted back in the message. */
const QUOTED_ENTRY_MAX = 60;

function quoted(entry: string): string {
  const cut = entry.length > QUOTED_ENTRY_MAX ? `${entry.slice(0, QUOTED_ENTRY_MAX)}…` : entry;
  // JSON escapes control characters, so the message stays on one line.
  return JSON.stringify(cut);
}

/**
 * Reads `TRUSTED_PROXIES`: comma-separated IPv4 or IPv6 addresses or CIDR
 * ranges, spaces around each allowed; an empty entry, a zone id, a non-strict
 * form or bits set past a range's prefix is refused (see `parseCidr`).
 */
function trustedProxies(env: Env): ParsedCidr[] {
  const raw = env.TRUSTED_PROXIES;
  if (raw === undefined || raw === "") return [];
  return raw.split(",").map((item) => {
    const entry = item.replace(/^[ \t]+|[ \t]+$/g, "");
    if (entry === "") {
      throw new SettingsError(
        "TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges (an entry is empty)",
      );
    }
    try {
      return parseCidr(entry);
    } catch (error) {
      const detail = error instanceof SyntaxError
        ? error.message.replace(/^Cannot parse CIDR range: /, "")
        : "not an address";
      throw new SettingsError(
        `TRUSTED_PROXIES must list IP addresses or CIDR ranges: ${quoted(entry)}: ${detail}`,
      );
    }
  });
}

/**
 * Reads the abuse-control settings from an environment map; unset or empty
 * variables take the defaults of docs/interface.md §2, and a rate of `0` turns
 * that rate limit off.
 *
 * @param env variables, e.g. `Deno.env.toObject()`.
 * @returns validated settings with defaults applied.
 * @throws {SettingsError} naming the first malformed variable, in one line.
 *
 * @example
 * ```ts
 * const limits = readLimitSettings({ TRUSTED_PROXIES: "10.0.0.0/8, 2001:db8::/32" });
 * limits.ratePerAddress; // 50
 * ```
 */
export function readLimitSettings(env: Env): LimitSettings {
  return {
    ratePerAddress: wholeNumber(env, "RATE_LIMIT_PER_ADDRESS", 50, 0, MAX_RATE_SETTING),
    ratePerSigner: wholeNumber(env, "RATE_LIMIT_PER_SIGNER", 10, 0, MAX_RATE_SETTING),
    authFailuresPerMinute: wholeNumber(env, "RATE_LIMIT_AUTH_FAILURES", 20, 0, MAX_RATE_SETTING),
    trustedProxies: trustedProxies(env),
    // No "off" value: 0 would forbid every governed submission, which no one means.
    maxPendingPerSigner: wholeNumber(env, "MAX_PENDING_PER_SIGNER", 100, 1, MAX_PENDING_SETTING),
  };
}

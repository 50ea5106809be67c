/**
 * The rule that decides whether a webhook endpoint URL may be registered
 * (docs/interface.md §11), for `POST /webhooks` and `PATCH /webhooks/{id}`.
 * @module
 */

import { describeVerdict, judgeAddress } from "./addresses.ts";
import { isIpLiteral } from "../ip_address.ts";

/** Longest accepted webhook URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

// The characters the URL parser leaves as they are (its normal form) in a host name, a path and
// a query: no upper case in a host, nothing it would percent-encode, no "#", "@" or "\\".
const HOST = "(?:[a-z0-9!\"$&'()*+,.;=_`{}~-]+|\\[[0-9a-f:.]+\\])";
const PORT = "(?::(?:0|[1-9][0-9]*))?";
const PATH = "(?:/[a-zA-Z0-9!$%&'()*+,./:;=@\\[\\]^_|~-]*)?";
const QUERY = "(?:\\?[a-zA-Z0-9!$%&()*+,./:;=?@\\[\\]^_`{|}~-]*)?";

/**
 * What a JSON Schema can state of the rule of {@link checkWebhookUrl} in a
 * process with these settings, for the published OpenAPI document
 * (docs/decisions.md: "The URL's published schema"): every URL the rule
 * accepts matches it; a default port, a dot segment or an IPv4 address
 * written otherwise still matches and is refused for its form, which no
 * pattern states without lookarounds. A regular expression without flags,
 * as JSON Schema's `pattern` takes it.
 *
 * @param options `allowHttp`, as the process runs with it.
 * @returns the pattern.
 *
 * @example
 * ```ts
 * const https = new RegExp(webhookUrlPattern({ allowHttp: false }));
 * https.test("https://hooks.example/in?team=7"); // true
 * https.test("http://hooks.example/"); // false
 * https.test("https://hooks.example/#top"); // false
 * new RegExp(webhookUrlPattern({ allowHttp: true })).test("http://hooks.example/"); // true
 * ```
 */
export function webhookUrlPattern(options: Pick<WebhookUrlOptions, "allowHttp">): string {
  const scheme = options.allowHttp ? "https?" : "https";
  return `^${scheme}://${HOST}${PORT}${PATH}${QUERY}$`;
}

/** The settings {@link checkWebhookUrl} depends on (docs/interface.md §2). */
export interface WebhookUrlOptions {
  /** `WEBHOOKS_ALLOW_HTTP`: whether plain `http:` is accepted besides `https:`. */
  allowHttp: boolean;
  /**
   * `WEBHOOKS_ALLOW_PRIVATE`: whether a host given as an IP address that is
   * not globally reachable (loopback, private, link-local, ...) is accepted.
   */
  allowPrivate: boolean;
}

/**
 * Checks a webhook endpoint URL by the rule of docs/interface.md §11: the
 * normal form of §6 (the `/` of an empty path may be left out), a query
 * allowed. Unless `allowPrivate`, a host written as an IP address is judged
 * (`judgeAddress`) as the URL parser reads it, so `https://0x7f.1/` is
 * refused as loopback; a host name is resolved and judged at each attempt.
 *
 * @param url the candidate URL.
 * @param options the operator's settings.
 * @returns `null` when valid, else the reason, phrased to follow the field's
 *   name (`url must ...`) for a 400 `invalid_webhook_url`. It never repeats the
 *   input; it names the normal form (ASCII as the URL parser writes it) or the
 *   refused address as the parser reads it.
 *
 * @example
 * ```ts
 * const options = { allowHttp: false, allowPrivate: false };
 * checkWebhookUrl("https://hooks.example/in?team=7", options); // null
 * checkWebhookUrl("http://hooks.example/", options);
 * // "must be an absolute URL starting with https:// (plain http:// is not allowed)"
 * checkWebhookUrl("https://HOOKS.example/", options);
 * // "is not in its normal form; write it as https://hooks.example/"
 * checkWebhookUrl("https://[::ffff:10.0.0.1]/", options);
 * // "must not name an address that is not globally reachable:
 * //  [::ffff:a00:1] is Private-Use (10.0.0.1 embedded by IPv4-mapped Address)"
 * ```
 */
export function checkWebhookUrl(url: string, options: WebhookUrlOptions): string | null {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  }
  // White space, controls and backslashes are silently rewritten or dropped by URL parsers.
  if (/[\s\p{Cc}\\]/u.test(url)) {
    return "must not contain white space, control characters or backslashes";
  }
  const scheme = /^(https?):\/\//i.exec(url);
  if (!scheme || (scheme[1].toLowerCase() === "http" && !options.allowHttp)) {
    return options.allowHttp
      ? "must be an absolute URL starting with https:// or http://"
      : "must be an absolute URL starting with https:// (plain http:// is not allowed)";
  }
  if (url.includes("#")) return "must not have a fragment";
  const rest = url.slice(scheme[0].length);
  const authorityEnd = rest.search(/[/?]|$/);
  const authority = rest.slice(0, authorityEnd);
  if (authority.includes("@")) return "must not contain user info";
  // WHATWG parsing skips extra slashes ("https:///x" gets host "x"); RFC 3986 sees no host.
  if (authority === "") return "must have a host";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  if (parsed.hostname === "") return "must have a host";
  if (!options.allowPrivate && isIpLiteral(parsed.hostname)) {
    const verdict = judgeAddress(parsed.hostname);
    if (!verdict.globallyReachable) {
      return `must not name an address that is not globally reachable: ${parsed.hostname} is ${
        describeVerdict(verdict)
      }`;
    }
  }
  const normal = parsed.href;
  if (normal === url) return null;
  // The one difference the rule forgives: the "/" of an empty path, before any query.
  const at = scheme[0].length + authorityEnd;
  if (
    parsed.pathname === "/" && url[at] !== "/" && normal === `${url.slice(0, at)}/${url.slice(at)}`
  ) {
    return null;
  }
  return notNormal(normal);
}

/**
 * The reason for a URL that is not in its normal form. The serialization is
 * printable ASCII (hosts are ASCII after IDNA, everything else outside ASCII
 * is percent-encoded), but it is checked again before it goes into a
 * message, and it may be longer than the input it came from.
 */
function notNormal(normal: string): string {
  if (normal.length > MAX_WEBHOOK_URL_LENGTH) {
    return `is not in its normal form, which is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  }
  if (!/^[\x21-\x7e]+$/.test(normal)) return "is not in its normal form";
  return `is not in its normal form; write it as ${normal}`;
}

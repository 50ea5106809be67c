/**
 * The rule that decides whether an evidence extractor base URL is valid
 * (CONTRACT §6).
 * @module
 */

/** Longest accepted URL, in characters. */
export const MAX_EXTRACTOR_URL_LENGTH = 2048;

/**
 * Checks a non-empty evidence extractor URL: absolute, scheme http or https,
 * with a host, no user info, no query, no fragment, no white space, at most
 * 2048 characters.
 *
 * @param url the candidate URL (the empty string is handled by the caller: it selects the default).
 * @returns `null` when valid, else the reason, phrased to follow the setting's name.
 *
 * @example
 * ```ts
 * checkExtractorUrl("https://x.example/api"); // null
 * checkExtractorUrl("ftp://x.example"); // "must use http or https"
 * ```
 */
export function checkExtractorUrl(url: string): string | null {
  if (url.length > MAX_EXTRACTOR_URL_LENGTH) {
    return `must be at most ${MAX_EXTRACTOR_URL_LENGTH} characters`;
  }
  // White space, controls and backslashes are silently rewritten by URL parsers; refuse them.
  if (/[\s\p{Cc}\\]/u.test(url)) return "must not contain white space or control characters";
  const scheme = /^(https?):\/\//i.exec(url);
  if (!scheme) return "must be an absolute URL starting with http:// or https://";
  if (url.includes("?")) return "must not have a query";
  if (url.includes("#")) return "must not have a fragment";
  const authority = url.slice(scheme[0].length).split("/", 1)[0];
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
  return null;
}

/**
 * The rule that decides whether an evidence extractor base URL is valid
 * (docs/interface.md §6).
 * @module
 */

/** Longest accepted URL, in characters. */
export const MAX_EXTRACTOR_URL_LENGTH = 2048;

// Printable ASCII (0x21-0x7e) without "#" "/" "?" "@" "\\" (an authority), and without "#" "?"
// "\\" (a path).
const AUTHORITY = "[\\x21\\x22\\x24-\\x2e\\x30-\\x3e\\x41-\\x5b\\x5d-\\x7e]";
const PATH = "[\\x21\\x22\\x24-\\x3e\\x40-\\x5b\\x5d-\\x7e]";

/**
 * What a pattern can state of the rule of {@link checkExtractorUrl}: empty, or
 * `http://` or `https://`, an authority without user info, and a path, all
 * printable ASCII with no query, fragment or backslash. Every URL the rule
 * accepts matches (its normal form is ASCII, with the scheme in lower case);
 * the rest of the rule (a host, the normal form) is no pattern's business.
 * The text of a regular expression without flags, as JSON Schema's `pattern`
 * takes it (and as `RegExp.source` would not write it: it escapes `/`).
 */
export const EXTRACTOR_URL_PATTERN = `^(?:https?://${AUTHORITY}+(?:/${PATH}*)?)?$`;

/**
 * Checks a non-empty evidence extractor URL: absolute, scheme http or https,
 * with a host, no user info, no query, no fragment, no white space, at most
 * 2048 characters, and written in its normal form: the URL standard's
 * serialization (`new URL(url).href`) equals it, or equals it plus the `/`
 * of an empty path. Whoever reads the stored text then sees the host a URL
 * parser connects to: `http://0x7f.1/` (127.0.0.1), `http://EXAMPLE.com`,
 * `http://x.example:80/`, full-width letters or invisible characters in the
 * host are refused, and the reason names the normal form.
 *
 * @param url the candidate URL (the empty string is handled by the caller: it selects the default).
 * @returns `null` when valid, else the reason, phrased to follow the setting's name.
 *
 * @example
 * ```ts
 * checkExtractorUrl("https://x.example/api"); // null
 * checkExtractorUrl("ftp://x.example"); // "must be an absolute URL starting with http:// or https://"
 * checkExtractorUrl("http://0x7f.1/"); // "is not in its normal form; write it as http://127.0.0.1/"
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
  const normal = parsed.href;
  if (normal === url || (parsed.pathname === "/" && normal === `${url}/`)) return null;
  return notNormal(normal);
}

/**
 * The reason for a URL that is not in its normal form. The serialization is
 * printable ASCII (hosts are ASCII after IDNA, everything else outside ASCII
 * is percent-encoded), but it is checked again before it goes into a
 * message, and it may be longer than the input it came from.
 */
function notNormal(normal: string): string {
  if (normal.length > MAX_EXTRACTOR_URL_LENGTH) {
    return `is not in its normal form, which is longer than ${MAX_EXTRACTOR_URL_LENGTH} characters`;
  }
  if (!/^[\x21-\x7e]+$/.test(normal)) return "is not in its normal form";
  return `is not in its normal form; write it as ${normal}`;
}

/**
 * The client address a request counts against (docs/interface.md §12): the
 * peer the runtime reports, or, behind reverse proxies named in
 * `TRUSTED_PROXIES`, the address those proxies put in `X-Forwarded-For`. Only
 * the entries trusted proxies appended can be believed, so the header is read
 * from the right; junk where the client stands makes the last trusted hop
 * stand for it, so that no client chooses its bucket.
 * @module
 */

import {
  cidrContains,
  formatIpAddress,
  type IpAddress,
  maskIpAddress,
  type ParsedCidr,
  parseIpAddress,
} from "../ip_address.ts";

/** Who a request counts as, for the per-address rate limit. */
export interface ClientAddress {
  /**
   * The client's address in canonical text (an IPv4-mapped address as its IPv4
   * form); a peer that is no IP address is its transport and path (`unix:/run/app.sock`).
   */
  address: string;
  /** The key of the client's bucket: the IPv4 address, or an IPv6 address's /64 prefix. */
  bucketKey: string;
}

/** What {@link clientAddress} reads. */
export interface ClientAddressOptions {
  /** The peer of the connection, `Deno.ServeHandlerInfo.remoteAddr`. */
  remoteAddr: Deno.Addr;
  /** The request's headers; `X-Forwarded-For` is read only when the peer is trusted. */
  headers: Headers;
  /** The parsed `TRUSTED_PROXIES`; empty: the peer is always the client. */
  trustedProxies: readonly ParsedCidr[];
}

const PORT = /^[0-9]{1,5}$/;

function isPort(text: string): boolean {
  return PORT.test(text) && Number(text) <= 65535;
}

/**
 * The address an `X-Forwarded-For` entry names, with optional whitespace
 * around it and an optional port (`192.0.2.1:8080`, `[2001:db8::1]:443`,
 * `[2001:db8::1]`); `undefined` for anything else. Brackets hold IPv6 only.
 */
export function parseForwardedEntry(entry: string): IpAddress | undefined {
  // Optional whitespace of RFC 9110 §5.6.3: spaces and tabs only.
  const text = entry.replace(/^[ \t]+|[ \t]+$/g, "");
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close === -1) return undefined;
    const rest = text.slice(close + 1);
    if (rest !== "" && !(rest.startsWith(":") && isPort(rest.slice(1)))) return undefined;
    const inner = text.slice(1, close);
    // A bracketed dotted quad is not a form any proxy writes.
    if (!inner.includes(":")) return undefined;
    return parseIpAddress(inner);
  }
  const colon = text.indexOf(":");
  if (colon !== -1 && text.indexOf(":", colon + 1) === -1) {
    // One colon: an IPv4 address and a port (IPv6 has at least two).
    if (!isPort(text.slice(colon + 1))) return undefined;
    const host = text.slice(0, colon);
    return host.includes(":") ? undefined : parseIpAddress(host);
  }
  return parseIpAddress(text);
}

function isTrusted(address: IpAddress, trusted: readonly ParsedCidr[]): boolean {
  return trusted.some((range) => cidrContains(range, address));
}

function describe(address: IpAddress): ClientAddress {
  const text = formatIpAddress(address);
  if (address.version === 4) return { address: text, bucketKey: text };
  return { address: text, bucketKey: `${formatIpAddress(maskIpAddress(address, 64))}/64` };
}

/** The peer as an address; a zone id the runtime reports for a link-local peer is dropped. */
function peerAddress(remoteAddr: Deno.Addr): IpAddress | string {
  if (!("hostname" in remoteAddr)) {
    return "path" in remoteAddr
      ? `${remoteAddr.transport}:${remoteAddr.path}`
      : `${remoteAddr.transport}:${remoteAddr.cid}:${remoteAddr.port}`;
  }
  let host = remoteAddr.hostname;
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const zone = host.indexOf("%");
  if (zone !== -1) host = host.slice(0, zone);
  return parseIpAddress(host) ?? remoteAddr.hostname;
}

/**
 * The client address of a request and the key of its rate-limit bucket. Of
 * `X-Forwarded-For` (its lines joined), empty entries are ignored (RFC 9110
 * §5.6.1); never throws.
 *
 * @example
 * ```ts ignore
 * const { bucketKey } = clientAddress({
 *   remoteAddr: info.remoteAddr,
 *   headers: request.headers,
 *   trustedProxies: limits.trustedProxies,
 * });
 * const decision = addressLimiter.take(bucketKey);
 * ```
 */
export function clientAddress(options: ClientAddressOptions): ClientAddress {
  const peer = peerAddress(options.remoteAddr);
  if (typeof peer === "string") return { address: peer, bucketKey: peer };
  const trusted = options.trustedProxies;
  if (trusted.length === 0 || !isTrusted(peer, trusted)) return describe(peer);

  const header = options.headers.get("x-forwarded-for");
  let lastTrusted = peer;
  if (header === null) return describe(lastTrusted);
  // From the right without splitting: a long header costs only the hops read.
  let end = header.length;
  for (;;) {
    const comma = end === 0 ? -1 : header.lastIndexOf(",", end - 1);
    const entry = header.slice(comma + 1, end);
    if (!/^[ \t]*$/.test(entry)) {
      const address = parseForwardedEntry(entry);
      if (address === undefined) break;
      if (!isTrusted(address, trusted)) return describe(address);
      lastTrusted = address;
    }
    if (comma === -1) break;
    end = comma;
  }
  return describe(lastTrusted);
}

/**
 * IP addresses and CIDR ranges in their strict text forms: the client address
 * of a request and the `TRUSTED_PROXIES` setting (docs/interface.md §12) read them.
 *
 * Strict means the forms of RFC 4291 §2.2 and the dotted quad of four decimal
 * octets, nothing else: no octal (`010.0.0.1`), hex (`0x7f.0.0.1`), short
 * (`127.1`) or integer (`2130706433`) IPv4 forms, which some parsers accept and
 * others do not, so that one text never names two addresses; and no IPv6 zone
 * ids (`fe80::1%eth0`), which name an interface of the sender, not a host.
 * @module
 */

/** An IP address as its bytes in network order: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  readonly version: 4 | 6;
  readonly bytes: Uint8Array;
}

/** A CIDR range: the network address (no bits set past the prefix) and the prefix length. */
export interface ParsedCidr {
  readonly network: IpAddress;
  /** Leading bits that an address must share with `network`: 0–32 (IPv4) or 0–128 (IPv6). */
  readonly prefix: number;
}

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const IPV6_CHARS = /^[0-9a-fA-F:.]+$/;
/** "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", the longest strict IPv6 text. */
const MAX_IPV6_TEXT = 45;

function parseIpv4Bytes(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i];
    if (!DECIMAL_OCTET.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

/** The 16-bit groups of `pieces` (hex groups, the last one possibly a dotted quad). */
function groupsOf(pieces: string[], last: boolean): number[] | undefined {
  const groups: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i];
    if (last && i === pieces.length - 1 && piece.includes(".")) {
      const v4 = parseIpv4Bytes(piece);
      if (v4 === undefined) return undefined;
      groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
    } else {
      if (!HEX_GROUP.test(piece)) return undefined;
      groups.push(parseInt(piece, 16));
    }
  }
  return groups;
}

function parseIpv6Bytes(text: string): Uint8Array | undefined {
  if (text.length > MAX_IPV6_TEXT || !IPV6_CHARS.test(text)) return undefined;
  const gap = text.indexOf("::");
  let groups: number[] | undefined;
  if (gap === -1) {
    groups = groupsOf(text.split(":"), true);
    if (groups === undefined || groups.length !== 8) return undefined;
  } else {
    // One "::" at most; it stands for one or more zero groups (RFC 4291 §2.2).
    if (text.indexOf("::", gap + 1) !== -1) return undefined;
    const headText = text.slice(0, gap);
    const tailText = text.slice(gap + 2);
    const head = headText === "" ? [] : groupsOf(headText.split(":"), false);
    const tail = tailText === "" ? [] : groupsOf(tailText.split(":"), true);
    if (head === undefined || tail === undefined || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  }
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    bytes[2 * i] = groups[i] >> 8;
    bytes[2 * i + 1] = groups[i] & 0xff;
  }
  return bytes;
}

/** True for ::ffff:0:0/96, the IPv4-mapped addresses (RFC 4291 §2.5.5.2). */
function isIpv4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * Parses an IPv4 dotted quad or an IPv6 address in a strict text form. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, `::ffff:c000:201`) comes back
 * as the IPv4 address it maps: a dual-stack listener reports IPv4 peers so,
 * and they must count as the same client (docs/interface.md §12).
 *
 * @param text the address alone: no brackets, port, zone id or whitespace.
 * @returns the address, or `undefined` when `text` is not one.
 *
 * @example
 * ```ts
 * parseIpAddress("192.0.2.1"); // { version: 4, bytes: [192, 0, 2, 1] }
 * parseIpAddress("0x7f.0.0.1"); // undefined
 * ```
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (text.includes(":")) {
    const bytes = parseIpv6Bytes(text);
    if (bytes === undefined) return undefined;
    return isIpv4Mapped(bytes) ? { version: 4, bytes: bytes.slice(12) } : { version: 6, bytes };
  }
  const bytes = parseIpv4Bytes(text);
  return bytes === undefined ? undefined : { version: 4, bytes };
}

/**
 * The canonical text of an address: the dotted quad, or the IPv6 form of
 * RFC 5952 §4 (lower case, no leading zeros, the longest run of two or more
 * zero groups, the first of equals, written `::`).
 *
 * @example
 * ```ts
 * formatIpAddress(parseIpAddress("2001:DB8:0:0:1:0:0:1")!); // "2001:db8::1:0:0:1"
 * ```
 */
export function formatIpAddress(address: IpAddress): string {
  const b = address.bytes;
  if (address.version === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  let bestStart = -1;
  let bestLength = 1; // a single zero group is not compressed (RFC 5952 §4.2.2)
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(":");
  if (bestStart === -1) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** A copy of `address` with every bit past the first `prefix` cleared. */
export function maskIpAddress(address: IpAddress, prefix: number): IpAddress {
  const bytes = address.bytes.slice();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.min(8, Math.max(0, prefix - 8 * i));
    bytes[i] &= (0xff00 >> keep) & 0xff;
  }
  return { version: address.version, bytes };
}

/**
 * Parses an address or a CIDR range (`192.0.2.0/24`, `2001:db8::/32`); an
 * address alone is the range of that one address. A range written in the
 * IPv4-mapped form with a prefix of 96 or more is the IPv4 range it maps, as
 * mapped addresses count as IPv4 ones; an IPv6 range matches IPv6 addresses
 * only, so `::/0` does not take in IPv4 clients.
 *
 * @throws {SyntaxError} when `text` is no address, the prefix is not a decimal
 *   number within the family's length, or bits are set past the prefix
 *   (`10.0.0.1/8` is refused rather than read as `10.0.0.0/8`: it is more
 *   likely a slip for `/32`).
 */
export function parseCidr(text: string): ParsedCidr {
  const slash = text.indexOf("/");
  const addressText = slash === -1 ? text : text.slice(0, slash);
  if (addressText.includes("%")) {
    throw new SyntaxError(`Cannot parse CIDR range: zone ids are not accepted`);
  }
  const bytes = addressText.includes(":")
    ? parseIpv6Bytes(addressText)
    : parseIpv4Bytes(addressText);
  if (bytes === undefined) {
    throw new SyntaxError(`Cannot parse CIDR range: not an IPv4 or IPv6 address`);
  }
  const bits = bytes.length * 8;
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = text.slice(slash + 1);
    if (!DECIMAL_OCTET.test(prefixText) || Number(prefixText) > bits) {
      throw new SyntaxError(`Cannot parse CIDR range: the prefix length must be 0 to ${bits}`);
    }
    prefix = Number(prefixText);
  }
  let network: IpAddress = { version: bits === 32 ? 4 : 6, bytes };
  const masked = maskIpAddress(network, prefix);
  if (masked.bytes.some((byte, i) => byte !== bytes[i])) {
    throw new SyntaxError(`Cannot parse CIDR range: bits are set past the /${prefix} prefix`);
  }
  if (network.version === 6 && prefix >= 96 && isIpv4Mapped(bytes)) {
    network = { version: 4, bytes: bytes.slice(12) };
    prefix -= 96;
  }
  return { network, prefix };
}

/** Whether `address` lies in `range` (an IPv4 address never lies in an IPv6 range). */
export function cidrContains(range: ParsedCidr, address: IpAddress): boolean {
  if (range.network.version !== address.version) return false;
  const net = range.network.bytes;
  const bytes = address.bytes;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff00 >> bits) & 0xff;
    if ((bytes[i] & mask) !== net[i]) return false;
  }
  return true;
}

/**
 * Parses an IP address literal as it is written, for judging where a
 * connection would go (docs/interface.md §11's webhook URLs and DNS answers): the same
 * strict forms as {@link parseIpAddress}, but an IPv4-mapped IPv6 address stays
 * the IPv6 address it is (the special-purpose registries list the mapped block
 * apart), and an IPv6 address may be written in a URL host's brackets
 * (`[::1]`; an IPv4 address may not).
 *
 * @param text the literal, as a URL's host or a resolver's answer gives it.
 * @returns the address, or `undefined` when `text` is not one.
 *
 * @example
 * ```ts
 * parseIpLiteral("[::ffff:127.0.0.1]")?.version; // 6
 * parseIpAddress("::ffff:127.0.0.1")?.version; // 4
 * parseIpLiteral("127.1"); // undefined
 * ```
 */
export function parseIpLiteral(text: string): IpAddress | undefined {
  if (text.startsWith("[") && text.endsWith("]")) {
    const inner = text.slice(1, -1);
    if (!inner.includes(":")) return undefined;
    text = inner;
  }
  if (!text.includes(":")) return parseIpAddress(text);
  const bytes = parseIpv6Bytes(text);
  return bytes === undefined ? undefined : { version: 6, bytes };
}

/**
 * Whether `text` is an IP address literal {@link parseIpLiteral} reads.
 *
 * @example
 * ```ts
 * isIpLiteral("[2001:db8::1]"); // true
 * isIpLiteral("hooks.example"); // false
 * ```
 */
export function isIpLiteral(text: string): boolean {
  return parseIpLiteral(text) !== undefined;
}

/**
 * Strict parsing of IP address literals: dotted-decimal IPv4 (RFC 791 as
 * RFC 3986's `IPv4address` writes it) and IPv6 in the text forms of
 * RFC 4291 §2.2 (`::` compression, a trailing dotted quad), optionally in
 * the brackets of a URL host. Anything else is refused rather than guessed:
 * a parser that accepts `0x7f.1` or `010.0.0.1` and one that does not would
 * disagree about where a connection goes.
 * @module
 */

/** An IP address: its version and its bytes in network order (4 or 16 of them). */
export interface IpAddress {
  version: 4 | 6;
  bytes: Uint8Array;
}

const DECIMAL_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/**
 * Parses an IPv4 or IPv6 address literal.
 *
 * IPv4: exactly four decimal numbers 0–255 without leading zeros. IPv6: up
 * to eight groups of one to four hex digits, at most one `::`, an optional
 * dotted quad in the last 32 bits, optionally inside `[` `]`. A zone id
 * (`fe80::1%eth0`) is refused: it names an interface of this machine, which
 * no webhook URL or DNS answer has any business naming.
 *
 * @param text the literal.
 * @returns the address.
 * @throws {SyntaxError} when `text` is not such a literal.
 *
 * @example
 * ```ts
 * parseIpAddress("192.0.2.1"); // { version: 4, bytes: [192, 0, 2, 1] }
 * parseIpAddress("[::ffff:127.0.0.1]").version; // 6
 * ```
 *
 * `parseIpAddress("0x7f.1")` throws a `SyntaxError`.
 */
export function parseIpAddress(text: string): IpAddress {
  const v4 = parseIpv4(text);
  if (v4) return { version: 4, bytes: v4 };
  const inner = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (inner.includes("%")) {
    throw new SyntaxError(`Cannot parse IP address: zone ids are not accepted`);
  }
  const v6 = parseIpv6(inner);
  if (v6) return { version: 6, bytes: v6 };
  throw new SyntaxError(`Cannot parse IP address: not an IPv4 or IPv6 literal`);
}

/**
 * Whether `text` is an IP address literal {@link parseIpAddress} accepts.
 *
 * @example
 * ```ts
 * isIpAddress("::1"); // true
 * isIpAddress("example.com"); // false
 * ```
 */
export function isIpAddress(text: string): boolean {
  try {
    parseIpAddress(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The dotted-decimal text of four bytes.
 *
 * @throws {RangeError} when `bytes` does not hold exactly 4 bytes.
 */
export function formatIpv4(bytes: Uint8Array): string {
  if (bytes.length !== 4) throw new RangeError("an IPv4 address is 4 bytes");
  return Array.from(bytes).join(".");
}

/** Four bytes from a dotted quad, or null. */
function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (const [i, part] of parts.entries()) {
    if (!DECIMAL_OCTET.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

/** Sixteen bytes from an IPv6 text form (no brackets, no zone), or null. */
function parseIpv6(text: string): Uint8Array | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head = groupsOf(halves[0], !compressed);
  const tail = compressed ? groupsOf(halves[1], true) : [];
  if (!head || !tail) return null;
  const count = head.length + tail.length;
  // "::" stands for at least one group of zeros (RFC 4291 §2.2, form 2).
  if (compressed ? count > 7 : count !== 8) return null;
  const words = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (const [i, word] of words.entries()) {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  }
  return bytes;
}

/**
 * The 16-bit groups of one side of `::`; a dotted quad is allowed only as the
 * last element of the whole address (`last`), where it stands for two groups.
 */
function groupsOf(side: string, last: boolean): number[] | null {
  if (side === "") return [];
  const parts = side.split(":");
  const words: number[] = [];
  for (const [i, part] of parts.entries()) {
    if (HEX_GROUP.test(part)) {
      words.push(parseInt(part, 16));
      continue;
    }
    const quad = last && i === parts.length - 1 ? parseIpv4(part) : null;
    if (!quad) return null;
    words.push((quad[0] << 8) | quad[1], (quad[2] << 8) | quad[3]);
  }
  return words;
}

/**
 * Whether an IP address is globally reachable, as the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890, RFC 8190) record it in their
 * "Globally Reachable" column, plus the blocks the general address-space
 * registries set apart (multicast, and outside 2000::/3 what is "Reserved by
 * IETF"), so that webhooks are never sent into the service's own networks
 * (docs/interface.md §11). The most specific entry decides. An IPv6 address
 * that carries an IPv4 address (IPv4-mapped, IPv4-compatible, 64:ff9b::/96,
 * 6to4, Teredo) is judged by that address; 64:ff9b:1::/48 is refused whole,
 * as where its IPv4 bits sit only the local network knows.
 *
 * Tables as of the registries updated 2025 (IPv6: Dummy IPv6 Prefix, RFC 9780).
 * @module
 */

import { formatIpAddress, type IpAddress, parseIpLiteral } from "../ip_address.ts";

/** What {@link judgeAddress} found. */
export interface AddressVerdict {
  /**
   * Whether a datagram to the address may leave its administrative domain:
   * the registry's "Globally Reachable" column.
   */
  globallyReachable: boolean;
  /**
   * The name of the registry entry that decided, as the registry writes it
   * (`"Loopback"`, `"Private-Use"`, `"AS112-v4"`); `null` when no entry
   * covers the address (ordinary unicast). For an IPv6 address judged by the
   * IPv4 address it embeds, the IPv4 address's entry.
   */
  entry: string | null;
  /** For an IPv6 address judged by an embedded IPv4 address: how it embeds it, and that address. */
  embedded?: { via: string; ipv4: string };
}

/** How an IPv6 block that carries an IPv4 address gives it up. */
type Embedding = "last32" | "6to4" | "teredo";

interface Entry {
  prefix: string;
  name: string;
  global: boolean | Embedding;
}

/** The IANA IPv4 Special-Purpose Address Registry, plus multicast from the IPv4 Address Space. */
const IPV4_ENTRIES: Entry[] = [
  { prefix: "0.0.0.0/8", name: '"This network"', global: false },
  { prefix: "0.0.0.0/32", name: '"This host on this network"', global: false },
  { prefix: "10.0.0.0/8", name: "Private-Use", global: false },
  { prefix: "100.64.0.0/10", name: "Shared Address Space", global: false },
  { prefix: "127.0.0.0/8", name: "Loopback", global: false },
  { prefix: "169.254.0.0/16", name: "Link Local", global: false },
  { prefix: "172.16.0.0/12", name: "Private-Use", global: false },
  // "Not useable unless by virtue of a more specific reservation" (footnote 2).
  { prefix: "192.0.0.0/24", name: "IETF Protocol Assignments", global: false },
  { prefix: "192.0.0.0/29", name: "IPv4 Service Continuity Prefix", global: false },
  { prefix: "192.0.0.8/32", name: "IPv4 dummy address", global: false },
  { prefix: "192.0.0.9/32", name: "Port Control Protocol Anycast", global: true },
  { prefix: "192.0.0.10/32", name: "Traversal Using Relays around NAT Anycast", global: true },
  { prefix: "192.0.0.170/32", name: "NAT64/DNS64 Discovery", global: false },
  { prefix: "192.0.0.171/32", name: "NAT64/DNS64 Discovery", global: false },
  { prefix: "192.0.2.0/24", name: "Documentation (TEST-NET-1)", global: false },
  { prefix: "192.31.196.0/24", name: "AS112-v4", global: true },
  { prefix: "192.52.193.0/24", name: "AMT", global: true },
  // Terminated in 2015 (RFC 7526) with its columns left empty: no longer a
  // destination anyone should reach, so it is refused.
  { prefix: "192.88.99.0/24", name: "Deprecated (6to4 Relay Anycast)", global: false },
  { prefix: "192.88.99.2/32", name: "6a44-relay anycast address", global: false },
  { prefix: "192.168.0.0/16", name: "Private-Use", global: false },
  { prefix: "192.175.48.0/24", name: "Direct Delegation AS112 Service", global: true },
  { prefix: "198.18.0.0/15", name: "Benchmarking", global: false },
  { prefix: "198.51.100.0/24", name: "Documentation (TEST-NET-2)", global: false },
  { prefix: "203.0.113.0/24", name: "Documentation (TEST-NET-3)", global: false },
  // IPv4 Address Space Registry (RFC 5771): no TCP connection goes to a group.
  { prefix: "224.0.0.0/4", name: "Multicast", global: false },
  { prefix: "240.0.0.0/4", name: "Reserved", global: false },
  { prefix: "255.255.255.255/32", name: "Limited Broadcast", global: false },
];

/** The IANA IPv6 Special-Purpose Address Registry, plus what the IPv6 Address Space sets apart. */
const IPV6_ENTRIES: Entry[] = [
  // IPv6 Address Space Registry: outside 2000::/3 all is reserved or special.
  { prefix: "::/3", name: "Reserved by IETF", global: false },
  { prefix: "4000::/2", name: "Reserved by IETF", global: false },
  { prefix: "8000::/1", name: "Reserved by IETF", global: false },
  { prefix: "::/128", name: "Unspecified Address", global: false },
  { prefix: "::1/128", name: "Loopback Address", global: false },
  // RFC 4291 §2.5.5.1 (deprecated); the IPv4 address is where a stack would send it.
  { prefix: "::/96", name: "IPv4-compatible Address", global: "last32" },
  { prefix: "::ffff:0:0/96", name: "IPv4-mapped Address", global: "last32" },
  { prefix: "64:ff9b::/96", name: "IPv4-IPv6 Translat.", global: "last32" },
  { prefix: "64:ff9b:1::/48", name: "IPv4-IPv6 Translat. (local use)", global: false },
  { prefix: "100::/64", name: "Discard-Only Address Block", global: false },
  { prefix: "100:0:0:1::/64", name: "Dummy IPv6 Prefix", global: false },
  // "Unless allowed by a more specific allocation" (footnote 1).
  { prefix: "2001::/23", name: "IETF Protocol Assignments", global: false },
  { prefix: "2001::/32", name: "TEREDO", global: "teredo" },
  { prefix: "2001:1::1/128", name: "Port Control Protocol Anycast", global: true },
  { prefix: "2001:1::2/128", name: "Traversal Using Relays around NAT Anycast", global: true },
  { prefix: "2001:1::3/128", name: "DNS-SD Service Registration Protocol Anycast", global: true },
  { prefix: "2001:2::/48", name: "Benchmarking", global: false },
  { prefix: "2001:3::/32", name: "AMT", global: true },
  { prefix: "2001:4:112::/48", name: "AS112-v6", global: true },
  // Terminated in 2014: falls back to 2001::/23, not globally reachable.
  { prefix: "2001:10::/28", name: "Deprecated (previously ORCHID)", global: false },
  { prefix: "2001:20::/28", name: "ORCHIDv2", global: true },
  {
    prefix: "2001:30::/28",
    name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
    global: true,
  },
  { prefix: "2001:db8::/32", name: "Documentation", global: false },
  { prefix: "2002::/16", name: "6to4", global: "6to4" },
  { prefix: "2620:4f:8000::/48", name: "Direct Delegation AS112 Service", global: true },
  { prefix: "3fff::/20", name: "Documentation", global: false },
  { prefix: "5f00::/16", name: "Segment Routing (SRv6) SIDs", global: false },
  { prefix: "fc00::/7", name: "Unique-Local", global: false },
  { prefix: "fe80::/10", name: "Link-Local Unicast", global: false },
  { prefix: "fec0::/10", name: "Site-Local (deprecated)", global: false },
  { prefix: "ff00::/8", name: "Multicast", global: false },
];

interface Block {
  bytes: Uint8Array;
  length: number;
  name: string;
  global: boolean | Embedding;
}

/** Blocks, longest prefix first, so the first one that matches is the most specific. */
function compile(entries: Entry[], version: 4 | 6): Block[] {
  return entries.map(({ prefix, name, global }) => {
    const [address, length] = prefix.split("/");
    const parsed = parseIpLiteral(address);
    if (parsed?.version !== version) throw new Error(`table entry ${prefix} is not IPv${version}`);
    return { bytes: parsed.bytes, length: Number(length), name, global };
  }).sort((a, b) => b.length - a.length);
}

const IPV4_BLOCKS = compile(IPV4_ENTRIES, 4);
const IPV6_BLOCKS = compile(IPV6_ENTRIES, 6);

/** Whether the first `length` bits of `bytes` equal those of `block`. */
function within(bytes: Uint8Array, block: Block): boolean {
  const whole = block.length >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== block.bytes[i]) return false;
  const rest = block.length & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole] & mask) === (block.bytes[whole] & mask);
}

function lookup(bytes: Uint8Array, blocks: Block[]): Block | undefined {
  return blocks.find((block) => within(bytes, block));
}

/**
 * Judges an IP address by the special-purpose registries.
 *
 * @param address an IPv4 or IPv6 literal, as `parseIpLiteral` reads it
 *   (brackets allowed, zone ids refused; an IPv4-mapped address stays IPv6),
 *   or an already parsed address.
 * @returns the verdict and the registry entry that gave it.
 * @throws {SyntaxError} when `address` is not an IP literal.
 *
 * @example
 * ```ts
 * judgeAddress("10.1.2.3"); // { globallyReachable: false, entry: "Private-Use" }
 * judgeAddress("::ffff:127.0.0.1");
 * // { globallyReachable: false, entry: "Loopback",
 * //   embedded: { via: "IPv4-mapped Address", ipv4: "127.0.0.1" } }
 * judgeAddress("192.0.0.9"); // { globallyReachable: true, entry: "Port Control Protocol Anycast" }
 * ```
 */
export function judgeAddress(address: string | IpAddress): AddressVerdict {
  const ip = typeof address === "string" ? parseIpLiteral(address) : address;
  if (ip === undefined) throw new SyntaxError("Cannot judge address: not an IPv4 or IPv6 literal");
  if (ip.version === 4) return judgeIpv4(ip.bytes);
  const block = lookup(ip.bytes, IPV6_BLOCKS);
  if (!block) return { globallyReachable: true, entry: null };
  if (typeof block.global === "boolean") {
    return { globallyReachable: block.global, entry: block.name };
  }
  const ipv4 = embeddedIpv4(ip.bytes, block.global);
  return {
    ...judgeIpv4(ipv4),
    embedded: { via: block.name, ipv4: formatIpAddress({ version: 4, bytes: ipv4 }) },
  };
}

/**
 * Whether an IP address is globally reachable (see {@link judgeAddress}).
 *
 * @throws {SyntaxError} when `address` is not an IP literal.
 *
 * @example
 * ```ts
 * isGloballyReachable("8.8.8.8"); // true
 * isGloballyReachable("[::1]"); // false
 * isGloballyReachable("2002:c0a8:101::1"); // false: 6to4 of 192.168.1.1
 * ```
 */
export function isGloballyReachable(address: string): boolean {
  return judgeAddress(address).globallyReachable;
}

/**
 * The registry entry of a verdict as a short phrase for messages:
 * `"Loopback"`, `"Private-Use (10.0.0.1 embedded by IPv4-mapped Address)"`.
 */
export function describeVerdict(verdict: AddressVerdict): string {
  const entry = verdict.entry ?? "ordinary unicast";
  const { embedded } = verdict;
  return embedded ? `${entry} (${embedded.ipv4} embedded by ${embedded.via})` : entry;
}

function judgeIpv4(bytes: Uint8Array): AddressVerdict {
  const block = lookup(bytes, IPV4_BLOCKS);
  if (!block) return { globallyReachable: true, entry: null };
  return { globallyReachable: block.global === true, entry: block.name };
}

/** The IPv4 address an IPv6 address carries, by its block's rule. */
function embeddedIpv4(bytes: Uint8Array, how: Embedding): Uint8Array {
  switch (how) {
    case "last32":
      return bytes.slice(12, 16);
    case "6to4":
      // RFC 3056 §2: 2002:V4ADDR::/48.
      return bytes.slice(2, 6);
    case "teredo":
      // RFC 4380 §4: the last 32 bits are the client's public address, each bit inverted.
      return bytes.slice(12, 16).map((b) => b ^ 0xff);
  }
}

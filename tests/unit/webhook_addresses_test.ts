/**
 * Unit tests of the IP literals webhook URLs and DNS answers are read as
 * (`parseIpLiteral` of the shared `src/ip_address.ts`) and of the
 * special-purpose registry verdicts they are judged by (docs/interface.md §11).
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  describeVerdict,
  isGloballyReachable,
  judgeAddress,
} from "../../src/webhooks/addresses.ts";
import { isIpLiteral, parseIpAddress, parseIpLiteral } from "../../src/ip_address.ts";

/** Literal → its 16-bit groups (IPv6) or octets (IPv4), as parsed. */
const PARSED: [string, number[]][] = [
  ["0.0.0.0", [0, 0, 0, 0]],
  ["255.255.255.255", [255, 255, 255, 255]],
  ["192.0.2.1", [192, 0, 2, 1]],
  ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
  ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
  ["[::1]", [0, 0, 0, 0, 0, 0, 0, 1]],
  ["1::", [1, 0, 0, 0, 0, 0, 0, 0]],
  ["1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]],
  ["::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]],
  ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
  ["2001:DB8::A:b", [0x2001, 0xdb8, 0, 0, 0, 0, 0xa, 0xb]],
  ["2001:0db8:0000:0000:0000:0000:0000:0001", [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]],
  ["::ffff:127.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
  ["::ffff:7f00:1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
  ["0:0:0:0:0:ffff:a00:1", [0, 0, 0, 0, 0, 0xffff, 0xa00, 1]],
  ["0:0:0:0:0:ffff:10.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0xa00, 1]],
  ["::1.2.3.4", [0, 0, 0, 0, 0, 0, 0x102, 0x304]],
  ["1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
  ["[64:ff9b::a9fe:a9fe]", [0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe]],
];

const NOT_LITERALS = [
  "",
  "example.com",
  "1.2.3",
  "1.2.3.4.5",
  "256.0.0.1",
  "01.2.3.4",
  "010.0.0.1",
  "0x7f.0.0.1",
  "127.1",
  "2130706433",
  " 1.2.3.4",
  "1.2.3.4 ",
  "1.2.3.-4",
  "１.2.3.4",
  ":",
  ":::",
  "1:::2",
  "::1::",
  "1::2::3",
  ":1::2",
  "1::2:",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:7",
  "1:2:3:4:5:6:7:8::",
  "::1:2:3:4:5:6:7:8",
  "12345::",
  "g::1",
  "1.2.3.4::",
  "::1.2.3.4:5",
  "::ffff:1.2.3",
  "::ffff:01.2.3.4",
  "::ffff:256.0.0.1",
  "1:2:3:4:5:6:7:1.2.3.4",
  "[::1",
  "::1]",
  "[[::1]]",
  "[1.2.3.4]",
  "fe80::1%eth0",
  "[fe80::1%25eth0]",
  "fe80::1%1",
];

Deno.test("parseIpLiteral reads IPv4 and IPv6 literals in every text form RFC 4291 allows", () => {
  for (const [text, expected] of PARSED) {
    const ip = parseIpLiteral(text);
    assert.ok(ip, text);
    const got = ip.version === 4
      ? Array.from(ip.bytes)
      : Array.from({ length: 8 }, (_, i) => (ip.bytes[2 * i] << 8) | ip.bytes[2 * i + 1]);
    assert.deepEqual(got, expected, text);
    assert.equal(ip.version, expected.length === 4 ? 4 : 6, text);
  }
});

Deno.test("parseIpLiteral refuses everything else, zone ids and lenient IPv4 forms included", () => {
  for (const text of NOT_LITERALS) {
    assert.equal(parseIpLiteral(text), undefined, JSON.stringify(text));
    assert.equal(isIpLiteral(text), false, JSON.stringify(text));
  }
});

Deno.test("parseIpLiteral keeps an IPv4-mapped address IPv6, where parseIpAddress counts it as IPv4", () => {
  for (const text of ["::ffff:127.0.0.1", "[::ffff:7f00:1]", "0:0:0:0:0:ffff:127.0.0.1"]) {
    assert.equal(parseIpLiteral(text)?.version, 6, text);
    assert.equal(judgeAddress(text).entry, "Loopback", text);
    assert.equal(judgeAddress(text).embedded?.via, "IPv4-mapped Address", text);
  }
  assert.equal(parseIpAddress("::ffff:127.0.0.1")?.version, 4);
});

/** Address → the registry entry that refuses it. */
const NOT_GLOBAL: [string, string][] = [
  ["0.0.0.0", '"This host on this network"'],
  ["0.1.2.3", '"This network"'],
  ["10.0.0.1", "Private-Use"],
  ["10.255.255.255", "Private-Use"],
  ["100.64.0.1", "Shared Address Space"],
  ["100.127.255.254", "Shared Address Space"],
  ["127.0.0.1", "Loopback"],
  ["127.255.255.255", "Loopback"],
  ["169.254.169.254", "Link Local"],
  ["172.16.0.1", "Private-Use"],
  ["172.31.255.255", "Private-Use"],
  ["192.168.1.1", "Private-Use"],
  ["192.0.0.1", "IPv4 Service Continuity Prefix"],
  ["192.0.0.8", "IPv4 dummy address"],
  ["192.0.0.11", "IETF Protocol Assignments"],
  ["192.0.0.170", "NAT64/DNS64 Discovery"],
  ["192.0.0.171", "NAT64/DNS64 Discovery"],
  ["192.0.0.255", "IETF Protocol Assignments"],
  ["192.0.2.1", "Documentation (TEST-NET-1)"],
  ["198.51.100.7", "Documentation (TEST-NET-2)"],
  ["203.0.113.200", "Documentation (TEST-NET-3)"],
  ["198.18.0.1", "Benchmarking"],
  ["198.19.255.255", "Benchmarking"],
  ["192.88.99.1", "Deprecated (6to4 Relay Anycast)"],
  ["192.88.99.2", "6a44-relay anycast address"],
  ["224.0.0.1", "Multicast"],
  ["239.255.255.250", "Multicast"],
  ["240.0.0.1", "Reserved"],
  ["255.255.255.254", "Reserved"],
  ["255.255.255.255", "Limited Broadcast"],
  ["::", "Unspecified Address"],
  ["::1", "Loopback Address"],
  ["[::1]", "Loopback Address"],
  ["0:0:0:0:0:0:0:1", "Loopback Address"],
  ["64:ff9b:1::808:808", "IPv4-IPv6 Translat. (local use)"],
  ["100::1", "Discard-Only Address Block"],
  ["100:0:0:1::1", "Dummy IPv6 Prefix"],
  ["2001:2::1", "Benchmarking"],
  ["2001:5::1", "IETF Protocol Assignments"],
  ["2001:1::4", "IETF Protocol Assignments"],
  ["2001:10::1", "Deprecated (previously ORCHID)"],
  ["2001:db8::1", "Documentation"],
  ["3fff::1", "Documentation"],
  ["3fff:fff::1", "Documentation"],
  ["5f00::1", "Segment Routing (SRv6) SIDs"],
  ["fc00::1", "Unique-Local"],
  ["fd12:3456:789a::1", "Unique-Local"],
  ["fe80::1", "Link-Local Unicast"],
  ["febf:ffff::1", "Link-Local Unicast"],
  ["fec0::1", "Site-Local (deprecated)"],
  ["ff02::1", "Multicast"],
  ["ff0e::101", "Multicast"],
  ["::ffff:0:0:0", "Reserved by IETF"],
  ["1::1", "Reserved by IETF"],
  ["4000::1", "Reserved by IETF"],
  ["e000::1", "Reserved by IETF"],
];

/** IPv6 address → the IPv4 address it embeds, and that address's entry. */
const EMBEDDED: [string, string, string, string][] = [
  ["::ffff:127.0.0.1", "IPv4-mapped Address", "127.0.0.1", "Loopback"],
  ["::ffff:7f00:1", "IPv4-mapped Address", "127.0.0.1", "Loopback"],
  ["[::ffff:7f00:1]", "IPv4-mapped Address", "127.0.0.1", "Loopback"],
  ["0:0:0:0:0:ffff:a00:1", "IPv4-mapped Address", "10.0.0.1", "Private-Use"],
  ["::ffff:169.254.169.254", "IPv4-mapped Address", "169.254.169.254", "Link Local"],
  ["::ffff:0.0.0.0", "IPv4-mapped Address", "0.0.0.0", '"This host on this network"'],
  ["::127.0.0.1", "IPv4-compatible Address", "127.0.0.1", "Loopback"],
  ["::c0a8:1", "IPv4-compatible Address", "192.168.0.1", "Private-Use"],
  ["::2", "IPv4-compatible Address", "0.0.0.2", '"This network"'],
  ["64:ff9b::a9fe:a9fe", "IPv4-IPv6 Translat.", "169.254.169.254", "Link Local"],
  ["64:ff9b::10.0.0.1", "IPv4-IPv6 Translat.", "10.0.0.1", "Private-Use"],
  ["64:ff9b::7f00:1", "IPv4-IPv6 Translat.", "127.0.0.1", "Loopback"],
  ["2002:c0a8:0101::1", "6to4", "192.168.1.1", "Private-Use"],
  ["2002:7f00:1::", "6to4", "127.0.0.1", "Loopback"],
  ["2002:a9fe:a9fe:1:2:3:4:5", "6to4", "169.254.169.254", "Link Local"],
  // Teredo: client 10.0.0.1 is stored inverted as f5ff:fffe.
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "TEREDO", "10.0.0.1", "Private-Use"],
  ["2001::ffff:ffff:80ff:fffe", "TEREDO", "127.0.0.1", "Loopback"],
];

/** Addresses that are globally reachable, with the entry that says so (null: none covers them). */
const GLOBAL: [string, string | null][] = [
  ["8.8.8.8", null],
  ["1.1.1.1", null],
  ["93.184.216.34", null],
  ["9.255.255.255", null],
  ["11.0.0.0", null],
  ["100.63.255.255", null],
  ["100.128.0.0", null],
  ["126.255.255.255", null],
  ["128.0.0.0", null],
  ["169.253.255.255", null],
  ["169.255.0.0", null],
  ["172.15.255.255", null],
  ["172.32.0.0", null],
  ["192.0.1.255", null],
  ["192.0.3.0", null],
  ["192.167.255.255", null],
  ["192.169.0.0", null],
  ["198.17.255.255", null],
  ["198.20.0.0", null],
  ["223.255.255.255", null],
  ["192.0.0.9", "Port Control Protocol Anycast"],
  ["192.0.0.10", "Traversal Using Relays around NAT Anycast"],
  ["192.31.196.1", "AS112-v4"],
  ["192.52.193.1", "AMT"],
  ["192.175.48.1", "Direct Delegation AS112 Service"],
  ["2606:4700:4700::1111", null],
  ["2001:4860:4860::8888", null],
  ["2000::1", null],
  ["3ffe::1", null],
  ["3fff:1000::1", null],
  ["2001:200::1", null],
  ["2001:1::1", "Port Control Protocol Anycast"],
  ["2001:1::2", "Traversal Using Relays around NAT Anycast"],
  ["2001:1::3", "DNS-SD Service Registration Protocol Anycast"],
  ["2001:3::1", "AMT"],
  ["2001:4:112::1", "AS112-v6"],
  ["2001:20::1", "ORCHIDv2"],
  ["2001:30::1", "Drone Remote ID Protocol Entity Tags (DETs) Prefix"],
  ["2620:4f:8000::1", "Direct Delegation AS112 Service"],
  ["[2620:4f:8000::53]", "Direct Delegation AS112 Service"],
];

Deno.test("judgeAddress refuses what the special-purpose registries list as not globally reachable", () => {
  for (const [address, entry] of NOT_GLOBAL) {
    const verdict = judgeAddress(address);
    assert.deepEqual(verdict, { globallyReachable: false, entry }, address);
    assert.equal(isGloballyReachable(address), false, address);
  }
});

Deno.test("judgeAddress judges an IPv6 address that embeds an IPv4 address by the embedded one", () => {
  for (const [address, via, ipv4, entry] of EMBEDDED) {
    const verdict = judgeAddress(address);
    assert.deepEqual(
      verdict,
      { globallyReachable: false, entry, embedded: { via, ipv4 } },
      address,
    );
  }
  // The same forms around a public address are globally reachable.
  for (
    const address of [
      "::ffff:8.8.8.8",
      "::ffff:808:808",
      "64:ff9b::8.8.8.8",
      "2002:808:808::1",
      "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo client 8.8.8.8
    ]
  ) {
    const verdict = judgeAddress(address);
    assert.equal(verdict.globallyReachable, true, address);
    assert.equal(verdict.embedded?.ipv4, "8.8.8.8", address);
  }
  // And a registry exception inside an embedded address stays one.
  assert.equal(isGloballyReachable("::ffff:192.0.0.9"), true);
  assert.equal(isGloballyReachable("::ffff:192.0.0.8"), false);
});

Deno.test("judgeAddress lets through addresses no entry refuses, and exceptions the registries make", () => {
  for (const [address, entry] of GLOBAL) {
    assert.deepEqual(judgeAddress(address), { globallyReachable: true, entry }, address);
  }
});

Deno.test("judgeAddress takes parsed addresses and throws SyntaxError on what is not a literal", () => {
  assert.equal(judgeAddress(parseIpLiteral("10.0.0.1")!).entry, "Private-Use");
  for (const text of ["localhost", "0x7f.1", "fe80::1%eth0", "127.1", ""]) {
    assert.throws(() => judgeAddress(text), SyntaxError, text);
    assert.throws(() => isGloballyReachable(text), SyntaxError, text);
  }
});

Deno.test("describeVerdict names the registry entry, and the embedding when there is one", () => {
  assert.equal(describeVerdict(judgeAddress("127.0.0.1")), "Loopback");
  assert.equal(
    describeVerdict(judgeAddress("::ffff:10.0.0.1")),
    "Private-Use (10.0.0.1 embedded by IPv4-mapped Address)",
  );
  assert.equal(
    describeVerdict(judgeAddress("2002:c0a8:101::1")),
    "Private-Use (192.168.1.1 embedded by 6to4)",
  );
  assert.equal(describeVerdict(judgeAddress("fd00::1")), "Unique-Local");
});

/** An IPv6 text form of 16 bytes: full, zero-padded, or with one run of groups compressed. */
function ipv6Text(
  words: number[],
  options: { pad: boolean; from: number; to: number; quad: boolean },
) {
  const hex = (w: number) => w.toString(16).padStart(options.pad ? 4 : 1, "0");
  const groups = words.map(hex);
  if (options.quad) {
    groups.splice(6, 2, `${words[6] >> 8}.${words[6] & 0xff}.${words[7] >> 8}.${words[7] & 0xff}`);
  }
  const end = groups.length;
  const from = Math.min(options.from, end - 1);
  const to = Math.min(Math.max(options.to, from + 1), end);
  if (options.from >= end) return groups.join(":");
  return `${groups.slice(0, from).join(":")}::${groups.slice(to).join(":")}`;
}

Deno.test("parseIpLiteral agrees with the URL standard's IPv6 parser on generated text forms", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), {
        minLength: 8,
        maxLength: 8,
      }),
      fc.record({
        pad: fc.boolean(),
        from: fc.integer({ min: 0, max: 9 }),
        to: fc.integer({ min: 0, max: 8 }),
        quad: fc.boolean(),
      }),
      (words, options) => {
        const text = ipv6Text(words, options);
        // Compressing groups that are not zero changes the address: both parsers must agree anyway.
        let expected: string | null = null;
        try {
          expected = new URL(`http://[${text}]/`).hostname;
        } catch {
          expected = null;
        }
        const ours = parseIpLiteral(text) ?? null;
        assert.equal(ours !== null, expected !== null, text);
        if (ours && expected) {
          assert.deepEqual(parseIpLiteral(expected)?.bytes, ours.bytes, text);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("parseIpLiteral refuses the IPv6 forms the URL standard refuses", () => {
  for (const text of NOT_LITERALS.filter((t) => t.includes(":") && !/[[\]%]/.test(t))) {
    assert.throws(() => new URL(`http://[${text}]/`), TypeError, text);
  }
});

/** Unit tests of the strict IP address and CIDR range parsing. */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  cidrContains,
  formatIpAddress,
  maskIpAddress,
  parseCidr,
  parseIpAddress,
} from "../../src/ip_address.ts";

/** The canonical text of `text`, or undefined when it is refused. */
function canonical(text: string): string | undefined {
  const address = parseIpAddress(text);
  return address === undefined ? undefined : formatIpAddress(address);
}

Deno.test("parseIpAddress reads strict dotted quads", () => {
  const cases: [string, string][] = [
    ["0.0.0.0", "0.0.0.0"],
    ["192.0.2.1", "192.0.2.1"],
    ["255.255.255.255", "255.255.255.255"],
    ["10.0.0.10", "10.0.0.10"],
  ];
  for (const [text, want] of cases) assert.equal(canonical(text), want, text);
  assert.deepEqual(parseIpAddress("192.0.2.1"), {
    version: 4,
    bytes: new Uint8Array([192, 0, 2, 1]),
  });
});

Deno.test("parseIpAddress refuses octal, hex, short, integer and other loose IPv4 forms", () => {
  const refused = [
    "",
    "010.0.0.1", // octal to some parsers
    "0x7f.0.0.1",
    "0X7F.0.0.1",
    "127.1",
    "127.0.1",
    "2130706433",
    "0177.0.0.1",
    "00.0.0.0",
    "256.0.0.1",
    "1.2.3.4.",
    ".1.2.3.4",
    "1.2.3.4.5",
    "1..2.3",
    "1.2.3.-4",
    "+1.2.3.4",
    " 1.2.3.4",
    "1.2.3.4 ",
    "１.２.３.４", // full-width digits
    "1。2.3.4", // ideographic full stop
    "1.2.3.1e1",
    "1.2.3.4/32",
    "localhost",
    "unknown",
    "_hidden",
  ];
  for (const text of refused) assert.equal(parseIpAddress(text), undefined, JSON.stringify(text));
});

Deno.test("parseIpAddress reads IPv6 with compression and embedded IPv4, writing RFC 5952 text", () => {
  const cases: [string, string][] = [
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"], // first of equal runs
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"], // one zero group stays
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1"], // the longest run
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"],
    ["::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"],
    ["64:ff9b::192.0.2.33", "64:ff9b::c000:221"],
    ["::192.0.2.1", "::c000:201"], // IPv4-compatible, deprecated: not mapped
    ["fe80::1", "fe80::1"],
    ["1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"],
  ];
  for (const [text, want] of cases) assert.equal(canonical(text), want, text);
});

Deno.test("parseIpAddress counts IPv4-mapped IPv6 addresses as IPv4", () => {
  for (const text of ["::ffff:192.0.2.1", "::FFFF:c000:201", "0:0:0:0:0:ffff:192.0.2.1"]) {
    const address = parseIpAddress(text);
    assert.equal(address?.version, 4, text);
    assert.equal(formatIpAddress(address!), "192.0.2.1", text);
  }
});

Deno.test("parseIpAddress refuses zone ids and malformed IPv6", () => {
  const refused = [
    "fe80::1%eth0",
    "fe80::1%25eth0",
    ":::",
    "1:::2",
    "1::2::3",
    ":1::2",
    "1::2:",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8::",
    "::1:2:3:4:5:6:7:8",
    "12345::1",
    "g::1",
    "::ffff:1.2.3",
    "::ffff:01.2.3.4",
    "::1.2.3.4:5", // a dotted quad only at the end
    "1.2.3.4::",
    "1:2:3:4:5:6:7:1.2.3.4", // nine groups' worth
    "[::1]",
    "::1 ",
    "::1/128",
    "0000:0000:0000:0000:0000:0000:0000:0000:0",
  ];
  for (const text of refused) assert.equal(parseIpAddress(text), undefined, JSON.stringify(text));
});

Deno.test("maskIpAddress clears the bits past the prefix", () => {
  const v6 = parseIpAddress("2001:db8:1:2:3:4:5:6")!;
  assert.equal(formatIpAddress(maskIpAddress(v6, 64)), "2001:db8:1:2::");
  assert.equal(formatIpAddress(maskIpAddress(v6, 36)), "2001:db8::");
  const v4 = parseIpAddress("192.0.2.255")!;
  assert.equal(formatIpAddress(maskIpAddress(v4, 25)), "192.0.2.128");
  assert.equal(formatIpAddress(maskIpAddress(v4, 0)), "0.0.0.0");
  assert.equal(formatIpAddress(v4), "192.0.2.255", "the input is left as it was");
});

Deno.test("parseCidr reads addresses and ranges, and refuses loose forms", () => {
  const read: [string, string, number][] = [
    ["10.0.0.0/8", "10.0.0.0", 8],
    ["192.0.2.1", "192.0.2.1", 32],
    ["0.0.0.0/0", "0.0.0.0", 0],
    ["2001:db8::/32", "2001:db8::", 32],
    ["::1", "::1", 128],
    ["::/0", "::", 0],
    ["::ffff:10.0.0.0/104", "10.0.0.0", 8], // a mapped range is the IPv4 range
  ];
  for (const [text, network, prefix] of read) {
    const cidr = parseCidr(text);
    assert.equal(formatIpAddress(cidr.network), network, text);
    assert.equal(cidr.prefix, prefix, text);
  }
  const refused = [
    "",
    "10.0.0.1/8", // host bits set
    "2001:db8::1/32",
    "10.0.0.0/33",
    "::/129",
    "10.0.0.0/",
    "10.0.0.0/08",
    "10.0.0.0/-1",
    "10.0.0.0/ 8",
    "10.0.0.0/8/8",
    "fe80::/10%eth0",
    "fe80::1%eth0",
    "010.0.0.0/8",
    "10/8",
    "example.com",
  ];
  for (const text of refused) assert.throws(() => parseCidr(text), SyntaxError, text);
});

Deno.test("cidrContains matches by prefix, and never across families", () => {
  const table: [string, string, boolean][] = [
    ["10.0.0.0/8", "10.255.1.2", true],
    ["10.0.0.0/8", "11.0.0.0", false],
    ["192.0.2.128/25", "192.0.2.129", true],
    ["192.0.2.128/25", "192.0.2.127", false],
    ["192.0.2.1", "192.0.2.1", true],
    ["192.0.2.1", "192.0.2.2", false],
    ["0.0.0.0/0", "203.0.113.9", true],
    ["10.0.0.0/8", "::ffff:10.1.2.3", true], // mapped peers count as IPv4
    ["2001:db8::/32", "2001:db8:ffff::1", true],
    ["2001:db8::/32", "2001:db9::1", false],
    ["2001:db8::/33", "2001:db8:8000::1", false],
    ["::/0", "192.0.2.1", false],
    ["::/0", "::ffff:192.0.2.1", false],
    ["0.0.0.0/0", "2001:db8::1", false],
  ];
  for (const [range, address, want] of table) {
    assert.equal(
      cidrContains(parseCidr(range), parseIpAddress(address)!),
      want,
      `${range} ∋ ${address}`,
    );
  }
});

Deno.test("formatIpAddress text parses back to the same address", () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.nat(8), (bytes, zeros) => {
      // Runs of zero groups, where compression happens, are made likely.
      bytes.fill(0, 2 * zeros, 2 * zeros + 2 * Math.min(zeros, 8 - zeros));
      const address = { version: 6 as const, bytes };
      const back = parseIpAddress(formatIpAddress(address));
      assert.ok(back !== undefined);
      if (back.version === 4) assert.deepEqual(back.bytes, bytes.slice(12));
      else assert.deepEqual(back.bytes, bytes);
    }),
  );
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 4, maxLength: 4 }), (bytes) => {
      assert.deepEqual(parseIpAddress(formatIpAddress({ version: 4, bytes }))?.bytes, bytes);
    }),
  );
});

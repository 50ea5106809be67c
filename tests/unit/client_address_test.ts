/** Unit tests of the client address and its bucket key, behind trusted proxies or not. */

import assert from "node:assert/strict";
import { clientAddress, parseForwardedEntry } from "../../src/http/client_address.ts";
import { formatIpAddress, parseCidr } from "../../src/ip_address.ts";

const TRUSTED = ["10.0.0.0/8", "2001:db8:f::/48", "192.0.2.7"].map(parseCidr);

function tcp(hostname: string): Deno.NetAddr {
  return { transport: "tcp", hostname, port: 40000 };
}

/** The client address for a peer and the given `X-Forwarded-For` lines. */
function clientOf(peer: string, lines: string[], trusted = TRUSTED) {
  const headers = new Headers();
  for (const line of lines) headers.append("X-Forwarded-For", line);
  return clientAddress({ remoteAddr: tcp(peer), headers, trustedProxies: trusted });
}

Deno.test("clientAddress is the peer when no proxy is trusted, whatever the header says", () => {
  assert.deepEqual(clientOf("203.0.113.5", ["198.51.100.1"], []), {
    address: "203.0.113.5",
    bucketKey: "203.0.113.5",
  });
  // A peer outside TRUSTED_PROXIES cannot name another client either.
  assert.equal(clientOf("203.0.113.5", ["198.51.100.1"]).address, "203.0.113.5");
});

Deno.test("clientAddress counts a mapped peer as IPv4 and other IPv6 peers by their /64", () => {
  assert.deepEqual(clientOf("::ffff:203.0.113.5", [], []), {
    address: "203.0.113.5",
    bucketKey: "203.0.113.5",
  });
  assert.deepEqual(clientOf("2001:DB8:1:2:aaaa::1", [], []), {
    address: "2001:db8:1:2:aaaa::1",
    bucketKey: "2001:db8:1:2::/64",
  });
  // Two hosts of one /64 share a bucket; the next /64 does not.
  assert.equal(clientOf("2001:db8:1:2::9", [], []).bucketKey, "2001:db8:1:2::/64");
  assert.equal(clientOf("2001:db8:1:3::1", [], []).bucketKey, "2001:db8:1:3::/64");
  // A zone id the runtime reports for a link-local peer is dropped.
  assert.equal(clientOf("fe80::1%eth0", [], []).bucketKey, "fe80::/64");
});

Deno.test("clientAddress walks X-Forwarded-For from the right past trusted proxies", () => {
  const table: { name: string; peer: string; lines: string[]; want: string }[] = [
    { name: "one proxy", peer: "10.0.0.1", lines: ["198.51.100.9"], want: "198.51.100.9" },
    {
      name: "a chain of trusted proxies",
      peer: "10.0.0.1",
      lines: ["198.51.100.9, 10.1.1.1, 192.0.2.7"],
      want: "198.51.100.9",
    },
    {
      name: "entries the client wrote to the left are ignored",
      peer: "10.0.0.1",
      lines: ["1.1.1.1, 2.2.2.2, 198.51.100.9, 10.9.9.9"],
      want: "198.51.100.9",
    },
    {
      name: "a client claiming to be a proxy stops at the first untrusted entry",
      peer: "10.0.0.1",
      lines: ["10.5.5.5, 198.51.100.9"],
      want: "198.51.100.9",
    },
    {
      name: "several header lines are joined in order",
      peer: "10.0.0.1",
      lines: ["6.6.6.6", "198.51.100.9", "10.2.2.2"],
      want: "198.51.100.9",
    },
    { name: "no header: the peer", peer: "10.0.0.1", lines: [], want: "10.0.0.1" },
    { name: "an empty header: the peer", peer: "10.0.0.1", lines: [""], want: "10.0.0.1" },
    {
      name: "all entries trusted: the last trusted hop",
      peer: "10.0.0.1",
      lines: ["10.3.3.3, 10.2.2.2"],
      want: "10.3.3.3",
    },
    {
      name: "garbage: the last trusted hop",
      peer: "10.0.0.1",
      lines: ["198.51.100.9, garbage, 10.2.2.2"],
      want: "10.2.2.2",
    },
    { name: "unknown: the peer", peer: "10.0.0.1", lines: ["unknown"], want: "10.0.0.1" },
    {
      name: "spaces and tabs around entries",
      peer: "10.0.0.1",
      lines: ["  198.51.100.9\t ,\t10.2.2.2  "],
      want: "198.51.100.9",
    },
    {
      name: "empty entries are ignored",
      peer: "10.0.0.1",
      lines: [",, 198.51.100.9 , ,,10.2.2.2,, ,"],
      want: "198.51.100.9",
    },
    {
      name: "an IPv4 port is stripped",
      peer: "10.0.0.1",
      lines: ["198.51.100.9:8080"],
      want: "198.51.100.9",
    },
    {
      name: "brackets and a port are stripped",
      peer: "10.0.0.1",
      lines: ["[2001:db8:5::1]:443"],
      want: "2001:db8:5::1",
    },
    { name: "brackets alone", peer: "10.0.0.1", lines: ["[2001:db8:5::1]"], want: "2001:db8:5::1" },
    { name: "bare IPv6", peer: "10.0.0.1", lines: ["2001:DB8:5::1"], want: "2001:db8:5::1" },
    {
      name: "a mapped entry counts as IPv4",
      peer: "10.0.0.1",
      lines: ["::ffff:198.51.100.9"],
      want: "198.51.100.9",
    },
    {
      name: "a trusted proxy written with a port",
      peer: "10.0.0.1",
      lines: ["198.51.100.9, 10.2.2.2:3128"],
      want: "198.51.100.9",
    },
    {
      name: "an IPv6 peer and proxy chain",
      peer: "2001:db8:f:1::1",
      lines: ["198.51.100.9, [2001:db8:f:2::2]:80"],
      want: "198.51.100.9",
    },
    {
      name: "a mapped peer in an IPv4 range",
      peer: "::ffff:10.0.0.1",
      lines: ["198.51.100.9"],
      want: "198.51.100.9",
    },
  ];
  for (const { name, peer, lines, want } of table) {
    assert.equal(clientOf(peer, lines).address, want, name);
  }
});

Deno.test("clientAddress falls back to the last trusted hop on hostile or obfuscated entries", () => {
  const hostile = [
    "0x7f.0.0.1",
    "127.1",
    "2130706433",
    "010.0.0.1",
    "198.51.100.9.",
    "fe80::1%eth0",
    "[fe80::1%25eth0]:80",
    "[198.51.100.9]", // brackets hold IPv6 only
    "[2001:db8::1]:",
    "[2001:db8::1]:65536",
    "[2001:db8::1]x",
    "[2001:db8::1",
    "198.51.100.9:",
    "198.51.100.9:http",
    "198.51.100.9:80:80",
    "198.51.100.9 198.51.100.10",
    '"198.51.100.9"',
    "for=198.51.100.9",
    "_hidden",
    "\u00a0198.51.100.9", // a no-break space is not optional whitespace
    // Full-width digits as they arrive: UTF-8 bytes read one byte a character.
    String.fromCharCode(...new TextEncoder().encode("１９８.５１.１００.９")),
    "x".repeat(5000),
  ];
  for (const entry of hostile) {
    const got = clientOf("10.0.0.1", [`203.0.113.1, ${entry}, 10.2.2.2`]);
    assert.equal(got.address, "10.2.2.2", JSON.stringify(entry.slice(0, 40)));
  }
});

Deno.test("clientAddress reads many lines and long headers from the right", () => {
  const lines = Array.from({ length: 200 }, (_, i) => `198.51.${i % 250}.1`);
  lines.push("10.0.0.2", "10.0.0.3");
  assert.equal(clientOf("10.0.0.1", lines).address, "198.51.199.1");
  const long = `${"1.1.1.1,".repeat(2000)}198.51.100.9,${",".repeat(3000)}10.0.0.2`;
  assert.equal(clientOf("10.0.0.1", [long]).address, "198.51.100.9");
  // An IPv6 client behind proxies counts by its /64.
  assert.deepEqual(clientOf("10.0.0.1", ["2001:db8:1:2::77"]), {
    address: "2001:db8:1:2::77",
    bucketKey: "2001:db8:1:2::/64",
  });
});

Deno.test("clientAddress names a peer that is no IP address by its transport", () => {
  const headers = new Headers({ "x-forwarded-for": "198.51.100.9" });
  const unix: Deno.UnixAddr = { transport: "unix", path: "/run/app.sock" };
  assert.deepEqual(clientAddress({ remoteAddr: unix, headers, trustedProxies: TRUSTED }), {
    address: "unix:/run/app.sock",
    bucketKey: "unix:/run/app.sock",
  });
});

Deno.test("parseForwardedEntry accepts an address with an optional port and nothing else", () => {
  const accepted: [string, string][] = [
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:0", "192.0.2.1"],
    ["192.0.2.1:65535", "192.0.2.1"],
    ["[::1]:1", "::1"],
    [" \t[::ffff:192.0.2.1]:8080\t ", "192.0.2.1"],
  ];
  for (const [entry, want] of accepted) {
    const address = parseForwardedEntry(entry);
    assert.ok(address !== undefined, entry);
    assert.equal(formatIpAddress(address), want, entry);
  }
  for (
    const entry of [
      "",
      "１９８.５１.１００.９",
      "192.0.2.1:123456",
      "[::1]:-1",
      "::1:80x",
      "[]",
      "[:]:80",
    ]
  ) {
    assert.equal(parseForwardedEntry(entry), undefined, entry);
  }
});

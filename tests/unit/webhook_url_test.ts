/** Unit tests of `checkWebhookUrl`: the webhook URL rule of docs/interface.md §11, normal form of §6. */

import assert from "node:assert/strict";
import fc from "fast-check";
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from "../../src/webhooks/url.ts";

const STRICT = { allowHttp: false, allowPrivate: false };
const LENIENT = { allowHttp: true, allowPrivate: true };

const VALID = [
  "https://hooks.example",
  "https://hooks.example/",
  "https://hooks.example/in",
  "https://hooks.example/in/",
  "https://hooks.example:8443/in",
  "https://hooks.example/in?team=7&x=%20",
  "https://hooks.example?team=7",
  "https://hooks.example/?",
  "https://hooks.example?",
  "https://hooks.example//",
  "https://hooks.example./",
  "https://xn--nxasmm1c.example/",
  "https://hooks.example/a%20b/%7e",
  "https://8.8.8.8/hook",
  "https://[2606:4700:4700::1111]/hook",
  "https://192.0.0.9/",
  "https://localhost/", // a name: resolved, and judged, at each attempt
  "https://hooks.example/" + "a".repeat(MAX_WEBHOOK_URL_LENGTH - "https://hooks.example/".length),
];

const INVALID: [string, RegExp][] = [
  ["http://hooks.example/", /https:\/\/ \(plain http:\/\/ is not allowed\)/],
  ["ftp://hooks.example", /https/],
  ["file:///etc/passwd", /https/],
  ["hooks.example", /https/],
  ["//hooks.example", /https/],
  ["https:hooks.example", /https/],
  ["javascript:alert(1)", /https/],
  ["https://", /host/],
  ["https:///path-only", /host/],
  ["https://?a=1", /host/],
  ["https://user@hooks.example", /user info/],
  ["https://user:pw@hooks.example/", /user info/],
  ["https://@hooks.example/", /user info/],
  ["https://hooks.example/#top", /fragment/],
  ["https://hooks.example#", /fragment/],
  ["https://hooks.example/?a=1#b", /fragment/],
  ["https://hooks.example/a b", /white space/],
  [" https://hooks.example/", /white space/],
  ["https://hooks.example/\u00a0", /white space/],
  ["https://hooks.example/\t", /white space/],
  ["https://hooks.example/\u0000", /control/],
  ["https://hooks.example\\in", /backslash/],
  ["https://hooks.example:99999/", /not a valid URL/],
  ["https://[::1/", /not a valid URL/],
  ["https://exa%00mple.com/", /not a valid URL/],
  [
    "https://hooks.example/" +
    "a".repeat(MAX_WEBHOOK_URL_LENGTH + 1 - "https://hooks.example/".length),
    /2048/,
  ],
];

/** URLs a parser reads differently from how they are written, and their normal form. */
const NOT_NORMAL: [string, string][] = [
  ["https://HOOKS.example", "https://hooks.example/"],
  ["HTTPS://hooks.example/", "https://hooks.example/"],
  ["https://hooks.example:443/in", "https://hooks.example/in"],
  ["https://hooks.example:/", "https://hooks.example/"],
  ["https://hooks.example/a/../b", "https://hooks.example/b"],
  ["https://\uff48\uff4f\uff4f\uff4b\uff53.example/", "https://hooks.example/"],
  ["https://hooks\u00ad.example/", "https://hooks.example/"],
  ["https://%68ooks.example/", "https://hooks.example/"],
  ["https://8.8.2056/", "https://8.8.8.8/"],
  ["https://0x8.8.8.8/", "https://8.8.8.8/"],
  ["https://[2606:4700:4700:0:0:0:0:1111]/", "https://[2606:4700:4700::1111]/"],
  ["https://hooks.example/in?q=\u00e9", "https://hooks.example/in?q=%C3%A9"],
  ["https://h\u00e9.example/", "https://xn--h-bga.example/"],
];

/** Hosts given as addresses that are not globally reachable, as the URL parser writes them. */
const PRIVATE: [string, RegExp][] = [
  ["https://127.0.0.1/", /127\.0\.0\.1 is Loopback/],
  ["https://127.0.0.1:8443/hook", /Loopback/],
  ["https://0x7f.1/", /127\.0\.0\.1 is Loopback/],
  ["https://2130706433/", /127\.0\.0\.1 is Loopback/],
  ["https://0177.0.0.1/", /Loopback/],
  ["https://10.0.0.1/", /Private-Use/],
  ["https://172.16.5.4/", /Private-Use/],
  ["https://192.168.0.1/", /Private-Use/],
  ["https://100.64.0.1/", /Shared Address Space/],
  ["https://169.254.169.254/latest/meta-data", /Link Local/],
  ["https://0.0.0.0/", /This host/],
  ["https://224.0.0.1/", /Multicast/],
  ["https://192.0.2.10/", /Documentation/],
  ["https://198.18.0.1/", /Benchmarking/],
  ["https://240.0.0.1/", /Reserved/],
  ["https://255.255.255.255/", /Limited Broadcast/],
  ["https://[::1]/", /\[::1\] is Loopback Address/],
  ["https://[::]/", /Unspecified/],
  [
    "https://[::ffff:127.0.0.1]/",
    /\[::ffff:7f00:1\] is Loopback \(127\.0\.0\.1 embedded by IPv4-mapped/,
  ],
  ["https://[::ffff:7f00:1]/", /Loopback/],
  ["https://[0:0:0:0:0:ffff:a00:1]/", /Private-Use/],
  ["https://[64:ff9b::a9fe:a9fe]/", /Link Local \(169\.254\.169\.254 embedded by IPv4-IPv6/],
  ["https://[2002:c0a8:0101::1]/", /Private-Use \(192\.168\.1\.1 embedded by 6to4\)/],
  ["https://[fd00::1]/", /Unique-Local/],
  ["https://[fe80::1]/", /Link-Local/],
  ["https://[ff02::1]/", /Multicast/],
  ["https://[2001:db8::1]/", /Documentation/],
  ["https://[3fff::1]/", /Documentation/],
  ["https://[100::1]/", /Discard-Only/],
  ["https://[2001:2::1]/", /Benchmarking/],
];

Deno.test("checkWebhookUrl accepts absolute https URLs in their normal form, queries included", () => {
  for (const url of VALID) assert.equal(checkWebhookUrl(url, STRICT), null, url);
});

Deno.test("checkWebhookUrl refuses what §11 refuses, and names the problem", () => {
  for (const [url, reason] of INVALID) {
    const message = checkWebhookUrl(url, STRICT);
    assert.ok(message !== null, url);
    assert.match(message, reason, url);
  }
});

Deno.test("checkWebhookUrl accepts http:// only when WEBHOOKS_ALLOW_HTTP says so", () => {
  const allowHttp = { allowHttp: true, allowPrivate: false };
  assert.equal(checkWebhookUrl("http://hooks.example/in", allowHttp), null);
  assert.equal(checkWebhookUrl("http://hooks.example:8080", allowHttp), null);
  assert.match(checkWebhookUrl("ftp://hooks.example/", allowHttp)!, /https:\/\/ or http:\/\//);
  assert.match(
    checkWebhookUrl("http://hooks.example:80/", allowHttp)!,
    /write it as http:\/\/hooks\.example\/$/,
  );
  assert.match(checkWebhookUrl("http://hooks.example/", STRICT)!, /not allowed/);
});

Deno.test("checkWebhookUrl names the normal form of a URL that is not written in it", () => {
  for (const [url, normal] of NOT_NORMAL) {
    assert.equal(
      checkWebhookUrl(url, STRICT),
      `is not in its normal form; write it as ${normal}`,
      url,
    );
    assert.equal(checkWebhookUrl(normal, STRICT), null, normal);
  }
});

Deno.test("checkWebhookUrl refuses hosts given as addresses that are not globally reachable", () => {
  for (const [url, reason] of PRIVATE) {
    const message = checkWebhookUrl(url, STRICT);
    assert.ok(message !== null, url);
    assert.match(message, /^must not name an address that is not globally reachable: /, url);
    assert.match(message, reason, url);
  }
});

Deno.test("checkWebhookUrl accepts such hosts with WEBHOOKS_ALLOW_PRIVATE, in their normal form", () => {
  const allowPrivate = { allowHttp: false, allowPrivate: true };
  for (const url of ["https://127.0.0.1/", "https://[::1]:8443/hook", "https://10.0.0.1/?a=1"]) {
    assert.equal(checkWebhookUrl(url, allowPrivate), null, url);
  }
  assert.match(
    checkWebhookUrl("https://0x7f.1/", allowPrivate)!,
    /write it as https:\/\/127\.0\.0\.1\/$/,
  );
  assert.match(
    checkWebhookUrl("https://[::ffff:127.0.0.1]/", allowPrivate)!,
    /write it as https:\/\/\[::ffff:7f00:1\]\/$/,
  );
  assert.equal(checkWebhookUrl("http://127.0.0.1:8080/hook", LENIENT), null);
});

Deno.test("checkWebhookUrl never repeats its input in the message of a refusal", () => {
  const shapes = [
    (m: string) => `https://hooks.example/${m}#x`,
    (m: string) => `https://${m}@hooks.example/`,
    (m: string) => `ftp://hooks.example/${m}`,
    (m: string) => `https://hooks.example/${m} `,
    (m: string) => `https://hooks.example/${m}`.padEnd(MAX_WEBHOOK_URL_LENGTH + 1, "a"),
  ];
  fc.assert(
    fc.property(
      fc.stringMatching(/^[A-Za-z0-9._~-]{0,40}$/),
      fc.constantFrom(...shapes),
      (tail, shape) => {
        const message = checkWebhookUrl(shape(`ZZ${tail}`), STRICT);
        assert.ok(message !== null);
        assert.ok(!message.includes("ZZ"), message);
      },
    ),
  );
});

Deno.test("checkWebhookUrl accepts exactly the URLs that are their own normal form (or lack only the path's /)", () => {
  const path = fc.stringMatching(/^(\/[a-z0-9._~%-]{0,8}){0,3}$/);
  const query = fc.oneof(fc.constant(""), fc.stringMatching(/^\?[a-z0-9=&%]{0,10}$/));
  const host = fc.oneof(
    fc.constantFrom(
      "hooks.example",
      "HOOKS.example",
      "a.b.example",
      "8.8.8.8",
      "[2001:4860::8888]",
    ),
    fc.stringMatching(/^[a-z0-9-]{1,10}\.example$/),
  );
  fc.assert(
    fc.property(host, path, query, (h, p, q) => {
      const url = `https://${h}${p}${q}`;
      let href: string | null;
      try {
        href = new URL(url).href;
      } catch {
        href = null;
      }
      const message = checkWebhookUrl(url, LENIENT);
      const normal = href === url || href === `https://${h}/${q}` && p === "";
      assert.equal(message === null, normal, `${url}: ${message}`);
    }),
    { numRuns: 500 },
  );
});

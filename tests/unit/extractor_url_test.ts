/** Unit tests of `checkExtractorUrl`: the validation table of docs/interface.md §6, normal form included. */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkExtractorUrl,
  EXTRACTOR_URL_PATTERN,
  MAX_EXTRACTOR_URL_LENGTH,
} from "../../src/domain/extractor_url.ts";

const VALID = [
  "http://localhost:8081",
  "https://x.example",
  "https://x.example/",
  "https://x.example/api/v1",
  "http://10.0.0.1:9000/a/b/",
  "http://[::1]:8081",
  "https://extractor.internal:8443/v1",
  "https://x.example//",
  "http://x.example./",
  "http://xn--nxasmm1c.example/",
  "http://x.example/a%20b/%7e",
  "https://x.example/" + "a".repeat(MAX_EXTRACTOR_URL_LENGTH - "https://x.example/".length),
];

const INVALID: [string, RegExp][] = [
  ["ftp://x.example", /http/],
  ["file:///etc/passwd", /http/],
  ["x.example", /http/],
  ["//x.example", /http/],
  ["http:x.example", /http/],
  ["http://", /./],
  ["https:///path-only", /host/],
  ["http://user@x.example", /user info/],
  ["http://user:pw@x.example/", /user info/],
  ["https://x.example/?a=1", /query/],
  ["https://x.example?", /query/],
  ["https://x.example/#top", /fragment/],
  ["https://x.example#", /fragment/],
  ["https://x.example/a b", /white space/],
  ["https://x.example/\u00a0", /white space/],
  ["https://x.example/\t", /white space/],
  ["https://x.example/\u0000", /control/],
  [
    "https://x.example/" + "a".repeat(MAX_EXTRACTOR_URL_LENGTH + 1 - "https://x.example/".length),
    /2048/,
  ],
];

/** URLs a parser reads differently from how they are written, and their normal form. */
const NOT_NORMAL: [string, string][] = [
  ["http://0x7f.1/", "http://127.0.0.1/"],
  ["http://127.1/", "http://127.0.0.1/"],
  ["http://2130706433/", "http://127.0.0.1/"],
  ["http://EXAMPLE.com", "http://example.com/"],
  ["HTTPS://X.EXAMPLE", "https://x.example/"],
  ["http://x.example:80/", "http://x.example/"],
  ["https://x.example:443/v1", "https://x.example/v1"],
  ["http://x.example:/", "http://x.example/"],
  ["http://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "http://example.com/"],
  ["http://exa\u200bmple.com/", "http://example.com/"],
  ["http://exa\u00admple.com/", "http://example.com/"],
  ["http://exa\u2060mple.com/", "http://example.com/"],
  ["http://%65xample.com/", "http://example.com/"],
  ["http://\u03b2\u03cc\u03bb\u03bf\u03c2.example/", "http://xn--nxasmm1c.example/"],
  ["http://[0:0::1]/", "http://[::1]/"],
  ["https://x.example/a/./b/../c", "https://x.example/a/c"],
  ["https://x.example/\u00e4", "https://x.example/%C3%A4"],
  ["https://x.example/a\u200b", "https://x.example/a%E2%80%8B"],
  ['https://x.example/"<>', "https://x.example/%22%3C%3E"],
];

for (const [url, normal] of NOT_NORMAL) {
  Deno.test(`checkExtractorUrl refuses ${JSON.stringify(url)} and names ${normal}`, () => {
    assert.equal(new URL(url).href, normal, "the premise: a URL parser reads it so");
    assert.equal(checkExtractorUrl(url), `is not in its normal form; write it as ${normal}`);
    // The normal form itself is accepted.
    assert.equal(checkExtractorUrl(normal), null);
  });
}

Deno.test("checkExtractorUrl does not name a normal form longer than the limit", () => {
  // Each "ä" becomes "%C3%A4": the input fits, its serialization does not.
  const url = "https://x.example/" + "\u00e4".repeat(500);
  assert.ok(url.length <= MAX_EXTRACTOR_URL_LENGTH);
  assert.ok(new URL(url).href.length > MAX_EXTRACTOR_URL_LENGTH);
  const problem = checkExtractorUrl(url);
  assert.equal(
    problem,
    `is not in its normal form, which is longer than ${MAX_EXTRACTOR_URL_LENGTH} characters`,
  );
});

Deno.test("checkExtractorUrl reasons are printable ASCII of bounded length", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.webUrl({ withQueryParameters: false, withFragments: false }),
        fc.string({ unit: "binary", maxLength: 300 }).map((s) => `http://${s}`),
        fc.string({ unit: "grapheme", maxLength: 300 }).map((s) => `https://x.example/${s}`),
      ),
      (url) => {
        const problem = checkExtractorUrl(url);
        if (problem === null) {
          assert.ok(new URL(url).href === url || new URL(url).href === `${url}/`);
          return;
        }
        assert.match(problem, /^[\x20-\x7e]+$/);
        assert.ok(problem.length <= MAX_EXTRACTOR_URL_LENGTH + 64, `${problem.length}`);
      },
    ),
    { numRuns: 1000 },
  );
});

for (const url of VALID) {
  Deno.test(`checkExtractorUrl accepts ${url.slice(0, 40)}`, () => {
    assert.equal(checkExtractorUrl(url), null);
  });
}

for (const [url, reason] of INVALID) {
  Deno.test(`checkExtractorUrl refuses ${JSON.stringify(url.slice(0, 40))}`, () => {
    const problem = checkExtractorUrl(url);
    assert.ok(problem !== null, "accepted");
    assert.match(problem, reason);
    assert.ok(!problem.includes("x.example"), "the reason does not echo the URL");
  });
}

Deno.test("every URL the rule accepts matches the pattern the document publishes", () => {
  const pattern = new RegExp(EXTRACTOR_URL_PATTERN, "u");
  for (const url of ["", ...VALID, ...NOT_NORMAL.map(([, normal]) => normal)]) {
    assert.ok(pattern.test(url), url);
  }
  const web = fc.webUrl({ withQueryParameters: false, withFragments: false });
  fc.assert(
    fc.property(
      fc.oneof(
        web,
        web.map((url) => new URL(url).href),
        fc.tuple(web, fc.string({ unit: "binary", maxLength: 8 }), fc.nat()).map(
          ([url, text, at]) => {
            const i = at % (url.length + 1);
            return url.slice(0, i) + text + url.slice(i);
          },
        ),
      ),
      (url) => {
        if (checkExtractorUrl(url) === null) assert.ok(pattern.test(url), url);
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("the pattern refuses white space, control characters and backslashes", () => {
  const pattern = new RegExp(EXTRACTOR_URL_PATTERN, "u");
  for (const c of [" ", "\t", "\u00a0", "\u2028", "\u0000", "\u007f", "\u0085", "\\"]) {
    assert.ok(!pattern.test(`https://x.example/a${c}b`), JSON.stringify(c));
    assert.ok(!pattern.test(`https://x.ex${c}ample/`), JSON.stringify(c));
  }
});

/** Unit tests of `checkExtractorUrl`: the validation table of CONTRACT §6. */

import assert from "node:assert/strict";
import { checkExtractorUrl, MAX_EXTRACTOR_URL_LENGTH } from "../../src/domain/extractor_url.ts";

const VALID = [
  "http://localhost:8081",
  "https://x.example",
  "https://x.example/",
  "https://x.example/api/v1",
  "http://10.0.0.1:9000/a/b/",
  "http://[::1]:8081",
  "HTTPS://X.EXAMPLE",
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

/**
 * Unit tests of what a delivery reads back: `Retry-After` (RFC 9110
 * §10.2.3, both forms, the three HTTP-date forms) and the response head.
 */

import assert from "node:assert/strict";
import { parseHttpDate, parseRetryAfter } from "../../src/delivery/retry_after.ts";
import {
  BodyFraming,
  HeadEnd,
  parseHead,
  persists,
  type ResponseHead,
} from "../../src/http1_response.ts";

const NOW = Date.UTC(1994, 10, 6, 8, 49, 7); // Sun, 06 Nov 1994 08:49:07 GMT
const bytes = (text: string) => new TextEncoder().encode(text);
const headEnd = (buffer: Uint8Array) => new HeadEnd(0).find(buffer);
const bodyEnd = (head: ResponseHead, body: Uint8Array) => new BodyFraming(head).end(body);
const bodyComplete = (head: ResponseHead, body: Uint8Array) => new BodyFraming(head).complete(body);

Deno.test("parseRetryAfter reads delay-seconds as they are", () => {
  for (
    const [value, seconds] of [["0", 0], ["120", 120], [" 30 ", 30], ["3601", 3601], [
      "007",
      7,
    ]] as const
  ) {
    assert.equal(parseRetryAfter(value, NOW), seconds, value);
  }
});

Deno.test("parseRetryAfter reads the three HTTP-date forms as seconds from now, rounded up", () => {
  // RFC 9110 §5.6.7's example, in each form: 30 s after NOW.
  for (
    const value of [
      "Sun, 06 Nov 1994 08:49:37 GMT",
      "Sunday, 06-Nov-94 08:49:37 GMT",
      "Sun Nov  6 08:49:37 1994",
    ]
  ) {
    assert.equal(parseRetryAfter(value, NOW), 30, value);
  }
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", NOW + 29_500), 1);
  assert.equal(parseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", NOW), 0); // the past: now
  assert.equal(parseRetryAfter("Mon, 07 Nov 1994 08:49:07 GMT", NOW), 86400);
});

Deno.test("parseRetryAfter refuses what is neither form", () => {
  for (
    const value of [
      "",
      "soon",
      "-1",
      "1.5",
      "+5",
      "1e3",
      "0x10",
      "Sun, 6 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 08:49:37 UTC",
      "Sun, 06 Nov 1994 08:49:37",
      "Sun, 31 Feb 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 24:00:00 GMT",
      "Sun, 06 Nov 1994 08:60:00 GMT",
      "Sun, 06 Nov 0050 08:49:37 GMT",
      "Sun, 06 Foo 1994 08:49:37 GMT",
      "1994-11-06T08:49:37Z",
      "Sunday, 06-Nov-1994 08:49:37 GMT",
    ]
  ) {
    assert.equal(parseRetryAfter(value, NOW), null, value);
  }
  // What Date.parse would take for a date (the year 2001) is no HTTP-date.
  for (const value of ["1", "2001", "Nov 6 1994"]) assert.equal(parseHttpDate(value, NOW), null);
});

Deno.test("parseHttpDate reads a two-digit year as the most recent past year with those digits", () => {
  const at2025 = Date.UTC(2025, 0, 1);
  assert.equal(
    parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", at2025),
    Date.UTC(1994, 10, 6, 8, 49, 37),
  );
  assert.equal(parseHttpDate("Friday, 01-Jan-27 00:00:00 GMT", at2025), Date.UTC(2027, 0, 1));
  assert.equal(parseHttpDate("Tuesday, 01-Jan-75 00:00:00 GMT", at2025), Date.UTC(2075, 0, 1));
  assert.equal(parseHttpDate("Thursday, 01-Jan-76 00:00:00 GMT", at2025), Date.UTC(1976, 0, 1));
});

Deno.test("headEnd finds the empty line that ends a head, CRLF or bare LF", () => {
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\r\n\r\nbody")), 19);
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\n\nbody")), 17);
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\r\nx: 1\r\n")), -1);
  assert.equal(headEnd(bytes("")), -1);
});

Deno.test("parseHead reads the status and the fields, names in lower case, repeats kept", () => {
  const head = parseHead(
    bytes("HTTP/1.1 429 Too Many\r\nRetry-After:  120 \r\nX-A: 1\r\nx-a: 2\r\n\r\n"),
  );
  assert.equal(head.status, 429);
  assert.deepEqual(head.headers.get("retry-after"), ["120"]);
  assert.deepEqual(head.headers.get("x-a"), ["1", "2"]);
  assert.equal(parseHead(bytes("HTTP/1.0 204\r\n\r\n")).status, 204);
  for (
    const text of [
      "HTTP/2 200\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "ICY 200 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\n: x\r\n\r\n",
    ]
  ) {
    assert.throws(() => parseHead(bytes(text)), SyntaxError, text);
  }
});

Deno.test("bodyComplete knows when a body announced by its head has arrived", () => {
  const head = (text: string) => parseHead(bytes(`${text}\r\n\r\n`));
  assert.ok(bodyComplete(head("HTTP/1.1 204 No Content"), bytes("")));
  assert.ok(bodyComplete(head("HTTP/1.1 200 OK\r\ncontent-length: 2"), bytes("ok")));
  assert.ok(!bodyComplete(head("HTTP/1.1 200 OK\r\ncontent-length: 3"), bytes("ok")));
  const chunked = head("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked");
  assert.ok(bodyComplete(chunked, bytes("2\r\nok\r\n0\r\n\r\n")));
  assert.ok(bodyComplete(chunked, bytes("0\r\n\r\n")));
  assert.ok(!bodyComplete(chunked, bytes("2\r\nok\r\n")));
  assert.ok(!bodyComplete(head("HTTP/1.1 200 OK"), bytes("until the end")));
});

Deno.test("bodyEnd finds the exact end of a body, chunked framing parsed, or says it cannot", () => {
  const head = (text: string) => parseHead(bytes(`${text}\r\n\r\n`));
  const chunked = head("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked");
  // Extensions, trailers, and chunk data that looks like the last chunk.
  const whole = (text: string) => assert.equal(bodyEnd(chunked, bytes(text)), text.length, text);
  whole("2;x=1\r\nok\r\n0\r\n\r\n");
  whole("0\r\nx-check: 1\r\n\r\n");
  assert.equal(bodyEnd(chunked, bytes("0\r\n\r\nHTTP/1.1")), 5, "bytes after it are not its");
  const fake = "7\r\n\r\n0\r\n\r\n\r\n";
  assert.equal(bodyEnd(chunked, bytes(fake)), -1, "inside a chunk's data, not its end");
  assert.equal(bodyEnd(chunked, bytes(fake + "0\r\n\r\n")), fake.length + 5);
  assert.equal(bodyEnd(chunked, bytes("zz\r\n")), -2);
  assert.equal(bodyEnd(chunked, bytes("2\r\nokX\r\n")), -2);
  assert.ok(bodyComplete(chunked, bytes("zz\r\n")), "malformed: nothing more to wait for");
  // Content-Length: one value; bytes after it are not this body's.
  const length = head("HTTP/1.1 200 OK\r\ncontent-length: 2");
  assert.equal(bodyEnd(length, bytes("okHTTP/1.1")), 2);
  assert.equal(bodyEnd(head("HTTP/1.1 200 OK\r\ncontent-length: 2, 2"), bytes("ok")), -2);
  // No body for 204: bytes after its head are not a body, and the end is 0.
  assert.equal(bodyEnd(head("HTTP/1.1 204 No Content"), bytes("junk")), 0);
  assert.equal(bodyEnd(head("HTTP/1.1 200 OK"), bytes("to the end")), -2);
});

Deno.test("persists: HTTP/1.1 without connection: close, a final answer other than 101", () => {
  const head = (text: string) => parseHead(bytes(`${text}\r\n\r\n`));
  assert.ok(persists(head("HTTP/1.1 204 No Content")));
  assert.ok(persists(head("HTTP/1.1 200 OK\r\nconnection: keep-alive")));
  assert.ok(!persists(head("HTTP/1.1 200 OK\r\nConnection: Close")));
  assert.ok(!persists(head("HTTP/1.1 200 OK\r\nconnection: upgrade, close")));
  assert.ok(!persists(head("HTTP/1.0 200 OK")));
});

Deno.test("HeadEnd and BodyFraming carried on as bytes arrive find what one look at the whole finds", () => {
  const answers = [
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2;x=1\r\nok\r\n0\r\nx-t: 1\r\n\r\n",
    "HTTP/1.1 200 OK\ncontent-length: 2\n\nokHTTP",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n7\r\n\r\n0\r\n\r\n\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\n\r\nto the end",
    "HTTP/1.1 200 OK\n\r\n",
    "HTTP/1.1 200 OK\r\nx: 1\r\r\n\r\n",
  ];
  for (const text of answers) {
    const all = bytes(text);
    const end = headEnd(all);
    assert.ok(end > 0, text);
    const head = parseHead(all.subarray(0, end));
    const body = all.subarray(end);
    for (const step of [1, 2, 3, 7]) {
      const search = new HeadEnd(0);
      let found = -1;
      for (let n = 0; found < 0 && n < all.length + step; n += step) {
        found = search.find(all.subarray(0, Math.min(n, all.length)));
      }
      assert.equal(found, end, `${JSON.stringify(text)} by ${step}`);
      assert.ok(search.scanned <= end, "each byte looked at once");
      const framing = new BodyFraming(head);
      let got = framing.end(body.subarray(0, 0));
      for (let n = step; n < body.length + step; n += step) {
        got = framing.end(body.subarray(0, Math.min(n, body.length)));
      }
      assert.equal(got, bodyEnd(head, body), `${JSON.stringify(text)} body by ${step}`);
      assert.ok(framing.scanned <= 2 * body.length);
    }
  }
});

/**
 * The strict JSON reader: every rule of docs/interface.md §3, agreement with
 * JSON.parse on everything it accepts, and safe error messages.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import canonicalize from "canonicalize";
import { canonicalBytes, canonicalJson } from "@intents/protocol/jcs";
import { parseStrictJson, readStrictJson } from "../../src/domain/strict_json.ts";
import { assertAccepted, assertRejected, utf8 } from "../support/strict_json.ts";
import { needsVectors, readVectorBytes, vectorsDir } from "../support/vectors.ts";

Deno.test("parseStrictJson accepts ordinary JSON exactly as JSON.parse reads it", () => {
  const accepted = [
    "null",
    "true",
    "false",
    "0",
    "-0",
    "0.1",
    "1E30",
    "1e+21",
    "1e-400",
    "1.7976931348623157e+308",
    "-1.7976931348623157e+308",
    "5e-324",
    "9007199254740991",
    "-9007199254740991",
    "100000000000000000000",
    "9007199254740992.0",
    "9007199254740993e0",
    "123456789012345678901234567890.5",
    "999999999999999",
    "-999999999999999",
    "1" + "0".repeat(305) + ".5",
    "0." + "0".repeat(400) + "1",
    '""',
    '"\\u0000\\u001f\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '"\\ud83d\\ude02"',
    '"\\uD83D\\uDE02"',
    '"€ 😂 \u007f"',
    "[]",
    "{}",
    " \t\n\r[ 1 , [ ] , { } ]\r\n\t ",
    '{"":1}',
    '{"a":{"a":1},"b":[{"a":1},{"a":2}]}',
    '{"a":1,"A":2,"\\u00e9":3,"e\u0301":4}',
    '{"constructor":{"prototype":1},"toString":2,"hasOwnProperty":3}',
    '{"\\u20ac":"Euro","\\r":"CR","1":"One","</script>":"x"}',
  ];
  for (const text of accepted) assertAccepted(text);
});

Deno.test("parseStrictJson reads numbers with a fraction or exponent as ordinary doubles", () => {
  assert.ok(Object.is(parseStrictJson(utf8("-0")), -0));
  assert.equal(parseStrictJson(utf8("1e+21")), 1e21);
  assert.equal(parseStrictJson(utf8("1.7976931348623157e+308")), Number.MAX_VALUE);
  assert.equal(parseStrictJson(utf8("5e-324")), Number.MIN_VALUE);
  assert.equal(parseStrictJson(utf8("1E30")), 1e30);
  assert.equal(parseStrictJson(utf8("0.1")), 0.1);
});

Deno.test("parseStrictJson keeps __proto__ an own data property and never changes a prototype", () => {
  const value = assertAccepted(
    '{"__proto__":{"polluted":true},"a":[{"__proto__":null}]}',
  ) as Record<
    string,
    unknown
  >;
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.ok(Object.hasOwn(value, "__proto__"));
  assert.deepEqual(Object.keys(value), ["__proto__", "a"]);
  assert.deepEqual(Object.getOwnPropertyDescriptor(value, "__proto__")?.value, { polluted: true });
  assert.equal((value as { polluted?: boolean }).polluted, undefined);
  const inner = (value.a as Record<string, unknown>[])[0];
  assert.equal(Object.getPrototypeOf(inner), Object.prototype);
  assert.ok(Object.hasOwn(inner, "__proto__"));
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

Deno.test("parseStrictJson rejects grammar errors with the byte offset of the problem", () => {
  const cases: [string, RegExp, number][] = [
    ["", /unexpected end of input/, 0],
    ["   ", /unexpected end of input/, 3],
    ["{", /unexpected end of input/, 1],
    ["[1,2", /unexpected end of input/, 4],
    ['{"a":1', /unexpected end of input/, 6],
    ['"abc', /unexpected end of input/, 4],
    ["[1,]", /expected a JSON value/, 3],
    ['{"a":1,}', /expected a member name/, 7],
    ["{a:1}", /expected a member name/, 1],
    ["{'a':1}", /expected a member name/, 1],
    ['{"a" 1}', /expected ':'/, 5],
    ['{"a":1 "b":2}', /expected ',' or '}'/, 7],
    ["[1 2]", /expected ',' or '\]'/, 3],
    ["[1}", /expected ',' or '\]'/, 2],
    ['{"a":1]', /expected ',' or '}'/, 6],
    ["[1]]", /unexpected data after the JSON value/, 3],
    ["{} {}", /unexpected data after the JSON value/, 3],
    ["1 2", /unexpected data after the JSON value/, 2],
    ["01", /unexpected data after the JSON value/, 1],
    ["-01", /unexpected data after the JSON value/, 2],
    ["1.", /invalid number/, 0],
    ["1.e5", /invalid number/, 0],
    [".5", /expected a JSON value/, 0],
    ["+1", /expected a JSON value/, 0],
    ["-", /unexpected end of input/, 1],
    ["-a", /invalid number/, 0],
    ["1e", /invalid number/, 0],
    ["1e+", /invalid number/, 0],
    ["0x10", /unexpected data after the JSON value/, 1],
    ["NaN", /expected a JSON value/, 0],
    ["Infinity", /expected a JSON value/, 0],
    ["-Infinity", /invalid number/, 0],
    ["tru", /expected a JSON value/, 0],
    ["True", /expected a JSON value/, 0],
    ["nul", /expected a JSON value/, 0],
    ["'a'", /expected a JSON value/, 0],
    ["\u00a01", /expected a JSON value/, 0],
    ["1\u00a0", /unexpected data after the JSON value/, 1],
    ["\f1", /expected a JSON value/, 0],
    ["/* c */ 1", /expected a JSON value/, 0],
    ['"\\x"', /invalid escape sequence/, 1],
    ['"\\U0041"', /invalid escape sequence/, 1],
    ['"\\u12"', /invalid \\u escape/, 1],
    ['"\\u12G4"', /invalid \\u escape/, 1],
    ['"\\', /unexpected end of input/, 2],
  ];
  for (const [text, reason, offset] of cases) assertRejected(text, reason, offset);
});

Deno.test("parseStrictJson rejects raw control characters inside strings", () => {
  for (let code = 0; code < 0x20; code++) {
    assertRejected(`["ab${String.fromCharCode(code)}"]`, /control character in string/, 4);
  }
  // DEL (U+007F) is not a control character in RFC 8259's sense.
  assertAccepted('"\u007f"');
});

Deno.test("parseStrictJson rejects invalid UTF-8 at the offending byte", () => {
  const cases: [number[], number][] = [
    [[0x22, 0xc0, 0x80, 0x22], 1], // overlong NUL
    [[0x22, 0xe0, 0x80, 0xaf, 0x22], 1], // overlong '/'
    [[0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d], 2], // encoded surrogate U+D800
    [[0x22, 0x61, 0xe2, 0x82, 0x22], 2], // truncated '€'
    [[0x22, 0xf5, 0x80, 0x80, 0x80, 0x22], 1], // beyond U+10FFFF
    [[0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], 1], // U+110000
    [[0x22, 0x80, 0x22], 1], // lone continuation byte
    [[0x22, 0xff, 0x22], 1],
    [[0x22, 0xc3], 1], // cut off at the end
  ];
  for (const [bytes, offset] of cases) {
    assertRejected(new Uint8Array(bytes), /invalid UTF-8/, offset);
  }
});

Deno.test("parseStrictJson rejects a leading byte order mark", () => {
  assertRejected(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), /byte order mark/, 0);
  // A BOM later on is an ordinary character inside a string.
  assertAccepted('"\ufeff"');
});

Deno.test("parseStrictJson rejects a duplicate member name anywhere, compared after unescaping", () => {
  const cases: [string, number][] = [
    ['{"a":1,"a":1}', 7],
    ['{"a":1,"b":2,"a":3}', 13],
    ['[0,{"x":{"b":1,"b":2}}]', 15],
    ['{"a":1,"\\u0061":2}', 7],
    ['{"\\u0061":1,"a":2}', 12],
    ['{"\\ud83d\\ude02":1,"😂":2}', 18],
    ['{"\\/":1,"/":2}', 8],
    ['{"__proto__":1,"__proto__":2}', 15],
    ['{"":1,"":2}', 6],
    // Offsets count bytes: "é" is two of them.
    ['{"é":1,"é":2}', 8],
    // Past sixteen names, a repeat of the first and of the seventeenth.
    [`{${Array.from({ length: 20 }, (_, k) => `"n${k}":0`).join(",")},"n0":1}`, 151],
    [`{${Array.from({ length: 20 }, (_, k) => `"n${k}":0`).join(",")},"n16":1}`, 151],
  ];
  for (const [text, offset] of cases) assertRejected(text, /duplicate member name/, offset);
});

Deno.test("parseStrictJson rejects a lone UTF-16 surrogate written as an escape", () => {
  const cases: [string, number][] = [
    ['"\\ud800"', 1],
    ['"\\uDBFF"', 1],
    ['"\\udc00"', 1],
    ['"\\uDFFF"', 1],
    ['"\\ud800\\u0041"', 1],
    ['"\\ud800x"', 1],
    ['"\\ud800\\n"', 1],
    ['"\\udc00\\ud800"', 1],
    ['"\\ud800\\ud800"', 1],
    ['"ok \\ude02\\ud83d"', 4],
    ['{"\\ud800":1}', 2],
    ['["€", "\\ud800"]', 9],
  ];
  for (const [text, offset] of cases) assertRejected(text, /lone UTF-16 surrogate/, offset);
});

Deno.test("parseStrictJson accepts an integer literal outside ±(2^53−1) written as JCS writes it", () => {
  const cases: [string, number][] = [
    ["100000000000000000000", 1e20],
    ["123456789012345680000", 1.2345678901234568e20],
    ["-123456789012345680000", -1.2345678901234568e20],
    ["9007199254740992", 2 ** 53],
    ["-9007199254740992", -(2 ** 53)],
    ["18446744073709552000", 2 ** 64],
    ["999999999999999900000", 999999999999999900000],
  ];
  for (const [text, value] of cases) {
    // The premise: this is what a JavaScript signer writes for the value.
    assert.equal(JSON.stringify(value), text);
    assert.equal(canonicalize(value), text);
    assert.deepEqual(assertAccepted(`[${text}]`), [value]);
    assert.equal(canonicalJson(parseStrictJson(utf8(`{"n":${text}}`))), `{"n":${text}}`);
  }
});

Deno.test("parseStrictJson rejects an integer literal outside ±(2^53−1) that JCS writes otherwise, with a hint to send strings", () => {
  for (
    const text of [
      "9007199254740993", // 2^53 + 1: no double holds it
      "-9007199254740993",
      "18446744073709551615", // 2^64 − 1
      "18446744073709551616", // 2^64, written exactly; JCS writes 18446744073709552000
      "12345678901234567890",
      "100000000000000000001",
      "1000000000000000000000", // 1e21: JCS writes 1e+21
      "100000000000000000000000000000",
      "1" + "0".repeat(400), // overflows to infinity
    ]
  ) {
    const error = assertRejected(`[${text}]`, /integer literal outside ±\(2\^53−1\)/, 1);
    assert.equal(error.hint, "send such numbers as strings");
  }
  assert.equal(assertRejected("[1,2,]", /expected/).hint, undefined);
});

Deno.test("parseStrictJson reads JSON.stringify of every finite double as the value a JavaScript signer signs", () => {
  // Beyond fc.double's spread, integers just past 2^53 and near powers of ten,
  // where Number::toString switches between digit runs and exponents.
  const doubles = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }).map(Number),
    fc.bigInt({ min: 2n ** 53n - 8n, max: 2n ** 53n + 64n }).map((n) => Number(n)),
    fc.tuple(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 13, max: 22 }))
      .map(([m, e]) => m * 10 ** e),
  );
  fc.assert(
    fc.property(doubles, fc.boolean(), (d, negate) => {
      const value = negate ? -d : d;
      const signed = new TextEncoder().encode(canonicalize({ n: value }));
      for (const text of [JSON.stringify(value), JSON.stringify({ n: value })]) {
        const parsed = parseStrictJson(utf8(text));
        assert.deepStrictEqual(parsed, JSON.parse(text));
        // The same double, but for -0, which JSON.stringify writes as 0.
        const wrapped = typeof parsed === "number" ? { n: parsed } : parsed as { n: number };
        assert.ok(wrapped.n === value, `${text} reads as ${wrapped.n}`);
        assert.deepEqual(canonicalBytes(wrapped), signed);
      }
    }),
    { numRuns: 2000 },
  );
});

Deno.test("parseStrictJson rejects number literals that overflow to infinity", () => {
  for (const text of ["1e400", "-1e400", "1.8e308", "1" + "0".repeat(400) + ".5", "1e99999999"]) {
    assertRejected(`{"n":${text}}`, /overflows to infinity/, 5);
  }
});

Deno.test("parseStrictJson allows 32 levels of nesting and rejects 33", () => {
  assertAccepted("[".repeat(32) + "]".repeat(32));
  assertAccepted('{"a":'.repeat(31) + "[]" + "}".repeat(31));
  assertRejected("[".repeat(33) + "]".repeat(33), /nesting deeper than 32/, 32);
  assertRejected('{"a":'.repeat(32) + "{}" + "}".repeat(32), /nesting deeper than 32/, 160);
  // Empty containers count as a level too.
  assertRejected("[".repeat(32) + "{}" + "]".repeat(32), /nesting deeper than 32/, 32);
});

Deno.test("parseStrictJson honours the maxDepth option", () => {
  assert.deepEqual(parseStrictJson(utf8("[1]"), { maxDepth: 1 }), [1]);
  assert.equal(parseStrictJson(utf8("1"), { maxDepth: 1 }), 1);
  assertRejected("[[1]]", /nesting deeper than 1/, 1, { maxDepth: 1 });
  assert.deepEqual(parseStrictJson(utf8("[".repeat(40) + "]".repeat(40)), { maxDepth: 40 }), [
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
  ]);
  for (const maxDepth of [0, -1, 1.5, NaN]) {
    assert.throws(() => parseStrictJson(utf8("1"), { maxDepth }), RangeError);
  }
});

Deno.test("parseStrictJson rejects 100,000 levels of nesting at the 33rd, without a stack overflow", () => {
  const levels = 100_000;
  // The offset is the 33rd container's opening: the scan stops there, whatever follows.
  for (
    const [text, offset] of [
      ["[".repeat(levels) + "]".repeat(levels), 32],
      ['{"a":'.repeat(levels) + "1" + "}".repeat(levels), 32 * 5],
      ["[".repeat(levels), 32], // unterminated as well
    ] as const
  ) {
    assertRejected(utf8(text), /nesting deeper than 32/, offset);
  }
});

Deno.test("parseStrictJson error messages never echo the input", () => {
  const secret = "SECRET-VALUE";
  const bodies = [
    `{"${secret}":1,"${secret}":2}`,
    `{"${secret}": ${secret}}`,
    `["${secret}\\x"]`,
    `["${secret}", 99999999999999999999]`,
    `{"${secret}" "${secret}"}`,
    `"${secret}`,
  ];
  for (const body of bodies) {
    const error = assertRejected(body, /./);
    assert.ok(!error.message.includes("SECRET"), error.message);
    assert.match(error.message, /^Cannot parse JSON at byte \d+: [a-z][^"]*$/);
  }
});

Deno.test("parseStrictJson reads every JCS vector input as JSON.parse does", needsVectors(), () => {
  const names = [...Deno.readDirSync(`${vectorsDir()}/jcs/input`)].map((e) => e.name).sort();
  assert.ok(names.length >= 6, "the six JCS inputs are present");
  for (const name of names) {
    assertAccepted(readVectorBytes(`jcs/input/${name}`));
  }
});

Deno.test("readStrictJson calls a text compact exactly when JSON.stringify writes it so", async (t) => {
  const read = (text: string) => readStrictJson(new TextEncoder().encode(text));
  await t.step("what JSON.stringify writes is compact", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const { compact, value: parsed } = read(text);
        assert.equal(compact, true, text);
        assert.equal(JSON.stringify(parsed), text);
      }),
      { numRuns: 500 },
    );
  });
  await t.step("white space, other number literals and other escapes are not", () => {
    for (
      const text of [
        '{"a": 1}',
        "[1 ]",
        " 1",
        "1\n",
        '{"a":1.50}',
        '{"a":-0}',
        '{"a":1e2}',
        '{"a":1E+21}',
        '{"a":0.10}',
        '"\\u00e9"',
        '"\\/"',
        '"\\u001F"',
        '"\\u000a"',
        '"\\ud83d\\ude00"',
      ]
    ) {
      assert.equal(read(text).compact, false, text);
    }
    for (const text of ['{"a":10}', '{"a":-10}', '"\\u001f"', '"\\n\\t\\"\\\\"', "1e+21", "0.1"]) {
      assert.equal(read(text).compact, true, text);
    }
  });
});

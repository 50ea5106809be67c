/**
 * RFC 8785 canonical JSON: the reference test data, the ES6 number
 * serialisation file, refusal of values JSON cannot represent, and agreement
 * with an independent implementation (the `canonicalize` package, kept as
 * the oracle of these tests only) on random values.
 */

import assert from "node:assert/strict";
import { hex } from "@scure/base";
import fc from "fast-check";
import canonicalize from "canonicalize";
import {
  canonicalBytes,
  canonicalBytesOfParsed,
  canonicalBytesWithin,
  canonicalJson,
  canonicalViewOfParsed,
} from "@intents/protocol/jcs";
import { parseStrictJson } from "../../src/domain/strict_json.ts";
import { needsVectors, readVectorBytes, vectorsDir } from "../support/vectors.ts";

function vectorNames(): string[] {
  return [...Deno.readDirSync(`${vectorsDir()}/jcs/input`)]
    .map((entry) => entry.name.replace(/\.json$/, ""))
    .sort();
}

Deno.test(
  "canonicalJson produces the exact bytes of every JCS reference output",
  needsVectors(),
  () => {
    const names = vectorNames();
    assert.deepEqual(names, ["arrays", "french", "structures", "unicode", "values", "weird"]);
    for (const name of names) {
      const input = readVectorBytes(`jcs/input/${name}.json`);
      const expected = readVectorBytes(`jcs/output/${name}.json`);
      const expectedHex = new TextDecoder().decode(readVectorBytes(`jcs/outhex/${name}.txt`))
        .replace(/\s+/g, "");
      assert.equal(hex.encode(expected), expectedHex, `${name}: output and outhex agree`);
      for (const value of [parseStrictJson(input), JSON.parse(new TextDecoder().decode(input))]) {
        const bytes = canonicalBytes(value);
        assert.deepEqual(bytes, expected, name);
        assert.deepEqual(canonicalBytesOfParsed(value), expected, name);
        assert.equal(hex.encode(bytes), expectedHex, name);
        assert.deepEqual(new TextEncoder().encode(canonicalJson(value)), expected, name);
      }
    }
  },
);

Deno.test(
  "canonicalJson writes numbers as the ES6 reference file does (10,000 doubles)",
  needsVectors(),
  () => {
    const text = new TextDecoder().decode(readVectorBytes("jcs/numbers/es6testfile10k.txt"));
    const lines = text.split("\n").filter((line) => line !== "");
    assert.equal(lines.length, 10_000);
    const view = new DataView(new ArrayBuffer(8));
    let checked = 0;
    for (const line of lines) {
      const [bits, expected] = line.split(",");
      view.setBigUint64(0, BigInt(`0x${bits}`));
      const value = view.getFloat64(0);
      assert.equal(canonicalJson(value), expected, `bits ${bits}`);
      assert.equal(canonicalJson([value]), `[${expected}]`, `bits ${bits}`);
      checked++;
    }
    assert.equal(checked, 10_000);
  },
);

Deno.test("canonicalJson sorts members by UTF-16 code units at every level and drops white space", () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [true, null], c: "x" }, "€": 0, "\u{1f602}": 1, "\ufb33": 2 }),
    '{"a":{"c":"x","d":[true,null]},"b":1,"€":0,"\u{1f602}":1,"\ufb33":2}',
  );
  assert.equal(canonicalJson(-0), "0");
  assert.equal(canonicalJson(1e21), "1e+21");
  assert.equal(canonicalJson('\u0000\u001f\u007f"\\/'), '"\\u0000\\u001f\u007f\\"\\\\/"');
});

Deno.test("canonicalJson keeps a __proto__ member read from JSON", () => {
  const value = parseStrictJson(new TextEncoder().encode('{"z":1,"__proto__":{"b":2,"a":1}}'));
  assert.equal(canonicalJson(value), '{"__proto__":{"a":1,"b":2},"z":1}');
});

Deno.test("canonicalBytes is the UTF-8 of canonicalJson", () => {
  const value = { é: ["😂", "€"] };
  assert.deepEqual(canonicalBytes(value), new TextEncoder().encode(canonicalJson(value)));
  assert.deepEqual(
    [...canonicalBytes("é")],
    [0x22, 0xc3, 0xa9, 0x22],
  );
});

Deno.test("canonicalJson throws TypeError for non-finite numbers anywhere", () => {
  for (const n of [NaN, Infinity, -Infinity]) {
    assert.throws(() => canonicalJson(n), TypeError);
    assert.throws(() => canonicalJson([1, n]), TypeError);
    assert.throws(() => canonicalJson({ a: { b: n } }), TypeError);
    assert.throws(() => canonicalBytes({ a: n }), TypeError);
  }
});

Deno.test("canonicalJson throws TypeError for values JSON cannot represent", () => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const rejected: unknown[] = [
    undefined,
    [undefined],
    { a: undefined },
    () => 1,
    { f: () => 1 },
    10n,
    { n: 10n },
    Symbol("s"),
    { [Symbol("s")]: 1 },
    "\ud800",
    { "\udc00": 1 },
    new Date(0),
    new Map(),
    new Uint8Array(2),
    new Number(1),
    // deno-lint-ignore no-sparse-arrays
    [1, , 3],
    cyclic,
    [[cyclic]],
  ];
  for (const value of rejected) {
    assert.throws(() => canonicalJson(value), TypeError, String(typeof value));
  }
});

Deno.test("canonicalJson accepts a shared subvalue and very deep values", () => {
  const shared = { x: 1 };
  assert.equal(
    canonicalJson({ a: shared, b: [shared, shared] }),
    '{"a":{"x":1},"b":[{"x":1},{"x":1}]}',
  );
  assert.equal(canonicalJson(Object.assign(Object.create(null), { b: 2, a: 1 })), '{"a":1,"b":2}');
  let deep: unknown = 0;
  for (let i = 0; i < 10_000; i++) deep = [deep];
  assert.equal(canonicalJson(deep).length, 20_001);
  assert.equal(canonicalJson(deep), canonicalize(deep));
  let deepObject: unknown = 0;
  for (let i = 0; i < 10_000; i++) deepObject = { [`k${i % 3}`]: deepObject, a: i };
  assert.equal(canonicalJson(deepObject), canonicalize(deepObject));
});

Deno.test("canonicalJson writes what the canonicalize package writes, for any JSON value", () => {
  fc.assert(
    fc.property(
      // Any JSON value with strings of any code points, and objects whose member names mix
      // characters outside the BMP with BMP ones above the surrogates (UTF-16 order differs
      // from code point order there), as many as 40 (small objects are sorted another way).
      fc.jsonValue({ maxDepth: 6, stringUnit: "binary" }),
      fc.dictionary(
        fc.string({
          unit: fc.constantFrom("a", "z", "\ue000", "\uffff", "\u{10000}", "\u{1f602}"),
        }),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 40 },
      ),
      (value, object) => {
        assert.equal(canonicalJson(value), canonicalize(value));
        assert.equal(canonicalJson(object), canonicalize(object));
      },
    ),
    { numRuns: 2_000 },
  );
});

Deno.test("canonicalBytesOfParsed writes what canonicalBytes writes for every strict-parsed value", () => {
  const utf8 = new TextEncoder();
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
      // As the service gets it: the strict reader's value of the JSON text.
      const parsed = parseStrictJson(utf8.encode(JSON.stringify(value)));
      assert.deepEqual(canonicalBytesOfParsed(parsed), canonicalBytes(parsed));
      assert.deepEqual(canonicalBytesOfParsed(parsed), utf8.encode(canonicalize(parsed)));
    }),
    { numRuns: 2_000 },
  );
  for (const text of ['{"__proto__":1,"b":[-0,1e21,{}],"a":"\\u2028\\ud83d\\ude00"}', "[]", "-0"]) {
    const parsed = parseStrictJson(utf8.encode(text));
    assert.deepEqual(canonicalBytesOfParsed(parsed), canonicalBytes(parsed), text);
  }
});

Deno.test("canonicalBytesWithin: the value's bytes, and its inner object's within them", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (outer, inner) => {
      const inside = { inner, more: [inner] };
      const value = { b: inside, a: outer, c: [outer, { deeper: inside }] };
      const { bytes, inner: found } = canonicalBytesWithin(value, inside);
      assert.deepEqual(bytes, canonicalBytesOfParsed(value));
      assert.deepEqual(found, canonicalBytesOfParsed(inside));
      // The value itself.
      const whole = canonicalBytesWithin(inside, inside);
      assert.deepEqual(whole.inner, whole.bytes);
      assert.deepEqual(whole.bytes, canonicalBytesOfParsed(inside));
      // An object the value does not hold.
      assert.equal(canonicalBytesWithin(value, {}).inner, null);
    }),
  );
});

Deno.test("canonicalViewOfParsed copies a known object's bytes as given", () => {
  const inner = { y: 2, x: 1 };
  const seven = new TextEncoder().encode("7");
  const view = canonicalViewOfParsed({ b: inner, a: 0 }, new Map([[inner, seven]]));
  assert.equal(new TextDecoder().decode(view), `{"a":0,"b":7}`);
  const root = canonicalViewOfParsed(inner, new Map([[inner, seven]]));
  assert.equal(new TextDecoder().decode(root), "7");
});

Deno.test("the writer's buffer grows for a long text, is reused, and a view holds until the next write", () => {
  const long = 'é\u2028"x'.repeat(300_000) + "a".repeat(1_500_000);
  const value = { z: [long, { "\u00e9": 1.5e-7, "a\u0000": true }], a: null };
  const utf8 = new TextEncoder();
  const expected = utf8.encode(canonicalize(value)!);
  assert.deepEqual(canonicalBytesOfParsed(value), expected);
  assert.deepEqual(canonicalBytes(value), expected);
  assert.equal(canonicalJson(value), canonicalize(value));
  // Known bytes copied in place: the whole text in one view.
  const inner = value.z[1] as object;
  const view = canonicalViewOfParsed(value, new Map([[inner, canonicalBytesOfParsed(inner)]]));
  assert.deepEqual(view.slice(), expected);
  assert.deepEqual(canonicalBytesWithin(value, inner).bytes, expected);
  // Small texts after a large one.
  assert.equal(
    new TextDecoder().decode(canonicalBytesOfParsed({ b: 1, a: "\u00fc" })),
    `{"a":"ü","b":1}`,
  );
  const small = canonicalViewOfParsed({ y: [1, 2] }, new Map());
  assert.equal(new TextDecoder().decode(small), `{"y":[1,2]}`);
});

Deno.test("a getter that writes JCS while a text is being written leaves that text whole", () => {
  let inner = "";
  const value = {
    b: 2,
    get a() {
      inner = canonicalJson({ z: [1, "two"], y: null });
      return "x";
    },
  };
  assert.equal(canonicalJson(value), `{"a":"x","b":2}`);
  assert.equal(inner, `{"y":null,"z":[1,"two"]}`);
  assert.deepEqual(
    canonicalBytesOfParsed({ c: [value] }),
    new TextEncoder().encode(`{"c":[{"a":"x","b":2}]}`),
  );
});

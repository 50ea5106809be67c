/**
 * `parseAuthenticatorData`: assertion authenticator data read by its flags
 * (docs/interface.md §4): 37 bytes, or with ED one CBOR map that ends the data; never AT.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { type CBORType, encodeCBOR } from "@levischuck/tiny-cbor";
import {
  AuthenticatorDataError,
  parseAuthenticatorData,
} from "../../src/domain/authenticator_data.ts";

const UP_UV = 0x05;
const AT = 0x40;
const ED = 0x80;
const encoder = new TextEncoder();

/** 37 bytes (rpIdHash 0x11…, the flags, signCount 7) followed by `tail`. */
function authData(flags: number, tail: ArrayLike<number> = []): Uint8Array {
  const data = new Uint8Array(37 + tail.length).fill(0x11, 0, 32);
  data[32] = flags;
  new DataView(data.buffer).setUint32(33, 7);
  data.set(tail, 37);
  return data;
}

/** CBOR text string header and bytes (short strings only). */
function text(value: string): number[] {
  const bytes = encoder.encode(value);
  assert.ok(bytes.length < 24);
  return [0x60 | bytes.length, ...bytes];
}

/** `{"credProtect": 2}`, as authenticators emit it. */
const CRED_PROTECT = [0xa1, ...text("credProtect"), 0x02];

function assertRefused(data: Uint8Array, reason: RegExp): void {
  let caught: unknown;
  try {
    parseAuthenticatorData(data);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof AuthenticatorDataError, `expected a refusal, got ${caught}`);
  assert.match(caught.message, reason);
}

Deno.test("parseAuthenticatorData reads 37 bytes without AT or ED", () => {
  const parsed = parseAuthenticatorData(authData(UP_UV));
  assert.deepEqual(parsed.rpIdHash, new Uint8Array(32).fill(0x11));
  assert.equal(parsed.flags, UP_UV);
  assert.equal(parsed.signCount, 7);
  assert.equal(parsed.extensions, undefined);
});

Deno.test("parseAuthenticatorData reads data that is a view into a larger buffer", () => {
  const whole = Uint8Array.of(0xee, 0xee, ...authData(UP_UV | ED, CRED_PROTECT), 0xee);
  const parsed = parseAuthenticatorData(whole.subarray(2, whole.length - 1));
  assert.equal(parsed.signCount, 7);
  assert.deepEqual(parsed.extensions, new Map([["credProtect", 2]]));
});

Deno.test("parseAuthenticatorData refuses fewer than 37 bytes", () => {
  for (const length of [0, 1, 32, 36]) {
    assertRefused(authData(UP_UV).subarray(0, length), /shorter than 37 bytes/);
  }
});

Deno.test("parseAuthenticatorData refuses bytes after the 37 when ED is not set", () => {
  for (const tail of [[0x00], [0xa0], new Array(100).fill(0x42)]) {
    assertRefused(authData(UP_UV, tail), /longer than 37 bytes without the extension data flag/);
  }
});

Deno.test("parseAuthenticatorData refuses the attested credential data flag", () => {
  for (const data of [authData(UP_UV | AT), authData(UP_UV | AT, new Array(100).fill(0))]) {
    assertRefused(data, /attested credential data flag \(0x40\)/);
  }
  assertRefused(authData(UP_UV | AT | ED, CRED_PROTECT), /attested credential data flag/);
});

Deno.test("parseAuthenticatorData reads the extensions map when ED is set", () => {
  const cases: [number[], Map<string, CBORType>][] = [
    [[0xa0], new Map()],
    [CRED_PROTECT, new Map([["credProtect", 2]])],
    [
      [0xa2, ...text("credBlob"), 0xf5, ...text("hmac-secret"), 0x42, 0x01, 0x02],
      new Map<string, CBORType>([["credBlob", true], ["hmac-secret", Uint8Array.of(1, 2)]]),
    ],
  ];
  for (const [tail, extensions] of cases) {
    const parsed = parseAuthenticatorData(authData(UP_UV | ED, tail));
    assert.equal(parsed.flags, UP_UV | ED);
    assert.deepEqual(parsed.extensions, extensions);
  }
});

Deno.test("parseAuthenticatorData refuses ED without extensions", () => {
  assertRefused(authData(UP_UV | ED), /extension data flag \(0x80\) but no extensions/);
});

Deno.test("parseAuthenticatorData refuses bytes after the extensions map", () => {
  for (const extra of [[0x00], [0xa0], CRED_PROTECT, new Array(100).fill(0x42)]) {
    assertRefused(authData(UP_UV | ED, [...CRED_PROTECT, ...extra]), /bytes after the extensions/);
  }
  assertRefused(authData(UP_UV | ED, [0xa0, 0xa0]), /bytes after the extensions/);
});

Deno.test("parseAuthenticatorData refuses extensions that are not a map", () => {
  for (
    const tail of [
      [0x80], // []
      [0x01],
      [0x60], // ""
      [0x40], // h''
      [0xf6], // null
      [0xc1, 0xa0], // a tagged map
      [0x82, 0xa0, 0xa0],
    ]
  ) {
    assertRefused(authData(UP_UV | ED, tail), /extensions are not a CBOR map/);
  }
});

Deno.test("parseAuthenticatorData refuses a malformed extensions map", () => {
  const cases: [string, number[]][] = [
    ["a map cut short", [0xa2, ...text("credProtect"), 0x02]],
    ["a key without its value", [0xa1, ...text("credProtect")]],
    ["a byte string longer than the data", [0xa1, ...text("x"), 0x5a, 0x00, 0x01, 0x00, 0x00]],
    ["a text string longer than the data", [0xa1, ...text("x"), 0x78, 0x30, 0x61]],
    ["an indefinite-length map", [0xbf, ...text("x"), 0x01, 0xff]],
    ["a duplicate identifier", [0xa2, ...text("x"), 0x01, ...text("x"), 0x02]],
    ["a length not in its shortest form", [0xa1, 0x78, 0x01, 0x78, 0x01]],
    ["a reserved additional information", [0xa1, ...text("x"), 0x1c]],
    ["a lone break code", [0xff]],
  ];
  for (const [name, tail] of cases) {
    let caught: unknown;
    try {
      parseAuthenticatorData(authData(UP_UV | ED, tail));
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof AuthenticatorDataError, `${name}: ${caught}`);
    assert.match(caught.message, /not well-formed CBOR/, name);
  }
});

Deno.test("parseAuthenticatorData refuses extension identifiers that are not text", () => {
  assertRefused(
    authData(UP_UV | ED, [0xa1, 0x01, 0x02]),
    /identifier that is not a text string/,
  );
});

Deno.test("parseAuthenticatorData survives nesting deep enough to exhaust the stack", () => {
  for (const depth of [100, 10_000, 45_000]) {
    const tail = [0xa1, ...text("x"), ...new Array(depth).fill(0x81), 0x00];
    try {
      const parsed = parseAuthenticatorData(authData(UP_UV | ED, tail));
      assert.equal(parsed.extensions?.size, 1);
    } catch (error) {
      assert.ok(error instanceof AuthenticatorDataError, `depth ${depth}: ${error}`);
    }
  }
});

Deno.test("parseAuthenticatorData reads any encoded map, and refuses it with anything after", () => {
  const values: fc.Arbitrary<CBORType> = fc.oneof(
    fc.boolean(),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
    fc.string({ maxLength: 40 }),
    fc.uint8Array({ maxLength: 40 }),
    fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 5 }),
  );
  const maps = fc.uniqueArray(fc.tuple(fc.string({ maxLength: 20 }), values), {
    maxLength: 6,
    selector: ([key]) => key,
  }).map((entries) => new Map<string, CBORType>(entries));
  fc.assert(
    fc.property(maps, fc.uint8Array({ minLength: 1, maxLength: 16 }), (map, extra) => {
      const encoded = encodeCBOR(map);
      assert.deepEqual(parseAuthenticatorData(authData(UP_UV | ED, encoded)).extensions, map);
      assert.throws(
        () => parseAuthenticatorData(authData(UP_UV | ED, [...encoded, ...extra])),
        AuthenticatorDataError,
      );
      assert.throws(() => parseAuthenticatorData(authData(UP_UV, encoded)), AuthenticatorDataError);
    }),
    { numRuns: 300 },
  );
});

Deno.test("parseAuthenticatorData throws nothing but AuthenticatorDataError on random tails", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 64 }), (f, tail) => {
      try {
        parseAuthenticatorData(authData(f, tail));
      } catch (error) {
        assert.ok(error instanceof AuthenticatorDataError, String(error));
      }
    }),
    { numRuns: 2000 },
  );
});

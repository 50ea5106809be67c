/**
 * The strict JSON reader against JSON.parse on random input: values, objects
 * whose names are escaped, and repeated names in nested objects.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { parseStrictJson } from "../../src/domain/strict_json.ts";
import { assertRejected, utf8 } from "../support/strict_json.ts";

Deno.test("parseStrictJson agrees with JSON.parse on random JSON values", () => {
  // Every number JSON.stringify writes is accepted, large integers included.
  const values = fc.oneof(
    fc.jsonValue({ maxDepth: 6 }),
    fc.jsonValue({ maxDepth: 6, stringUnit: "binary" }),
  );
  fc.assert(
    fc.property(values, fc.boolean(), (value, pretty) => {
      const text = pretty ? JSON.stringify(value, null, "\t") : JSON.stringify(value);
      assert.deepStrictEqual(parseStrictJson(utf8(text)), JSON.parse(text));
    }),
    { numRuns: 300 },
  );
});

/** A member name written with every UTF-16 unit as a `\u` escape. */
function escapeAll(name: string): string {
  return Array.from(
    { length: name.length },
    (_, k) => "\\u" + name.charCodeAt(k).toString(16).padStart(4, "0"),
  ).join("");
}

Deno.test("parseStrictJson agrees with JSON.parse on random objects whose names are escaped", () => {
  // Escaping every name exercises unescaping in the duplicate check; up to 40 names, both ways
  // the scan keeps them (a list while short, then a set).
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ unit: "binary" }), fc.integer(), { maxKeys: 40 }),
      (record) => {
        const text = "{" +
          Object.entries(record).map(([k, v]) => `"${escapeAll(k)}":${v}`).join(",") + "}";
        assert.deepStrictEqual(parseStrictJson(utf8(text)), JSON.parse(text));
        if (Object.keys(record).length > 0) {
          const [name] = Object.keys(record);
          const repeated = text.slice(0, -1) + `,${JSON.stringify(name)}:0}`;
          assertRejected(repeated, /duplicate member name/);
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("parseStrictJson finds a repeated name among plain and escaped ones, in nested objects", () => {
  // Names written plain or escaped, in an object nested between its parent's members, a repeat
  // put anywhere: short objects of plain names are compared as ranges of the text, others as
  // strings; the parent's names are checked again after the child closes.
  const member = fc.tuple(fc.string({ unit: "binary", maxLength: 4 }), fc.boolean());
  const write = ([name, escaped]: [string, boolean]) =>
    `${escaped && name !== "" ? `"${escapeAll(name)}"` : JSON.stringify(name)}:0`;
  fc.assert(
    fc.property(
      fc.uniqueArray(member, { selector: ([name]) => name, maxLength: 24 }),
      fc.uniqueArray(member, { selector: ([name]) => name, minLength: 1, maxLength: 20 }),
      fc.nat(),
      fc.nat(),
      fc.boolean(),
      fc.option(fc.tuple(fc.boolean(), fc.nat(), fc.nat(), fc.boolean())),
      (childMembers, parentMembers, splitAt, childAt, childFirst, repeat) => {
        const child = childMembers.map(write);
        const parent = parentMembers.map(write);
        if (repeat) {
          // A repeat of a name already there, in the child or in the parent.
          const [inChild, which, where, escaped] = repeat;
          const names = inChild ? childMembers : parentMembers;
          const list = inChild ? child : parent;
          if (names.length > 0) {
            const [name] = names[which % names.length];
            list.splice(where % (list.length + 1), 0, write([name, escaped]));
          }
        }
        const split = splitAt % (parent.length + 1);
        const childText = `{${child.join(",")}}`;
        const nested = childFirst ? `[${childText}]` : childText;
        const text = `{${
          [...parent.slice(0, split), `"child${childAt}":${nested}`, ...parent.slice(split)]
            .join(",")
        }}`;
        const childRepeats = new Set(child.map((m) => JSON.parse(m.slice(0, m.lastIndexOf(":")))))
          .size < child.length;
        const parentNames = parent.map((m) => JSON.parse(m.slice(0, m.lastIndexOf(":"))));
        const parentRepeats = new Set([...parentNames, `child${childAt}`]).size <
          parentNames.length + 1;
        if (childRepeats || parentRepeats) assertRejected(text, /duplicate member name/);
        else assert.deepStrictEqual(parseStrictJson(utf8(text)), JSON.parse(text));
      },
    ),
    { numRuns: 500 },
  );
});

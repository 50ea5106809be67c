/**
 * Strict JSON reading and JCS on request-sized bodies.
 *
 * `parseStrictJson` validates with a scan and then builds the value with
 * `JSON.parse`. The `building` variant below is the alternative it was
 * measured against: the same checks, building the values in JavaScript in
 * the same pass. It lives here only for the comparison, and is checked
 * against `parseStrictJson` on the bench inputs before anything is timed.
 *
 * Run: `deno bench -A bench/json_bench.ts`
 */

import { deepStrictEqual } from "node:assert/strict";
import { parseStrictJson } from "../src/domain/strict_json.ts";
import { canonicalJson } from "@intents/protocol/jcs";

const utf8 = new TextEncoder();

/** A typical Variant B submission: Ed25519 authorship and a few attribute fields. */
const typicalIntent = {
  authorship: {
    Signed: {
      Ed25519: {
        pub_key: "8Rj5Zbq1cYwZxBf7vJpV1L2G3k4mN5oP6qR7sT8uV9wX",
        signature:
          "3yZe7dUq8KXr6hJbP2cN4mVtR9sW1aE5gF7hJ3kL6nP8qS2tU4vX6yZ9bC1dE3fG5hJ7kL9mN2pQ4rS6tU8vW1xY3zA5",
      },
    },
  },
  intent: {
    id: "3f2b8c1e-9d4a-4e6b-8f7c-2a1d5e9b0c3f",
    policy_id: "5Hq2W8yJ3mN6pR9tV1xZ4bD7fG2jK5nQ8sU1wY4aC7eF",
    attrs: {
      fields: {
        amount: 1250.75,
        currency: "EUR",
        recipient: "DE89 3704 0044 0532 0130 00",
        reference: "Invoice 2024-0117 — Müller & Söhne",
        due: "2025-03-31T23:59:59Z",
        priority: 2,
        tags: ["monthly", "utilities", "approved"],
        notify: true,
      },
    },
  },
};

/** About 32 KiB of attribute fields: strings (some escaped, some non-ASCII), numbers, nesting. */
function largeIntent(): unknown {
  const fields: Record<string, unknown> = {};
  for (let i = 0; fields && JSON.stringify(fields).length < 31_500; i++) {
    fields[`field_${i}`] = i % 4 === 0
      ? { label: `Zeile ${i} — Größe`, values: [i, i * 0.5, -i, i * 1e10], ok: i % 3 === 0 }
      : i % 4 === 1
      ? `line ${i}\twith "quotes" and \\ backslash € 😂`
      : i % 4 === 2
      ? [null, true, false, 123456789, 0.000123, "x"]
      : i * 1.000001;
  }
  return { ...typicalIntent, intent: { ...typicalIntent.intent, attrs: { fields } } };
}

const typicalBytes = utf8.encode(JSON.stringify(typicalIntent));
const largeBytes = utf8.encode(JSON.stringify(largeIntent()));
const typicalText = new TextDecoder().decode(typicalBytes);
const largeText = new TextDecoder().decode(largeBytes);
const typicalValue = parseStrictJson(typicalBytes);

console.log(`typical body: ${typicalBytes.length} bytes; large body: ${largeBytes.length} bytes`);

// ---------------------------------------------------------------------------
// The alternative: one pass that checks and builds.

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

type Frame = {
  container: unknown[] | Record<string, unknown>;
  names: Set<string> | null;
  key: string;
};

function fail(i: number, reason: string): never {
  throw new SyntaxError(`Cannot parse JSON at index ${i}: ${reason}`);
}

/** Parses strict JSON, building values as it scans (same rules as parseStrictJson). */
function parseByBuilding(bytes: Uint8Array, maxDepth = 32): unknown {
  const text = decoder.decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) fail(0, "byte order mark is not allowed");
  const stack: Frame[] = [];
  let i = ws(text, 0);
  let value: unknown;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= maxDepth) fail(i, "nesting too deep");
      i = ws(text, i + 1);
      if (c === 0x7b) {
        if (text.charCodeAt(i) === 0x7d) {
          value = {};
          i++;
        } else {
          const frame: Frame = { container: {}, names: new Set(), key: "" };
          i = memberName(text, i, frame);
          stack.push(frame);
          continue;
        }
      } else if (text.charCodeAt(i) === 0x5d) {
        value = [];
        i++;
      } else {
        stack.push({ container: [], names: null, key: "" });
        continue;
      }
    } else if (c === 0x22) {
      const end = stringEnd(text, i);
      value = escaped ? JSON.parse(text.slice(i, end)) : text.slice(i + 1, end - 1);
      i = end;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(text, i);
      value = Number(text.slice(i, end));
      i = end;
    } else if (text.startsWith("true", i)) {
      value = true;
      i += 4;
    } else if (text.startsWith("false", i)) {
      value = false;
      i += 5;
    } else if (text.startsWith("null", i)) {
      value = null;
      i += 4;
    } else fail(i, "expected a JSON value");

    for (;;) {
      i = ws(text, i);
      const frame = stack[stack.length - 1];
      if (frame === undefined) {
        if (i < text.length) fail(i, "unexpected data after the JSON value");
        return value;
      }
      if (frame.names === null) (frame.container as unknown[]).push(value);
      else if (frame.key === "__proto__") {
        Object.defineProperty(frame.container, frame.key, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else (frame.container as Record<string, unknown>)[frame.key] = value;
      const d = text.charCodeAt(i);
      if (d === 0x2c) {
        i = ws(text, i + 1);
        if (frame.names !== null) i = memberName(text, i, frame);
        break;
      }
      if (d === (frame.names === null ? 0x5d : 0x7d)) {
        stack.pop();
        value = frame.container;
        i++;
        continue;
      }
      fail(i, "expected ',' or a closing bracket");
    }
  }
}

function memberName(text: string, i: number, frame: Frame): number {
  if (text.charCodeAt(i) !== 0x22) fail(i, "expected a member name");
  const end = stringEnd(text, i);
  const name = escaped ? JSON.parse(text.slice(i, end)) : text.slice(i + 1, end - 1);
  if (frame.names!.has(name)) fail(i, "duplicate member name");
  frame.names!.add(name);
  frame.key = name;
  i = ws(text, end);
  if (text.charCodeAt(i) !== 0x3a) fail(i, "expected ':'");
  return ws(text, i + 1);
}

let escaped = false;

function stringEnd(text: string, i: number): number {
  escaped = false;
  for (i++;;) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c === 0x5c) {
      escaped = true;
      const e = text.charCodeAt(i + 1);
      if (e !== 0x75) {
        if ('"\\/bfnrt'.indexOf(text[i + 1]) < 0 || i + 1 >= text.length) fail(i, "bad escape");
        i += 2;
        continue;
      }
      const unit = parseInt(text.slice(i + 2, i + 6), 16);
      if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i, "bad \\u escape");
      if (unit >= 0xdc00 && unit <= 0xdfff) fail(i, "lone surrogate");
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = text.slice(i + 6, i + 12);
        if (!/^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low)) fail(i, "lone surrogate");
        i += 12;
      } else i += 6;
    } else if (c >= 0x20) i++;
    else fail(i, "control character or end of input in string");
  }
}

function numberEnd(text: string, i: number): number {
  const match = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  match.lastIndex = i;
  const m = match.exec(text);
  if (m === null) fail(i, "invalid number");
  const n = Number(m[0]);
  if (m[1] === undefined && m[2] === undefined) {
    if (Math.abs(n) > Number.MAX_SAFE_INTEGER) fail(i, "unsafe integer");
  } else if (!Number.isFinite(n)) fail(i, "overflow");
  return match.lastIndex;
}

function ws(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

// The comparison is only fair if both give the same values.
deepStrictEqual(parseByBuilding(typicalBytes), parseStrictJson(typicalBytes));
deepStrictEqual(parseByBuilding(largeBytes), parseStrictJson(largeBytes));

// ---------------------------------------------------------------------------

Deno.bench({
  name: "typical intent: parseStrictJson",
  group: "typical",
  baseline: true,
  fn: () => {
    parseStrictJson(typicalBytes);
  },
});
Deno.bench({
  name: "typical intent: decode + JSON.parse (no strict checks)",
  group: "typical",
  fn: () => {
    JSON.parse(new TextDecoder().decode(typicalBytes));
  },
});
Deno.bench({
  name: "typical intent: JSON.parse of a string",
  group: "typical",
  fn: () => {
    JSON.parse(typicalText);
  },
});
Deno.bench({
  name: "typical intent: strict, building values in JS",
  group: "typical",
  fn: () => {
    parseByBuilding(typicalBytes);
  },
});

Deno.bench({
  name: "32 KiB body: parseStrictJson",
  group: "large",
  baseline: true,
  fn: () => {
    parseStrictJson(largeBytes);
  },
});
Deno.bench({
  name: "32 KiB body: decode + JSON.parse (no strict checks)",
  group: "large",
  fn: () => {
    JSON.parse(new TextDecoder().decode(largeBytes));
  },
});
Deno.bench({
  name: "32 KiB body: JSON.parse of a string",
  group: "large",
  fn: () => {
    JSON.parse(largeText);
  },
});
Deno.bench({
  name: "32 KiB body: strict, building values in JS",
  group: "large",
  fn: () => {
    parseByBuilding(largeBytes);
  },
});

Deno.bench({
  name: "typical intent: canonicalJson",
  group: "jcs",
  baseline: true,
  fn: () => {
    canonicalJson((typicalValue as { intent: unknown }).intent);
  },
});
Deno.bench({
  name: "typical intent: JSON.stringify (for scale)",
  group: "jcs",
  fn: () => {
    JSON.stringify((typicalValue as { intent: unknown }).intent);
  },
});

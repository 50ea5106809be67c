/**
 * Hostile request bodies for `POST /intents` and the checks every answer must
 * pass, shared by the bounded end-to-end test (`tests/e2e/hostile_test.ts`)
 * and the long fuzz run (`tests/fuzz/fuzz.ts`).
 *
 * A case starts from a genuinely valid body (every variant and signature
 * kind, signed with `client/mod.ts` and the software passkey), then applies
 * tree mutations (deleted members, swapped types, huge strings, edge
 * numbers, deep nesting, duplicate members, lone surrogates, `__proto__` and
 * friends at any level) and at most one byte mutation (truncation, invalid
 * UTF-8, a flipped byte). An oracle that does not share code with the server
 * decides whether the result can still be valid; when it cannot, the server
 * must refuse it.
 * @module
 */

import fc from "fast-check";
import canonicalize from "canonicalize";
import type { VariantABody, VariantBBody } from "../../client/mod.ts";
import { type Seed, seedArb } from "./valid_bodies.ts";

// ---------------------------------------------------------------------------
// A JSON tree that can hold what JavaScript values cannot: duplicate members
// and raw literal text such as `1e400`.

/** An object node: its members in order, duplicates allowed. */
export class Obj {
  constructor(readonly entries: [string, Node][]) {}
}

/** Raw JSON text put into the body as is (maybe not valid JSON). */
class Raw {
  /**
   * @param text the literal text.
   * @param refused whether the contract refuses this text wherever it stands.
   * @param depth how deeply the text nests containers.
   */
  constructor(readonly text: string, readonly refused = false, readonly depth = 0) {}
}

type Node = null | boolean | number | string | Node[] | Obj | Raw;

function toTree(value: unknown): Node {
  if (Array.isArray(value)) return value.map(toTree);
  if (typeof value === "object" && value !== null) {
    return new Obj(Object.entries(value).map(([k, v]) => [k, toTree(v)]));
  }
  return value as Node;
}

/**
 * A deep copy of `node`. Mutations insert copies, so a tree never holds one
 * node twice: the constants of the arbitraries (an empty object, an empty
 * array) and values fast-check replays while shrinking stay as generated, and
 * no "add" can put an object inside itself.
 */
function copyOf(node: Node): Node {
  if (node instanceof Obj) return new Obj(node.entries.map(([k, v]) => [k, copyOf(v)]));
  if (Array.isArray(node)) return node.map(copyOf);
  return node;
}

function render(node: Node): string {
  if (node instanceof Raw) return node.text;
  if (node instanceof Obj) {
    return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`).join(",")}}`;
  }
  if (Array.isArray(node)) return `[${node.map(render).join(",")}]`;
  return JSON.stringify(node);
}

/** A place in the tree: a container and the index of one of its children. */
interface Slot {
  parent: Obj | Node[];
  index: number;
}

/** Every object node (the root included), in document order. */
function objects(root: Node, out: Obj[] = []): Obj[] {
  if (root instanceof Obj) {
    out.push(root);
    for (const [, v] of root.entries) objects(v, out);
  } else if (Array.isArray(root)) {
    for (const v of root) objects(v, out);
  }
  return out;
}

/** Every child slot in the tree, in document order. */
function slots(root: Node, out: Slot[] = []): Slot[] {
  if (root instanceof Obj) {
    root.entries.forEach(([, v], index) => {
      out.push({ parent: root, index });
      slots(v, out);
    });
  } else if (Array.isArray(root)) {
    root.forEach((v, index) => {
      out.push({ parent: root, index });
      slots(v, out);
    });
  }
  return out;
}

function setSlot(slot: Slot, value: Node): void {
  if (slot.parent instanceof Obj) slot.parent.entries[slot.index][1] = value;
  else slot.parent[slot.index] = value;
}

function deleteSlot(slot: Slot): void {
  if (slot.parent instanceof Obj) slot.parent.entries.splice(slot.index, 1);
  else slot.parent.splice(slot.index, 1);
}

// ---------------------------------------------------------------------------
// Mutations.

/** Member names that are special to JavaScript objects. */
export const SPECIAL_NAMES = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "__defineGetter__",
  "isPrototypeOf",
];

/**
 * Number literals at the edges, with whether the contract accepts them:
 * an integer literal outside ±(2^53−1) only when it is how JCS writes the
 * double it parses to; literals with a fraction or an exponent are doubles,
 * refused only when they overflow to infinity.
 */
const EDGE_NUMBERS: [string, boolean][] = [
  ["9007199254740991", true],
  ["-9007199254740991", true],
  ["9007199254740992", true],
  ["-9007199254740992", true],
  ["9007199254740993", false],
  ["-9007199254740993", false],
  ["100000000000000000000", true],
  ["123456789012345680000", true],
  ["18446744073709551615", false],
  ["1000000000000000000000", false],
  ["123456789012345678901234567890", false],
  ["1e400", false],
  ["-1e400", false],
  ["1E+400", false],
  ["1.0e309", false],
  ["1.7976931348623157e308", true],
  ["1e+21", true],
  ["1e-400", true],
  ["5e-324", true],
  ["-0", true],
  ["0.0", true],
  ["0e0", true],
  ["9007199254740993.0", true],
];

/** Nested arrays or objects `depth` levels deep, as raw text. */
function deepNesting(depth: number, shape: "array" | "object" | "open"): string {
  if (shape === "array") return "[".repeat(depth) + "]".repeat(depth);
  if (shape === "object") return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  return "[".repeat(depth);
}

function replacementArb(marker: string): fc.Arbitrary<Node> {
  return fc.oneof(
    // Swapped types.
    fc.constantFrom<Node>(null, true, false, 0, -1, 1.5, "", [], new Obj([])),
    fc.jsonValue({ maxDepth: 3 }).map(toTree),
    // Huge strings, some past the body limit.
    fc.integer({ min: 1_000, max: 70_000 }).map((n) => "x".repeat(n)),
    fc.constant(marker),
    // Numbers at the edges.
    fc.constantFrom(...EDGE_NUMBERS).map(([text, ok]) => new Raw(text, !ok)),
    // Deep nesting, up to 100,000 levels (past 32 it must be refused).
    fc.record({
      depth: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 100_000 })),
      shape: fc.constantFrom<"array" | "object" | "open">("array", "object", "open"),
    }).map(({ depth, shape }) => new Raw(deepNesting(depth, shape), shape === "open", depth)),
    // Lone surrogates, escaped (JSON.stringify escapes them).
    fc.constantFrom<Node>("\ud800", "a\udc00", "\udbff\udbff", "x\ud83d"),
  );
}

/** One tree mutation; indices are reduced modulo the number of candidates. */
type TreeMutation =
  | { op: "delete"; at: number }
  | { op: "replace"; at: number; with: Node }
  | { op: "add"; at: number; name: string; with: Node }
  | { op: "rename"; at: number; name: string }
  | { op: "duplicate"; at: number };

/** One byte mutation of the rendered body. */
type ByteMutation =
  | { op: "none" }
  | { op: "truncate"; at: number }
  | { op: "invalid_utf8"; at: number; bytes: number[] }
  | { op: "flip"; at: number; xor: number };

/** A hostile case: a valid body's seed and what to do to it. */
export interface HostileCase {
  seed: Seed;
  tree: TreeMutation[];
  bytes: ByteMutation;
}

/** Ill-formed UTF-8 sequences (Unicode Table 3-7). */
const INVALID_UTF8 = [
  [0xff],
  [0x80],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80], // an encoded lone surrogate
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
];

/** Cases for a given marker string (which must never be echoed back). */
export function hostileCaseArb(marker: string): fc.Arbitrary<HostileCase> {
  const name = fc.oneof(fc.constantFrom(...SPECIAL_NAMES), fc.constant(marker), fc.string());
  const tree: fc.Arbitrary<TreeMutation> = fc.oneof(
    fc.record({ op: fc.constant("delete" as const), at: fc.nat() }),
    fc.record({ op: fc.constant("replace" as const), at: fc.nat(), with: replacementArb(marker) }),
    fc.record({
      op: fc.constant("add" as const),
      at: fc.nat(),
      name,
      with: replacementArb(marker),
    }),
    fc.record({ op: fc.constant("rename" as const), at: fc.nat(), name }),
    fc.record({ op: fc.constant("duplicate" as const), at: fc.nat() }),
  );
  const bytes: fc.Arbitrary<ByteMutation> = fc.oneof(
    { weight: 5, arbitrary: fc.constant({ op: "none" as const }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("invalid_utf8" as const),
        at: fc.nat(),
        bytes: fc.constantFrom(...INVALID_UTF8),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant("flip" as const),
        at: fc.nat(),
        xor: fc.integer({ min: 1, max: 255 }),
      }),
    },
  );
  return fc.record({
    seed: seedArb,
    tree: fc.array(tree, { maxLength: 3 }),
    bytes,
  });
}

/** A mutated body and what the oracle says of it. */
export interface MutatedBody {
  bytes: Uint8Array;
  /** False when the contract requires a refusal; true when it may be valid. */
  mayBeValid: boolean;
  /** True when no mutation was applied: the body must be accepted. */
  pristine: boolean;
}

/**
 * Applies a case's mutations to a valid body and judges the result.
 *
 * @param valid the valid body the case started from.
 */
export function mutate(valid: VariantABody | VariantBBody, c: HostileCase): MutatedBody {
  const root = toTree(valid);
  for (const m of c.tree) {
    if (m.op === "delete" || m.op === "replace") {
      const all = slots(root);
      if (all.length === 0) continue;
      const slot = all[m.at % all.length];
      if (m.op === "delete") deleteSlot(slot);
      else setSlot(slot, copyOf(m.with));
    } else {
      const objs = objects(root);
      const obj = objs[m.at % objs.length];
      if (m.op === "add") {
        obj.entries.push([m.name, copyOf(m.with)]);
      } else if (m.op === "rename" && obj.entries.length > 0) {
        obj.entries[m.at % obj.entries.length][0] = m.name;
      } else if (m.op === "duplicate" && obj.entries.length > 0) {
        const [key, value] = obj.entries[m.at % obj.entries.length];
        obj.entries.push([key, copyOf(value)]);
      }
    }
  }
  let refused = hasRefusedContent(root, 0);
  let bytes = new TextEncoder().encode(render(root));
  const b = c.bytes;
  if (b.op === "truncate") {
    bytes = bytes.slice(0, b.at % bytes.length);
    refused = true;
  } else if (b.op === "invalid_utf8") {
    const at = b.at % (bytes.length + 1);
    const out = new Uint8Array(bytes.length + b.bytes.length);
    out.set(bytes.subarray(0, at), 0);
    out.set(b.bytes, at);
    out.set(bytes.subarray(at), at + b.bytes.length);
    bytes = out;
    refused = true;
  } else if (b.op === "flip") {
    bytes = bytes.slice();
    bytes[b.at % bytes.length] ^= b.xor;
    // A flipped byte may undo what made the tree refused (a duplicated name made
    // distinct, "1e400" made "1e000"): only the bytes as sent can be judged.
    refused = false;
  }
  const pristine = c.tree.length === 0 && b.op === "none";
  return { bytes, pristine, mayBeValid: !refused && mayBeValid(valid, bytes) };
}

/** Names of the members of `value` when it is a plain object, else null. */
export function memberNames(value: unknown): string[] | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  return Object.keys(value).sort();
}

function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let max = 0;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v));
  return max + 1;
}

/** Whether a string holds a UTF-16 surrogate that is not part of a pair. */
function hasLoneSurrogate(s: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/**
 * True when the tree holds something the strict reader must refuse wherever
 * it stands: a duplicate member name, a lone surrogate in a name or string,
 * refused raw text, or nesting deeper than 32.
 *
 * @param depth how many containers enclose `node`.
 */
function hasRefusedContent(node: Node, depth: number): boolean {
  if (typeof node === "string") return hasLoneSurrogate(node);
  if (node instanceof Raw) return node.refused || depth + node.depth > 32;
  if (Array.isArray(node)) return node.some((v) => hasRefusedContent(v, depth + 1));
  if (node instanceof Obj) {
    const names = new Set<string>();
    for (const [name, value] of node.entries) {
      if (names.has(name) || hasLoneSurrogate(name) || hasRefusedContent(value, depth + 1)) {
        return true;
      }
      names.add(name);
    }
  }
  return false;
}

function jcs(value: unknown): string | undefined {
  try {
    return canonicalize(value);
  } catch {
    return undefined;
  }
}

/** Replaces multisig weights and threshold by 0: changing them may leave a body valid. */
function withoutWeights(signature: unknown): unknown {
  const s = signature as { Multisig?: { pub_key?: { signers?: unknown; threshold?: unknown } } };
  const pubKey = s?.Multisig?.pub_key;
  if (typeof pubKey !== "object" || pubKey === null) return signature;
  const signers = pubKey.signers;
  if (typeof signers !== "object" || signers === null || Array.isArray(signers)) return signature;
  const zeroed: Record<string, number> = {};
  for (const key of Object.keys(signers)) zeroed[key] = 0;
  return {
    ...s,
    Multisig: { ...s.Multisig, pub_key: { ...pubKey, signers: zeroed, threshold: 0 } },
  };
}

/**
 * Whether mutated bytes may still be a valid body. Conservative: true means
 * "may", false means the contract requires a refusal. Independent of the
 * server's code: plain `JSON.parse`, member sets and JCS comparisons.
 */
function mayBeValid(valid: VariantABody | VariantBBody, bytes: Uint8Array): boolean {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    return false;
  }
  try {
    if (depthOf(value) > 32) return false;
  } catch {
    return false; // deeper than the stack: far past the limit
  }
  const names = memberNames(value);
  if (names === null || names.join() !== memberNames(valid)!.join()) return false;
  const got = value as Record<string, unknown>;
  const original = valid as unknown as Record<string, unknown>;
  if ("payload" in original) {
    return jcs(got.payload) === jcs(original.payload) &&
      jcs(withoutWeights(got.signature)) === jcs(withoutWeights(original.signature));
  }
  if (original.authorship === "Unsigned") return got.authorship === "Unsigned";
  const signed = (a: unknown) => (a as { Signed?: unknown })?.Signed;
  return jcs(got.intent) === jcs(original.intent) &&
    memberNames(got.authorship)?.join() === "Signed" &&
    jcs(withoutWeights(signed(got.authorship))) ===
      jcs(withoutWeights(signed(original.authorship)));
}

// ---------------------------------------------------------------------------
// Checks on answers.

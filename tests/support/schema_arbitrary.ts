/**
 * Requests made from the JSON Schemas of the published OpenAPI document:
 * fast-check arbitraries of values a schema accepts, and, for a value, every
 * way to break one of the schema's rules. Covers the keywords the document
 * uses: `$ref`, `type`, `properties`, `required`, `additionalProperties`,
 * `propertyNames`, `const`, `enum`, `oneOf`/`anyOf`, `pattern`, `format: uuid`,
 * `minLength`/`maxLength` (code points), `not`, `minimum`/`maximum`, `items`,
 * `minItems`/`maxItems`, `minProperties`/`maxProperties`.
 *
 * Strings that mean more than their schema says (keys, signatures, handed-out
 * ids: rules the descriptions state and no schema can) come from known-good
 * samples, and so do strings whose pattern is more than one character class.
 * @module
 */

import fc from "fast-check";

// deno-lint-ignore no-explicit-any
type Json = any;

/** What the generators know besides the document. */
export interface SchemaContext {
  /** The document; locations are JSON pointers into it (`/components/schemas/Payload`). */
  doc: Json;
  /** Known-good values by the location of their schema. */
  samples: Map<string, unknown[]>;
  /** Locations whose values come only from `samples`. */
  samplesOnly: Set<string>;
  /** Whether `value` is valid against the schema at `at` (ajv). */
  valid(at: string, value: unknown): boolean;
  /** True for query parameters: every value is text, so no string can break `type`. */
  text?: boolean;
}

/** A value with one rule broken: where (as member names and indexes) and which rule. */
export interface Broken {
  /** `location: keyword`, e.g. `/components/schemas/Payload/properties/id: maxLength`. */
  rule: string;
  /** Path of the broken member in the value. */
  path: (string | number)[];
  /** Replacements for the member (undefined: delete it), tried in order. */
  candidates: unknown[];
}

/** The schema at a location. */
export function schemaAt(doc: Json, at: string): Json {
  let node = doc;
  for (const part of at.split("/").slice(1)) {
    node = node[part.replaceAll("~1", "/").replaceAll("~0", "~")];
    if (node === undefined) throw new Error(`no schema at ${at}`);
  }
  return node;
}

/** Follows `$ref`s from a location to the location of the schema that has the rules. */
export function resolve(doc: Json, at: string): string {
  let here = at;
  for (let schema = schemaAt(doc, here); schema.$ref; schema = schemaAt(doc, here)) {
    here = String(schema.$ref).replace(/^#/, "");
  }
  return here;
}

const codePoints = (s: string) => [...s].length;

/** A class-only pattern (`^[…]*$`, `^[…]+$`) tests characters one at a time. */
function charClass(pattern: string): RegExp | null {
  return /^\^\[[^\]]*\][*+]\$$/.test(pattern) ? new RegExp(pattern, "u") : null;
}

function stringArbitrary(ctx: SchemaContext, at: string, s: Json): fc.Arbitrary<string> {
  const samples = (ctx.samples.get(at) ?? []) as string[];
  if (ctx.samplesOnly.has(at)) {
    if (samples.length === 0) throw new Error(`no samples for ${at}`);
    return fc.constantFrom(...samples);
  }
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? min + 24;
  let made: fc.Arbitrary<string>;
  if (s.format === "uuid") {
    made = fc.tuple(fc.uuid(), fc.boolean()).map(([u, upper]) => upper ? u.toUpperCase() : u);
  } else {
    const cls = s.pattern === undefined ? null : charClass(s.pattern);
    if (s.pattern !== undefined && cls === null) {
      throw new Error(`${at}: pattern ${s.pattern} needs samples`);
    }
    // Code points of any plane; lengths near the bounds as often as short ones.
    const unit = fc.string({ unit: "binary", minLength: 1, maxLength: 1 })
      .filter((c) => cls === null || cls.test(c));
    const length = fc.oneof(
      fc.integer({ min, max: Math.min(max, min + 12) }),
      fc.constantFrom(min, max),
    );
    made = length.chain((n) => fc.string({ unit, minLength: n, maxLength: n }));
  }
  const not: unknown[] = s.not?.enum ?? [];
  const fresh = made.filter((x) => !not.includes(x) && codePoints(x) >= min);
  return samples.length === 0 ? fresh : fc.oneof(fc.constantFrom(...samples), fresh);
}

function integerArbitrary(s: Json): fc.Arbitrary<number> {
  const min = s.minimum ?? -1000;
  const max = s.maximum ?? 1000;
  return fc.oneof(
    fc.constantFrom(min, max),
    fc.integer({ min, max: Math.min(max, min + 50) }),
    fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number),
  );
}

/** A free-form JSON object (`additionalProperties: {}`), shallow and strict-JSON safe. */
const freeObject = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 4,
});

function objectArbitrary(ctx: SchemaContext, at: string, s: Json): fc.Arbitrary<Json> {
  const extra = s.additionalProperties;
  if (extra !== undefined && extra !== false) {
    if (Object.keys(extra).length === 0) return freeObject;
    const keysAt = `${at}/propertyNames`;
    const minLength = s.minProperties ?? 0;
    const maxLength = s.maxProperties ?? minLength + 3;
    const values = valid(ctx, `${at}/additionalProperties`);
    const keys = ctx.samplesOnly.has(keysAt)
      ? fc.oneof(
        fc.shuffledSubarray(ctx.samples.get(keysAt) as string[], { minLength, maxLength }),
        fc.shuffledSubarray(ctx.samples.get(keysAt) as string[], {
          minLength: maxLength,
          maxLength,
        }),
      )
      : fc.uniqueArray(valid(ctx, keysAt) as fc.Arbitrary<string>, { minLength, maxLength });
    return keys.chain((names) =>
      fc.tuple(...names.map(() => values)).map((vs) =>
        Object.fromEntries(names.map((name, i) => [name, vs[i]]))
      )
    );
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of Object.keys(s.properties ?? {})) {
    model[name] = valid(ctx, `${at}/properties/${name}`);
  }
  return fc.record(model, { requiredKeys: s.required ?? [] });
}

/** Values the schema at `at` accepts. */
export function valid(ctx: SchemaContext, at: string): fc.Arbitrary<unknown> {
  const here = resolve(ctx.doc, at);
  const s = schemaAt(ctx.doc, here);
  if ("const" in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const union = s.oneOf ? "oneOf" : s.anyOf ? "anyOf" : null;
  if (union) {
    return fc.oneof(...s[union].map((_: Json, i: number) => valid(ctx, `${here}/${union}/${i}`)));
  }
  switch (s.type) {
    case "object":
      return objectArbitrary(ctx, here, s);
    case "array": {
      const item = valid(ctx, `${here}/items`);
      const minLength = s.minItems ?? 0;
      const maxLength = s.maxItems ?? minLength + 3;
      return fc.oneof(
        fc.array(item, { minLength, maxLength }),
        fc.array(item, { minLength: maxLength, maxLength }),
      );
    }
    case "string":
      return stringArbitrary(ctx, here, s);
    case "integer":
      return integerArbitrary(s);
    case "null":
      return fc.constant(null);
    default:
      throw new Error(`${here}: no generator for ${JSON.stringify(s).slice(0, 80)}`);
  }
}

/** Values of other JSON types than `type`. */
function otherTypes(type: string): unknown[] {
  const all: Record<string, unknown> = { string: "x", integer: 7, object: {}, array: [] };
  const others = Object.entries(all).filter(([t]) => t !== type).map(([, v]) => v);
  return type === "integer" ? [1.5, ...others] : [...others, true, null];
}

// Characters inserted into a string to break its pattern, the first that does.
const BREAKERS = [" ", "\u0007", "\u0085", "\\", "0", "O", "?", "#", "é", "\u{1F600}", "g", "-"];

function stringBreaks(s: Json, value: string): [string, unknown[]][] {
  const out: [string, unknown[]][] = [];
  const chars = [...value];
  const re = s.pattern === undefined ? null : new RegExp(s.pattern, "u");
  const keeps = (c: string) => re === null || re.test(value + c) || re.test(c + value);
  if (s.minLength !== undefined && s.minLength > 0) {
    out.push(["minLength", [chars.slice(0, s.minLength - 1).join("")]]);
  }
  if (s.maxLength !== undefined) {
    const pad = [chars.at(-1) ?? "a", "a", "1", "/"].filter(keeps);
    out.push(["maxLength", pad.map((c) => value + c.repeat(s.maxLength + 1 - chars.length))]);
  }
  if (re !== null) {
    const middle = chars.length >> 1;
    const tries = BREAKERS.flatMap((c) => [
      chars.slice(0, middle).join("") + c + chars.slice(middle).join(""),
      value + c,
      c + value,
    ]);
    out.push(["pattern", tries.filter((t) => !re.test(t))]);
  }
  if (s.not?.enum) out.push(["not", s.not.enum]);
  return out;
}

/**
 * Every way to break one rule of the schema at `at` in `value` (which it
 * accepts): the rule, where, and replacements to try. The caller keeps the
 * first replacement that makes the whole value invalid.
 */
export function breaks(
  ctx: SchemaContext,
  at: string,
  value: unknown,
  path: (string | number)[] = [],
): Broken[] {
  const here = resolve(ctx.doc, at);
  const s = schemaAt(ctx.doc, here);
  const out: Broken[] = [];
  const rule = (keyword: string, candidates: unknown[], where = path) =>
    out.push({ rule: `${here}: ${keyword}`, path: where, candidates });
  const union = s.oneOf ? "oneOf" : s.anyOf ? "anyOf" : null;
  if (union) {
    const i = s[union].findIndex((_: Json, k: number) => ctx.valid(`${here}/${union}/${k}`, value));
    if (i < 0) throw new Error(`${here}: the value matches no branch`);
    return breaks(ctx, `${here}/${union}/${i}`, value, path);
  }
  if ("const" in s) rule("const", [`${s.const}`.toLowerCase(), `${s.const}x`, " ", 7]);
  if (s.enum) rule("enum", ["zzz", 7]);
  if (s.type && !(ctx.text && s.type === "string")) rule("type", otherTypes(s.type));
  if (s.type === "string" && typeof value === "string") {
    for (const [keyword, candidates] of stringBreaks(s, value)) rule(keyword, candidates);
  }
  if (s.type === "integer" && typeof value === "number") {
    if (s.minimum !== undefined) rule("minimum", [s.minimum - 1]);
    if (s.maximum !== undefined) rule("maximum", [s.maximum + 1]);
  }
  if (s.type === "array" && Array.isArray(value)) {
    if (s.maxItems !== undefined && value.length > 0) {
      rule("maxItems", [Array.from({ length: s.maxItems + 1 }, (_, i) => value[i % value.length])]);
    }
    value.slice(0, 2).forEach((item, i) =>
      out.push(...breaks(ctx, `${here}/items`, item, [...path, i]))
    );
  }
  if (s.type === "object" && typeof value === "object" && value !== null) {
    out.push(...objectBreaks(ctx, here, s, value as Record<string, unknown>, path));
  }
  return out;
}

function objectBreaks(
  ctx: SchemaContext,
  here: string,
  s: Json,
  value: Record<string, unknown>,
  path: (string | number)[],
): Broken[] {
  const out: Broken[] = [];
  const rule = (keyword: string, candidates: unknown[], where = path) =>
    out.push({ rule: `${here}: ${keyword}`, path: where, candidates });
  for (const name of s.required ?? []) rule("required", [undefined], [...path, name]);
  if (s.additionalProperties === false) {
    rule("additionalProperties", [1, "x"], [...path, "zzz_unknown"]);
  }
  for (const name of Object.keys(s.properties ?? {})) {
    if (name in value) {
      out.push(...breaks(ctx, `${here}/properties/${name}`, value[name], [...path, name]));
    }
  }
  const extra = s.additionalProperties;
  if (extra === undefined || extra === false || Object.keys(extra).length === 0) return out;
  const names = Object.keys(value);
  const keysAt = `${here}/propertyNames`;
  const spare = ((ctx.samples.get(keysAt) ?? []) as string[]).filter((k) => !(k in value));
  if (s.minProperties !== undefined && s.minProperties > 0) {
    rule("minProperties", [
      Object.fromEntries(Object.entries(value).slice(0, s.minProperties - 1)),
    ]);
  }
  if (s.maxProperties !== undefined && names.length > 0) {
    const more = spare.slice(0, s.maxProperties + 1 - names.length);
    rule("maxProperties", [{
      ...value,
      ...Object.fromEntries(more.map((k) => [k, value[names[0]]])),
    }]);
  }
  if (names.length > 0) {
    out.push(...breaks(ctx, `${here}/additionalProperties`, value[names[0]], [...path, names[0]]));
    const keySchema = schemaAt(ctx.doc, resolve(ctx.doc, keysAt));
    for (const [keyword, keys] of stringBreaks(keySchema, names[0])) {
      const renamed = (keys as string[]).map((k) => ({ ...value, [k]: value[names[0]] }));
      out.push({ rule: `${keysAt}: ${keyword}`, path, candidates: renamed });
    }
  }
  return out;
}

/** `value` with the member at `path` replaced (or deleted, for undefined); `value` is kept. */
export function replaced(value: unknown, path: (string | number)[], by: unknown): unknown {
  if (path.length === 0) return by;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (by === undefined) delete node[last];
  else node[last] = by;
  return copy;
}

/** Known-good strings found in `value` (valid at `at`), recorded by the location of their schema. */
export function collectSamples(ctx: SchemaContext, at: string, value: unknown): void {
  const here = resolve(ctx.doc, at);
  const s = schemaAt(ctx.doc, here);
  const union = s.oneOf ? "oneOf" : s.anyOf ? "anyOf" : null;
  if (union) {
    const i = s[union].findIndex((_: Json, k: number) => ctx.valid(`${here}/${union}/${k}`, value));
    if (i >= 0) collectSamples(ctx, `${here}/${union}/${i}`, value);
    return;
  }
  const add = (where: string, sample: unknown) => {
    const list = ctx.samples.get(where) ?? [];
    if (!list.includes(sample)) list.push(sample);
    ctx.samples.set(where, list);
  };
  if (typeof value === "string") add(here, value);
  if (Array.isArray(value)) value.forEach((item) => collectSamples(ctx, `${here}/items`, item));
  if (s.type !== "object" || typeof value !== "object" || value === null) return;
  for (const [name, member] of Object.entries(value)) {
    if (s.properties?.[name]) collectSamples(ctx, `${here}/properties/${name}`, member);
    else if (s.additionalProperties && Object.keys(s.additionalProperties).length > 0) {
      add(`${here}/propertyNames`, name);
      collectSamples(ctx, `${here}/additionalProperties`, member);
    }
  }
}

/** Every rule of the schema at `at` that {@link breaks} can break, as `location: keyword`. */
export function ruleSites(ctx: SchemaContext, at: string, out = new Set<string>()): Set<string> {
  const here = resolve(ctx.doc, at);
  const s = schemaAt(ctx.doc, here);
  const site = (keyword: string, where = here) => out.add(`${where}: ${keyword}`);
  const union = s.oneOf ? "oneOf" : s.anyOf ? "anyOf" : null;
  if (union) {
    s[union].forEach((_: Json, i: number) => ruleSites(ctx, `${here}/${union}/${i}`, out));
    return out;
  }
  if ("const" in s) site("const");
  if (s.enum) site("enum");
  if (s.type && !(ctx.text && s.type === "string")) site("type");
  const stringSites = (t: Json, where: string) => {
    if (t.minLength > 0) site("minLength", where);
    for (const keyword of ["maxLength", "pattern", "not"]) if (keyword in t) site(keyword, where);
  };
  if (s.type === "string") stringSites(s, here);
  for (const keyword of ["minimum", "maximum", "maxItems"]) if (keyword in s) site(keyword);
  if (s.items) ruleSites(ctx, `${here}/items`, out);
  if (s.type !== "object") return out;
  if (s.required?.length) site("required");
  if (s.additionalProperties === false) site("additionalProperties");
  for (const name of Object.keys(s.properties ?? {})) {
    ruleSites(ctx, `${here}/properties/${name}`, out);
  }
  const extra = s.additionalProperties;
  if (extra && Object.keys(extra).length > 0) {
    if (s.minProperties > 0) site("minProperties");
    if ("maxProperties" in s) site("maxProperties");
    ruleSites(ctx, `${here}/additionalProperties`, out);
    const keysAt = `${here}/propertyNames`;
    stringSites(schemaAt(ctx.doc, resolve(ctx.doc, keysAt)), keysAt);
  }
  return out;
}

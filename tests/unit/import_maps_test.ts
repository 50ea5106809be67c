/**
 * The production import map (the root `deno.json`) holds exactly the
 * packages that the service and its packages import (`main.ts`, `src/`,
 * `protocol/`, `client/`; the benchmarks use those too). What only the tests,
 * the test servers or the tools use is pinned by their own workspace members
 * (`tests/deno.json`, `testing/deno.json`, `tools/deno.json`), each used
 * where it is pinned, one version wherever it is pinned twice.
 */

import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));

/** The folders of production code and what shares its import map. */
const PRODUCTION = ["main.ts", "src", "protocol", "client", "bench"];

/** The members that pin what only they use. */
const DEVELOPMENT = ["tests", "testing", "tools"];

/** A package run as a command by a test (`deno run npm:…`), never imported. */
const RUN_NOT_IMPORTED = new Set(["@redocly/cli"]);

type ImportMap = Record<string, string>;

async function importsOf(dir: string): Promise<ImportMap> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, dir, "deno.json")));
  return config.imports ?? {};
}

/** Every TypeScript file at or under `path` (from the root), with its text. */
async function sources(path: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (at: string) => {
    const info = await Deno.stat(join(ROOT, at));
    if (info.isFile) {
      if (at.endsWith(".ts")) found.set(at, await Deno.readTextFile(join(ROOT, at)));
      return;
    }
    for await (const entry of Deno.readDir(join(ROOT, at))) await walk(`${at}/${entry.name}`);
  };
  await walk(path);
  return found;
}

/** The bare specifiers a file imports: not relative, not `node:`, `npm:` or a workspace package. */
export function bareSpecifiers(text: string): string[] {
  const found: string[] = [];
  // Comments may show imports (as examples); a line or block comment's own lines go.
  const code = text.replace(/^[ \t]*\/\*[\s\S]*?\*\//gm, "").replace(/^[ \t]*\/\/.*$/gm, "");
  const patterns = [
    /(?:^|[\n;])[ \t]*(?:import|export)\s+(?:type\s+)?[^"';]*?\sfrom\s+["']([^"']+)["']/g,
    /(?:^|[\n;])[ \t]*import\s+["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']/g,
  ];
  for (const pattern of patterns) {
    for (const [, specifier] of code.matchAll(pattern)) {
      if (/^(\.|\/|node:|npm:|jsr:|https?:|@intents\/)/.test(specifier)) continue;
      found.push(specifier);
    }
  }
  return found;
}

/** The import map's key that `specifier` resolves through, or undefined. */
export function keyOf(map: ImportMap, specifier: string): string | undefined {
  if (specifier in map) return specifier;
  return Object.keys(map).find((key) =>
    key.endsWith("/") ? specifier.startsWith(key) : specifier.startsWith(`${key}/`)
  );
}

/** The keys of `map` that the files at `paths` import, and the specifiers it lacks. */
async function used(map: ImportMap, paths: string[]) {
  const keys = new Set<string>();
  const missing: string[] = [];
  for (const path of paths) {
    for (const [file, text] of await sources(path)) {
      for (const specifier of bareSpecifiers(text)) {
        const key = keyOf(map, specifier);
        if (key) keys.add(key);
        else missing.push(`${file}: ${specifier}`);
      }
    }
  }
  return { keys, missing };
}

Deno.test("the production import map holds what production code imports, and nothing else", async () => {
  const root = await importsOf(".");
  const { keys, missing } = await used(root, PRODUCTION);
  assert.deepEqual(missing, [], "imported but not in the root deno.json");
  assert.deepEqual(Object.keys(root).filter((key) => !keys.has(key)), []);
});

Deno.test("the tests, the test servers and the tools pin what only they use, one version each", async () => {
  const root = await importsOf(".");
  const versions = new Map<string, string>();
  for (const member of DEVELOPMENT) {
    const own = await importsOf(member);
    for (const [key, target] of Object.entries(own)) {
      assert.ok(!(key in root), `${member}/deno.json pins ${key}, which production has`);
      const earlier = versions.get(key);
      assert.ok(earlier === undefined || earlier === target, `${key}: ${earlier} and ${target}`);
      versions.set(key, target);
    }
    const { keys, missing } = await used({ ...root, ...own }, [member]);
    assert.deepEqual(missing, [], `imported in ${member}/ but pinned nowhere it reads`);
    const unused = Object.keys(own).filter((key) => !keys.has(key) && !RUN_NOT_IMPORTED.has(key));
    assert.deepEqual(unused, [], `pinned in ${member}/deno.json but not imported there`);
  }
  const workspace = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).workspace;
  for (const member of DEVELOPMENT) {
    assert.ok(workspace.includes(`./${member}`), `${member} is a member of the workspace`);
  }
});

Deno.test("specifiers are read and matched as Deno resolves them", () => {
  const text = [
    'import a from "fast-check";',
    'import { b } from "./b.ts";',
    'import type { C } from "ajv/dist/2020.js";',
    'import pkg from "@deno/kv-linux-x64-gnu/package.json" with { type: "json" };',
    'const d = await import("@noble/curves/ed25519.js");',
    'import { e } from "node:path";',
    'import { f } from "@intents/protocol/jcs";',
    '// import g from "in-a-comment";',
    '/** import h from "in-a-doc-comment"; */',
  ].join("\n");
  const found = bareSpecifiers(text);
  assert.deepEqual(found.sort(), [
    "@deno/kv-linux-x64-gnu/package.json",
    "@noble/curves/ed25519.js",
    "ajv/dist/2020.js",
    "fast-check",
  ]);
  const map = {
    "fast-check": "npm:fast-check@4.10.2",
    "ajv": "npm:ajv@8.20.0",
    "@noble/curves/": "npm:/@noble/curves@2.4.0/",
    "@deno/kv-linux-x64-gnu": "npm:@deno/kv-linux-x64-gnu@0.14.0",
  };
  assert.deepEqual(found.map((s) => keyOf(map, s)), [
    "@deno/kv-linux-x64-gnu",
    "@noble/curves/",
    "ajv",
    "fast-check",
  ]);
  assert.equal(keyOf(map, "fast-checker"), undefined);
});

/**
 * The tests stay at their levels (docs/testing.md): read from the imports of
 * every test file, a unit test builds no app, opens no KV and starts no
 * process or browser; a store test drives a real KV and builds no app; an
 * app test builds the app and starts no server process; an end-to-end test
 * starts one; a browser test drives Chromium. No file name is used at two
 * levels, and waiting is done with `tests/support/time.ts` only.
 */

import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));

/** What a test file may do that sets its level. */
type Trait = "app" | "kv" | "process" | "browser";

/**
 * The modules whose use gives a test a trait, by path from the root, and the
 * names whose import does (`null`: any import of the module).
 */
const MARKERS: Readonly<Record<Trait, Readonly<Record<string, readonly string[] | null>>>> = {
  app: {
    "tests/support/in_process.ts": ["startApp", "withApp"],
    "src/http/app.ts": ["createApp"],
    "src/service.ts": ["composeService"],
  },
  kv: {
    "src/storage/kv_store.ts": ["KvStore"],
    "tests/support/stores.ts": ["storeTest", "newTestStore"],
    "tests/support/store_kit.ts": ["throughKv", "withKvFile"],
    "testing/kv_connect/start.ts": ["startKvConnectServer"],
  },
  process: {
    "tests/support/process.ts": ["startProcess", "withProcess", "harnessFor"],
    "tests/support/server.ts": ["startServer", "runServerExpectingExit"],
    "tests/support/cli.ts": ["cli", "withCliServer", "addDocumentByCli"],
    "tests/support/deploy.ts": null,
    "testing/spawn_server.ts": ["spawnServer", "serverCommand"],
    "tests/support/earlier_version.ts": ["startEarlier"],
  },
  browser: {
    "tests/support/passkey_page.ts": null,
    "tests/support/chromium.ts": null,
  },
};

/** Each level: the traits its tests must have (one of), and those they must not. */
const LEVELS: Readonly<Record<string, { needs: readonly Trait[]; never: readonly Trait[] }>> = {
  unit: { needs: [], never: ["app", "kv", "process", "browser"] },
  store: { needs: ["kv"], never: ["app", "process", "browser"] },
  app: { needs: ["app"], never: ["process", "browser"] },
  e2e: { needs: ["process"], never: ["browser"] },
  browser: { needs: ["browser"], never: [] },
};

/** `import … from "x"` (one or many lines), with what it imports. */
const IMPORT =
  /(?:^|[\n;])[ \t]*import\s+(?:type\s+)?(\{[^}]*\}|\*\s+as\s+[\w$]+|[\w$]+)\s+from\s+["']([^"']+)["']/g;

/** The traits of the test file at `path` (from the root) whose text is `text`. */
export function traitsOf(path: string, text: string): Set<Trait> {
  const traits = new Set<Trait>();
  for (const [, what, specifier] of text.matchAll(IMPORT)) {
    if (!specifier.startsWith(".")) continue;
    const target = normalize(join(dirname(path), specifier));
    const whole = what.startsWith("*");
    const names = new Set(
      what.replace(/[{}]/g, "").split(",").map((part) =>
        part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]
      ),
    );
    for (const [trait, modules] of Object.entries(MARKERS) as [Trait, typeof MARKERS.app][]) {
      if (!(target in modules)) continue;
      const marked = modules[target];
      if (whole || marked === null || marked.some((name) => names.has(name))) traits.add(trait);
    }
  }
  if (/\bDeno\.openKv\(/.test(text)) traits.add("kv");
  // A tool run as a process of its own, starting the service (the load tools).
  if (path.startsWith("tests/e2e/") && /\bnew Deno\.Command\(/.test(text)) traits.add("process");
  return traits;
}

/** Every `*_test.ts` of a level's folder: path from the root and text. */
async function testFiles(level: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for await (const entry of Deno.readDir(join(ROOT, "tests", level))) {
    if (!entry.isFile || !entry.name.endsWith("_test.ts")) continue;
    const path = `tests/${level}/${entry.name}`;
    files.push([path, await Deno.readTextFile(join(ROOT, path))]);
  }
  return files.sort(([a], [b]) => a.localeCompare(b));
}

Deno.test("each test file does what its level allows, and what its level is for", async () => {
  const wrong: string[] = [];
  for (const [level, { needs, never }] of Object.entries(LEVELS)) {
    for (const [path, text] of await testFiles(level)) {
      const traits = traitsOf(path, text);
      const banned = never.filter((trait) => traits.has(trait));
      if (banned.length > 0) wrong.push(`${path}: ${banned.join(", ")}`);
      if (needs.length > 0 && !needs.some((trait) => traits.has(trait))) {
        wrong.push(`${path}: none of ${needs.join(", ")}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("the level check notices an app built in a unit test and a store test without a KV", () => {
  const app = 'import { withApp } from "../support/in_process.ts";\n';
  assert.deepEqual([...traitsOf("tests/unit/x_test.ts", app)], ["app"]);
  const namespace = 'import * as inProcess from "../support/in_process.ts";\n';
  assert.deepEqual([...traitsOf("tests/app/x_test.ts", namespace)], ["app"]);
  const typeOnly = 'import { type AppHarness } from "../support/in_process.ts";\n';
  assert.deepEqual([...traitsOf("tests/unit/x_test.ts", typeOnly)], []);
  // Written in two pieces, so that this file does not open a KV itself.
  const kv = "const kv = await Deno." + "openKv(':memory:');\n";
  assert.deepEqual([...traitsOf("tests/store/x_test.ts", kv)], ["kv"]);
  const root = 'import { projectRoot } from "../../testing/spawn_server.ts";\n';
  assert.deepEqual([...traitsOf("tests/unit/x_test.ts", root)], []);
  const spawn =
    'import {\n  projectRoot,\n  spawnServer,\n} from "../../testing/spawn_server.ts";\n';
  assert.deepEqual([...traitsOf("tests/e2e/x_test.ts", spawn)], ["process"]);
});

Deno.test("no test file name is used at two levels", async () => {
  const levels = new Map<string, string[]>();
  for (const level of Object.keys(LEVELS)) {
    for (const [path] of await testFiles(level)) {
      const name = path.split("/").pop()!;
      levels.set(name, [...levels.get(name) ?? [], level]);
    }
  }
  const twice = [...levels].filter(([, at]) => at.length > 1).map(([name, at]) =>
    `${name}: ${at.join(", ")}`
  );
  assert.deepEqual(twice, []);
});

Deno.test("waiting is done with tests/support/time.ts, never a copy of it", async () => {
  const copies: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts") && path !== "tests/support/time.ts") {
        const text = await Deno.readTextFile(join(ROOT, path));
        const defined =
          /\b(?:function\s+(sleep|sleepUntil|within|withTimeout|until)|const\s+(sleep|sleepUntil|within|withTimeout)\s*=)\b/
            .exec(text);
        if (defined) copies.push(`${path}: ${defined[1] ?? defined[2]}`);
        if (/setTimeout\(\s*(?:resolve|r)\s*,/.test(text)) copies.push(`${path}: a sleep`);
      }
    }
  };
  await walk("tests");
  assert.deepEqual(copies, []);
});

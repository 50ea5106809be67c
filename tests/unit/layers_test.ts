/**
 * The layers as drawn: the imports of `main.ts`, `src/`, `protocol/` and
 * `client/` are exactly the
 * arrows of {@link DRAWN}, every arrow points to a room below it, no files
 * import each other in a circle, and docs/architecture.md draws the same
 * table. A room is a folder of `src/` (with its subfolders) or a file.
 */

import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Each room and the rooms it imports, from the top floor down: the one
 * statement of the layers, which docs/architecture.md draws.
 */
const DRAWN: readonly (readonly [string, readonly string[]])[] = [
  ["main.ts", [
    "src/service.ts",
    "src/http/",
    "src/scheduler/",
    "src/settings.ts",
    "src/errors.ts",
  ]],
  ["client/", ["protocol/"]],
  ["src/service.ts", [
    "src/http/",
    "src/delivery/",
    "src/log/",
    "src/scheduler/",
    "src/storage/",
    "src/workers/",
    "src/webhooks/",
    "src/domain/",
    "src/settings.ts",
    "src/telemetry/",
    "src/timing.ts",
  ]],
  ["src/http/", [
    "src/workers/",
    "src/webhooks/",
    "src/domain/",
    "src/settings.ts",
    "src/limits_settings.ts",
    "src/telemetry/",
    "src/media_type.ts",
    "src/ip_address.ts",
    "src/clock_cache.ts",
    "src/timing.ts",
    "src/errors.ts",
    "protocol/",
  ]],
  ["src/delivery/", [
    "src/scheduler/",
    "src/webhooks/",
    "src/domain/",
    "src/telemetry/",
    "src/ip_address.ts",
    "src/http1_response.ts",
    "src/timing.ts",
  ]],
  ["src/settings.ts", ["src/limits_settings.ts", "src/log/", "src/domain/", "src/errors.ts"]],
  ["src/log/", [
    "src/storage/",
    "src/webhooks/",
    "src/domain/",
    "src/limits_settings.ts",
    "src/telemetry/",
    "src/timing.ts",
    "src/errors.ts",
    "protocol/",
  ]],
  ["src/storage/", [
    "src/webhooks/",
    "src/domain/",
    "src/telemetry/",
    "src/media_type.ts",
    "src/clock_cache.ts",
    "src/timing.ts",
  ]],
  ["src/scheduler/", ["src/domain/", "src/telemetry/"]],
  ["src/workers/", ["src/domain/", "src/telemetry/", "src/clock_cache.ts", "src/errors.ts"]],
  ["src/webhooks/", ["src/ip_address.ts", "protocol/"]],
  ["src/domain/", [
    "src/crypto/",
    "src/telemetry/",
    "src/clock_cache.ts",
    "src/errors.ts",
    "protocol/",
  ]],
  ["src/limits_settings.ts", ["src/ip_address.ts", "src/errors.ts"]],
  ["src/crypto/", []],
  ["src/telemetry/", []],
  ["src/media_type.ts", []],
  ["src/ip_address.ts", []],
  ["src/http1_response.ts", []],
  ["src/clock_cache.ts", []],
  ["src/timing.ts", []],
  ["src/errors.ts", []],
  ["protocol/", []],
];

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));

/** Source files by path from the checkout's root. */
type Sources = ReadonlyMap<string, string>;

/** `main.ts` and every TypeScript file under `src/`. */
async function readSources(): Promise<Sources> {
  const sources = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) sources.set(path, await Deno.readTextFile(join(ROOT, path)));
    }
  };
  await walk("src");
  await walk("protocol");
  await walk("client");
  sources.set("main.ts", await Deno.readTextFile(join(ROOT, "main.ts")));
  return sources;
}

const SPECIFIERS = [
  // import … from "x", export … from "x", import type … from "x" (one or many lines)
  /(?:^|[\n;])[ \t]*(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?(?:\*\s+as\s+[\w$]+|\*|\{[^}]*\}|[\w$]+)\s+from\s+["']([^"']+)["']/g,
  // import "x"
  /(?:^|[\n;])[ \t]*import\s+["']([^"']+)["']/g,
  // import("x")
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  // a worker's module: new URL("./x.ts", import.meta.url)
  /\bnew URL\(\s*["']([^"']+\.ts)["']\s*,\s*import\.meta\.url\s*\)/g,
];

/** The workspace's packages, by the name they are imported by: their folders. */
const PACKAGES: Readonly<Record<string, string>> = {
  "@intents/protocol": "protocol",
  "@intents/client": "client",
};

/**
 * The modules a file imports, as paths from the root (the workspace's packages
 * by their folders; other packages and built-ins left out).
 */
function importsOf(path: string, text: string): string[] {
  // Comments hold examples that import what the file itself does not.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^[ \t]*\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const pattern of SPECIFIERS) {
    for (const [, specifier] of code.matchAll(pattern)) {
      if (specifier.startsWith(".")) found.add(normalize(join(dirname(path), specifier)));
      const name = /^(@[\w-]+\/[\w-]+)(\/.*)?$/.exec(specifier);
      if (name && PACKAGES[name[1]]) found.add(`${PACKAGES[name[1]]}${name[2] ?? "/mod.ts"}`);
    }
  }
  return [...found];
}

/** The room of a path: its folder under `src/`, a file of `src/` or the root, or a top folder. */
function roomOf(path: string): string {
  const parts = path.split("/");
  if (parts[0] === "src") return parts.length > 2 ? `src/${parts[1]}/` : path;
  return parts.length > 1 ? `${parts[0]}/` : path;
}

/** Every import that crosses rooms, as `from -> to` with the files that make it. */
function arrowsOf(sources: Sources): Map<string, string[]> {
  const arrows = new Map<string, string[]>();
  for (const [path, text] of sources) {
    for (const target of importsOf(path, text)) {
      const from = roomOf(path);
      const to = roomOf(target);
      if (from === to) continue;
      const key = `${from} -> ${to}`;
      arrows.set(key, [...arrows.get(key) ?? [], `${path} -> ${target}`]);
    }
  }
  return arrows;
}

/** The arrows of a drawing, as `from -> to`. */
function arrowsDrawn(drawing: typeof DRAWN): Set<string> {
  return new Set(drawing.flatMap(([from, to]) => to.map((room) => `${from} -> ${room}`)));
}

/** Arrows that the code has and the drawing lacks (with the files), and the reverse. */
function compare(sources: Sources, drawing: typeof DRAWN) {
  const actual = arrowsOf(sources);
  const drawn = arrowsDrawn(drawing);
  const forbidden = [...actual].filter(([key]) => !drawn.has(key)).map(([key, files]) =>
    `${key} (${files.join(", ")})`
  );
  const unused = [...drawn].filter((key) => !actual.has(key));
  return { forbidden: forbidden.sort(), unused: unused.sort() };
}

/** The files of the first circle of imports found, or null. */
function findCircle(sources: Sources): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string): string[] | null => {
    if (state.get(file) === "done") return null;
    if (state.get(file) === "open") return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, "open");
    stack.push(file);
    for (const next of importsOf(file, sources.get(file)!)) {
      if (!sources.has(next)) continue;
      const circle = visit(next);
      if (circle) return circle;
    }
    stack.pop();
    state.set(file, "done");
    return null;
  };
  for (const file of sources.keys()) {
    const circle = visit(file);
    if (circle) return circle;
  }
  return null;
}

/** The drawing in docs/architecture.md: the block under "## Layers", one room a line. */
async function docsDrawing(): Promise<[string, string[]][]> {
  const text = await Deno.readTextFile(join(ROOT, "docs/architecture.md"));
  const section = text.split("\n## Layers\n")[1]?.split("\n## ")[0];
  assert.ok(section, "docs/architecture.md has a Layers section");
  const block = /```text\n([\s\S]*?)\n```/.exec(section)?.[1];
  assert.ok(block, "the Layers section draws the rooms in a text block");
  return block.split("\n").map((line) => {
    const [from, to = ""] = line.split("─►").map((part) => part.trim());
    return [from, to === "" ? [] : to.split(/\s+/)];
  });
}

const sources = await readSources();

Deno.test("the imports of main.ts and src/ are the arrows drawn, and no others", () => {
  const { forbidden, unused } = compare(sources, DRAWN);
  assert.deepEqual(forbidden, [], "imports the drawing forbids");
  assert.deepEqual(unused, [], "arrows drawn that no import makes");
  // Every room drawn holds code.
  const rooms = new Set([...sources.keys()].map(roomOf));
  assert.deepEqual(DRAWN.map(([room]) => room).filter((room) => !rooms.has(room)), []);
  assert.deepEqual([...rooms].filter((room) => !DRAWN.some(([r]) => r === room)), []);
});

Deno.test("every arrow points to a room drawn below it", () => {
  const floor = new Map(DRAWN.map(([room], i) => [room, i]));
  for (const [from, to] of DRAWN) {
    for (const room of to) {
      assert.ok(floor.has(room), `${from} -> ${room}: ${room} is not drawn`);
      assert.ok(floor.get(room)! > floor.get(from)!, `${from} -> ${room} runs back up`);
    }
  }
});

Deno.test("no files import each other in a circle", () => {
  assert.equal(findCircle(sources), null);
});

Deno.test("docs/architecture.md draws the same rooms and arrows, in the same order", async () => {
  const drawing = await docsDrawing();
  assert.deepEqual(drawing, DRAWN.map(([from, to]) => [from, [...to]]));
});

Deno.test("the check notices an arrow the drawing forbids, one it lacks, and a circle", () => {
  const forged = new Map(sources);
  // The domain reaching up into the edge, in a multi-line type import.
  forged.set(
    "src/domain/forged.ts",
    'import type {\n  App,\n} from "../http/app.ts";\n// import "../storage/keys.ts";\n',
  );
  assert.deepEqual(compare(forged, DRAWN).forbidden, [
    "src/domain/ -> src/http/ (src/domain/forged.ts -> src/http/app.ts)",
  ]);
  const lacking = DRAWN.map(([from, to]) => [from, from === "src/webhooks/" ? [] : to] as const);
  assert.deepEqual(compare(sources, lacking).forbidden.map((s) => s.split(" (")[0]), [
    "src/webhooks/ -> protocol/",
    "src/webhooks/ -> src/ip_address.ts",
  ]);
  const circle = new Map([
    ["src/a.ts", 'export { b } from "./b.ts";'],
    ["src/b.ts", 'import { a } from "./a.ts";\nexport const b = a;'],
  ]);
  assert.deepEqual(findCircle(circle), ["src/a.ts", "src/b.ts", "src/a.ts"]);
});

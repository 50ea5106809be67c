/**
 * The client library is a package of its own (`client/deno.json`), and what
 * it publishes holds its whole module graph: every local module its entry
 * points reach is a file of the client package or of the wire protocol's
 * package (`protocol/deno.json`), which it depends on by name. `deno publish
 * --dry-run` accepts an import of `../src/…` and would then publish a
 * package that cannot load; this test is what refuses it.
 *
 * Both commands run from the local caches: neither needs JSR.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PACKAGES = ["client", "protocol"];

async function deno(args: string[]): Promise<{ ok: boolean; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const decoder = new TextDecoder();
  return {
    ok: output.success,
    out: decoder.decode(output.stdout),
    err: decoder.decode(output.stderr),
  };
}

/** The package's deno.json. */
async function packageConfig(dir: string): Promise<{
  name: string;
  version: string;
  exports: Record<string, string>;
}> {
  return JSON.parse(await Deno.readTextFile(join(ROOT, dir, "deno.json")));
}

/** The files `deno publish --dry-run` would publish, by package name, as root-relative paths. */
function publishedFiles(text: string): Map<string, Set<string>> {
  const packages = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const line of text.split("\n")) {
    const head = /^Simulating publish of (@[^@\s]+\/[^@\s]+)@\S+ with files:$/.exec(line);
    if (head) {
      current = new Set();
      packages.set(head[1], current);
      continue;
    }
    const file = /^\s+(file:\/\/\S+) \(/.exec(line);
    if (file && current) current.add(relative(ROOT, fileURLToPath(file[1])));
    else if (!/^\s/.test(line)) current = undefined;
  }
  return packages;
}

/** Every module `entry` reaches: local files as root-relative paths, and the other specifiers. */
async function reachable(entry: string): Promise<{ local: string[]; other: string[] }> {
  const { ok, out, err } = await deno(["info", "--json", entry]);
  assert.ok(ok, `deno info ${entry}: ${err}`);
  const info = JSON.parse(out) as { modules: { specifier: string; error?: string }[] };
  const local: string[] = [];
  const other: string[] = [];
  for (const module of info.modules) {
    assert.equal(module.error, undefined, `${module.specifier}: ${module.error}`);
    if (module.specifier.startsWith("file:")) {
      local.push(relative(ROOT, fileURLToPath(module.specifier)));
    } else {
      other.push(module.specifier);
    }
  }
  return { local, other };
}

Deno.test("the client and protocol packages have a name, a version and their entry points", async () => {
  const client = await packageConfig("client");
  assert.equal(client.name, "@intents/client");
  assert.match(client.version, /^\d+\.\d+\.\d+$/);
  assert.deepEqual(client.exports, {
    ".": "./mod.ts",
    "./browser": "./browser.ts",
    "./cli": "./cli.ts",
  });
  const protocol = await packageConfig("protocol");
  assert.equal(protocol.name, "@intents/protocol");
  assert.equal(protocol.version, client.version, "the two packages are released together");
  const root = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  for (const member of ["./protocol", "./client"]) {
    assert.ok(root.workspace.includes(member), `${member} is a member of the workspace`);
  }
});

Deno.test("the publish dry run's files cover every module the packages' entry points reach", async () => {
  const { ok, out, err } = await deno(["publish", "--dry-run", "--allow-dirty"]);
  assert.ok(ok, `deno publish --dry-run failed:\n${err}`);
  assert.match(err + out, /Dry run complete/);
  const published = publishedFiles(err + out);
  assert.deepEqual([...published.keys()].sort(), ["@intents/client", "@intents/protocol"]);
  const all = new Set([...published.values()].flatMap((files) => [...files]));

  // The client's entry points, and the protocol package's own (its mod.ts reached by none).
  let protocolReached = 0;
  for (const pkg of ["client", "protocol"]) {
    const config = await packageConfig(pkg);
    for (const target of Object.values(config.exports)) {
      const entry = join(pkg, target);
      assert.ok(published.get(config.name)!.has(entry), `${entry} is published`);
      const { local, other } = await reachable(entry);
      for (const path of local) {
        const dir = path.split("/")[0];
        assert.ok(PACKAGES.includes(dir), `${entry} reaches ${path}, outside the packages`);
        assert.ok(all.has(path), `${entry} reaches ${path}, which is not published`);
        if (pkg === "client" && dir === "protocol") protocolReached++;
      }
      for (const specifier of other) {
        // npm packages are dependencies and node: modules built in; nothing else (no URL, no
        // JSR package) may be reached.
        assert.match(specifier, /^(npm|node):/, `${entry} reaches ${specifier}`);
      }
    }
  }
  assert.ok(protocolReached > 0, "the client reaches the protocol package");
});

Deno.test("publishedFiles reads the dry run's listing, and nothing after it", () => {
  const text = [
    "Publishing a workspace...",
    "Simulating publish of @a/b@1.0.0 with files:",
    `   file://${ROOT}client/mod.ts (1.2KB)`,
    `   file://${ROOT}client/deno.json (179B)`,
    "Simulating publish of @a/c@1.0.0 with files:",
    `   file://${ROOT}protocol/mod.ts (1KB)`,
    "Success Dry run complete",
    `   file://${ROOT}src/other.ts (1KB)`,
  ].join("\n");
  const files = publishedFiles(text);
  assert.deepEqual([...files.get("@a/b")!], ["client/mod.ts", "client/deno.json"]);
  assert.deepEqual([...files.get("@a/c")!], ["protocol/mod.ts"]);
});

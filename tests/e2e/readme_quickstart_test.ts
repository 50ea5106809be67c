/**
 * The README's quick start runs as written: its CLI commands, run in order
 * by bash against a fresh server, go from nothing to a stored intent. And
 * every relative link of the README and of `docs/` leads to a file that
 * exists, and to a heading of it when the link names one.
 *
 * The quick start's blocks are the first `sh` blocks after the markers
 * `<!-- quickstart:server -->` and `<!-- quickstart:cli -->`. The server
 * block is not run (the test starts its own server on a free port, with the
 * admin token the block exports); the CLI block is, in a folder of its own
 * that links to the project, with `INTENTS_URL` naming that server.
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../support/server.ts";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const readme = Deno.readTextFileSync(join(projectRoot, "README.md"));

/** The first `sh` block after `<!-- marker -->`. */
function shellBlockAfter(markdown: string, marker: string): string {
  const at = markdown.indexOf(`<!-- ${marker} -->`);
  assert.ok(at >= 0, `README.md has no <!-- ${marker} --> marker`);
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  assert.ok(block, `README.md has no sh block after <!-- ${marker} -->`);
  return block[1];
}

/** The block's commands, a line continued with `\` joined to the next; comment lines dropped. */
function commandsOf(block: string): string[] {
  const commands: string[] = [];
  let current = "";
  for (const line of block.split("\n")) {
    if (current === "" && (line.trim() === "" || line.trim().startsWith("#"))) continue;
    current += line;
    if (line.endsWith("\\")) {
      current += "\n";
      continue;
    }
    commands.push(current);
    current = "";
  }
  if (current !== "") commands.push(current);
  return commands;
}

/** The value the block exports as `ADMIN_TOKEN`. */
function exportedToken(block: string): string {
  const match = /^export ADMIN_TOKEN=(\S+)/m.exec(block);
  assert.ok(match, "the block exports no ADMIN_TOKEN");
  return match[1];
}

/**
 * A folder of its own in which `deno task` finds the project's `deno.json`
 * and code (links to them), so the files the quick start writes stay there.
 */
async function scratchProject(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "intents-quickstart-" });
  for await (const entry of Deno.readDir(projectRoot)) {
    const wanted = entry.isDirectory
      ? !["data", "node_modules", ".git"].includes(entry.name)
      : ["deno.json", "deno.lock"].includes(entry.name);
    if (wanted) await Deno.symlink(join(projectRoot, entry.name), join(dir, entry.name));
  }
  return dir;
}

/**
 * A bash script that runs `commands` in order in one shell (so variables
 * carry from one to the next) and stops at the first that fails, naming it.
 */
function scriptOf(commands: string[]): string {
  const lines = ["set -o pipefail"];
  commands.forEach((command, i) => {
    lines.push(command);
    lines.push(
      `status=$?; if [ "$status" -ne 0 ]; then echo "quickstart: command ${i} exited $status" >&2; exit 1; fi`,
    );
  });
  return `${lines.join("\n")}\n`;
}

Deno.test("the README's quick start goes from nothing to a stored intent with the CLI", async () => {
  const serverBlock = shellBlockAfter(readme, "quickstart:server");
  assert.match(serverBlock, /^deno task start\b/m, "the server block runs deno task start");
  assert.ok(
    serverBlock.includes("npx --yes deno@2 task start"),
    "the server block shows the npx form",
  );
  const cliBlock = shellBlockAfter(readme, "quickstart:cli");
  const token = exportedToken(serverBlock);
  assert.equal(exportedToken(cliBlock), token, "both terminals use the same token");
  const commands = commandsOf(cliBlock);
  assert.ok(commands.some((c) => c.includes("cli submit")), "the quick start submits an intent");

  const server = await startServer({ env: { ADMIN_TOKEN: token } });
  const dir = await scratchProject();
  try {
    const env = Deno.env.toObject();
    delete env.ADMIN_TOKEN;
    delete env.EVENTS_TOKEN;
    const run = await new Deno.Command("bash", {
      args: ["-c", scriptOf(commands)],
      cwd: dir,
      env: {
        ...env,
        // The `deno` of the commands is the one running this test.
        PATH: `${dirname(Deno.execPath())}:${env.PATH ?? "/usr/bin:/bin"}`,
        INTENTS_URL: server.url,
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    const decoder = new TextDecoder();
    const stderr = decoder.decode(run.stderr);
    const failed = /quickstart: command (\d+) exited (\d+)/.exec(stderr);
    assert.equal(
      run.code,
      0,
      failed
        ? `"${commands[Number(failed[1])]}" exited ${failed[2]}:\n${stderr}`
        : `bash exited ${run.code}:\n${stderr}`,
    );

    const headers = { authorization: `Bearer ${token}` };
    const list = await fetch(`${server.url}/intents?limit=100`, { headers });
    assert.equal(list.status, 200);
    const { items } = await list.json();
    assert.equal(items.length, 1, "the quick start stores one intent");
    const [stored] = items;
    assert.equal(stored.state, "accepted");
    const one = await fetch(`${server.url}/intents/${encodeURIComponent(stored.id)}`, { headers });
    assert.equal(one.status, 200);
    assert.deepEqual(await one.json(), stored);
    assert.ok(
      decoder.decode(run.stdout).includes(`stored intent ${stored.id}`),
      "submit printed the stored intent",
    );
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** Markdown without its fenced code blocks, where links and headings are not. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** The anchors of a page's headings, as GitHub makes them (`## 4. POST /intents` → `4-post-intents`). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text] of withoutCode(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const plain = text
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/`/g, "")
      .toLowerCase();
    const slug = plain.replace(/[^\p{L}\p{M}\p{N}_ -]/gu, "").replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** README.md and every Markdown page under docs/, relative to the project. */
function pages(): string[] {
  const found = ["README.md"];
  for (const entry of Deno.readDirSync(join(projectRoot, "docs"))) {
    if (entry.isFile && entry.name.endsWith(".md")) found.push(join("docs", entry.name));
  }
  return found.sort();
}

Deno.test("every relative link of the README and docs/ leads to a file and heading that exist", () => {
  const broken: string[] = [];
  for (const page of pages()) {
    const text = Deno.readTextFileSync(join(projectRoot, page));
    for (const [, target] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split("#", 2);
      const file = path === ""
        ? join(projectRoot, page)
        : resolve(projectRoot, dirname(page), path);
      let exists = false;
      try {
        Deno.statSync(file);
        exists = true;
      } catch {
        exists = false;
      }
      if (!exists) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && file.endsWith(".md")) {
        if (!anchorsOf(Deno.readTextFileSync(file)).has(anchor)) {
          broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});

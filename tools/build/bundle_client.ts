/**
 * Bundles the browser entry of the client library (`client/browser.ts`) into
 * `static/client.js`, an ES module the passkey page imports without a build
 * step. `deno task bundle` runs it.
 *
 * The bundle starts with a header recording a SHA-256 over its inputs: every
 * local module in its import graph (path and bytes) and the locked version and
 * integrity of every npm package it pulls in. `tests/unit/bundle_fresh_test.ts`
 * recomputes that digest and fails when the committed bundle is stale.
 *
 * Only the lock entries of the bundled packages are hashed, not all of
 * `deno.lock`: adding an unrelated dependency elsewhere does not change the
 * bundle's bytes, so it should not make the bundle stale.
 * @module
 */

import { dirname, join, relative } from "node:path";
import { hex } from "@scure/base";
import { fileURLToPath as fromFileUrl } from "node:url";

/** The project root. */
export const ROOT = join(dirname(fromFileUrl(import.meta.url)), "..", "..");
/** The entry module, relative to the root. */
export const ENTRY = "client/browser.ts";
/** The committed bundle, relative to the root. */
export const OUTPUT = "static/client.js";

const DIGEST_LINE = /^\/\/ inputs-sha256: ([0-9a-f]{64})$/m;

/** One input of the bundle: a name (a root-relative path or `npm:name@version`) and its bytes. */
export interface BundleInput {
  name: string;
  bytes: Uint8Array;
}

/**
 * SHA-256 over the inputs, in name order, each as its name, a NUL, its length
 * and its bytes, so no two different input sets share a preimage.
 */
export async function digestInputs(inputs: readonly BundleInput[]): Promise<string> {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (
    const input of [...inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  ) {
    parts.push(encoder.encode(`${input.name}\0${input.bytes.length}\0`), input.bytes);
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return hex.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", all)));
}

interface DenoInfo {
  modules: { specifier: string; kind?: string; local?: string; error?: string }[];
  npmPackages?: Record<string, { name: string; version: string; dependencies: string[] }>;
}

interface DenoLock {
  npm?: Record<string, { integrity?: string }>;
}

/** The npm package id (`name@version`) in an `npm:` module specifier. */
function npmPackageId(specifier: string): string {
  const match = /^npm:\/?((?:@[^/]+\/)?[^/@]+@[^/]+)/.exec(specifier);
  if (!match) throw new Error(`cannot read an npm package from ${specifier}`);
  return match[1];
}

/** The inputs of the bundle, from `deno info` on the entry and from `deno.lock`. */
export async function bundleInputs(): Promise<BundleInput[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ENTRY],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  if (!output.success) {
    throw new Error(`deno info failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as DenoInfo;
  const lock = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.lock"))) as DenoLock;

  const inputs: BundleInput[] = [];
  const packages = new Set<string>();
  for (const module of info.modules) {
    if (module.error) throw new Error(`${module.specifier}: ${module.error}`);
    if (module.specifier.startsWith("file:")) {
      const path = fromFileUrl(module.specifier);
      inputs.push({ name: relative(ROOT, path), bytes: await Deno.readFile(path) });
    } else if (module.specifier.startsWith("npm:")) {
      packages.add(npmPackageId(module.specifier));
    } else {
      throw new Error(`the browser bundle must not import ${module.specifier}`);
    }
  }
  // The packages the bundled ones depend on are bundled too.
  const pending = [...packages];
  while (pending.length > 0) {
    const id = pending.pop()!;
    for (const dep of info.npmPackages?.[id]?.dependencies ?? []) {
      if (!packages.has(dep)) {
        packages.add(dep);
        pending.push(dep);
      }
    }
  }
  const encoder = new TextEncoder();
  for (const id of packages) {
    const integrity = lock.npm?.[id]?.integrity;
    if (!integrity) throw new Error(`deno.lock has no integrity for npm:${id}`);
    inputs.push({ name: `npm:${id}`, bytes: encoder.encode(integrity) });
  }
  return inputs;
}

/** The digest recorded in a bundle's header, or `null` when there is none. */
export function recordedDigest(bundle: string): string | null {
  return DIGEST_LINE.exec(bundle.slice(0, 4096))?.[1] ?? null;
}

/** The header of a bundle made from `inputs`. */
export function header(inputs: readonly BundleInput[], digest: string): string {
  const names = inputs.map((i) => i.name).sort();
  return [
    // Generated code is neither formatted nor linted; its sources are.
    "// deno-fmt-ignore-file",
    "// deno-lint-ignore-file",
    `// Generated by \`deno task bundle\` (tools/build/bundle_client.ts) from ${ENTRY}. Do not edit.`,
    `// inputs-sha256: ${digest}`,
    ...names.map((name) => `// input: ${name}`),
    "",
  ].join("\n");
}

/** Bundles the entry and writes `static/client.js`; returns the digest. */
export async function bundle(): Promise<string> {
  const inputs = await bundleInputs();
  const digest = await digestInputs(inputs);
  const temp = await Deno.makeTempFile({ prefix: "client-bundle-", suffix: ".js" });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "browser",
        "--format",
        "esm",
        "--output",
        temp,
        ENTRY,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    if (!output.success) {
      throw new Error(`deno bundle failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    // Module path comments name the local npm cache; name the package instead, so the
    // bundle is the same on every machine.
    const code = (await Deno.readTextFile(temp)).replace(
      /^\/\/ \S*?registry\.npmjs\.org\/((?:@[^/\s]+\/)?[^/\s]+)\/([^/\s]+)\/(\S+)$/gm,
      "// npm:$1@$2/$3",
    );
    await Deno.writeTextFile(join(ROOT, OUTPUT), header(inputs, digest) + code);
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
  return digest;
}

if (import.meta.main) {
  const digest = await bundle();
  console.log(`${OUTPUT}: inputs-sha256 ${digest}`);
}

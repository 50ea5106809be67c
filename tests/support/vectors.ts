/**
 * Locates the shared public test vectors. They are read at test time from
 * `VECTORS_DIR` (default `../shared/vectors` beside the project) and never
 * copied into the repository.
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** The vectors folder, or `null` when it is not present on this machine. */
export function vectorsDir(): string | null {
  const fromEnv = Deno.env.get("VECTORS_DIR");
  if (fromEnv) {
    if (!exists(fromEnv)) {
      throw new Error(`VECTORS_DIR=${fromEnv} is not a directory`);
    }
    return fromEnv;
  }
  const fallback = join(projectRoot, "..", "shared", "vectors");
  return exists(fallback) ? fallback : null;
}

let warned = false;

/**
 * Options for `Deno.test` of a test that needs the vectors: the test is
 * ignored, with a printed reason, when they are missing.
 */
export function needsVectors(): { ignore: boolean } {
  const dir = vectorsDir();
  if (!dir && !warned) {
    warned = true;
    console.warn(
      "vector tests skipped: no test vectors found (set VECTORS_DIR or place them at ../shared/vectors)",
    );
  }
  return { ignore: dir === null };
}

/** Reads a JSON file below the vectors folder. */
export function readVectorJson<T = unknown>(relative: string): T {
  const dir = vectorsDir();
  if (!dir) throw new Error("test vectors are not available");
  return JSON.parse(Deno.readTextFileSync(join(dir, relative))) as T;
}

/** Reads a file below the vectors folder as bytes. */
export function readVectorBytes(relative: string): Uint8Array {
  const dir = vectorsDir();
  if (!dir) throw new Error("test vectors are not available");
  return Deno.readFileSync(join(dir, relative));
}

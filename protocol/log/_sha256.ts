/**
 * SHA-256 for the log's hashing (private to the log's modules): the
 * runtime's own where it offers `node:crypto` (Deno, Node.js), several times
 * faster than JavaScript on the short inputs a tree hashes, else noble's
 * (browsers). Both are SHA-256: the digest is the same.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { concatBytes } from "./_bytes.ts";

interface NativeHash {
  update(data: Uint8Array): NativeHash;
  digest(): Uint8Array;
}

/** `node:crypto`'s `createHash`, where the runtime has it without an import. */
const createHash = (globalThis as {
  process?: { getBuiltinModule?: (id: string) => { createHash?: (name: string) => NativeHash } };
}).process?.getBuiltinModule?.("node:crypto")?.createHash;

/** SHA-256 of the concatenation of `parts`. */
export function sha256Of(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  if (createHash) {
    const hash = createHash("sha256");
    for (const part of parts) hash.update(part);
    // A copy of its own: the runtime's digest may be a view of a shared buffer.
    return new Uint8Array(hash.digest());
  }
  return sha256(parts.length === 1 ? parts[0] : concatBytes(...parts)) as Uint8Array<ArrayBuffer>;
}

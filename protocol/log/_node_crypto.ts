/**
 * `node:crypto`, where the runtime has it without an import (Deno,
 * Node.js; private to the log's modules): the log's hashing and signing use
 * it there, and noble's elsewhere (browsers), with the same results.
 * @module
 */

/** What the log's modules use of it. */
export interface NodeCrypto {
  createHash?: (name: string) => { update(data: Uint8Array): unknown; digest(): Uint8Array };
  hash?: (name: string, data: Uint8Array, encoding: "hex") => string;
  createPrivateKey?: (
    options: { key: Uint8Array; format: "der"; type: "pkcs8" },
  ) => unknown;
  sign?: (algorithm: null, data: Uint8Array, key: unknown) => Uint8Array;
}

/** The runtime's `node:crypto`, or undefined. */
export const nodeCrypto: NodeCrypto | undefined = (globalThis as {
  process?: { getBuiltinModule?: (id: string) => NodeCrypto | undefined };
}).process?.getBuiltinModule?.("node:crypto");

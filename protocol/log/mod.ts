/**
 * The verifiable log of docs/interface.md §14, its pure parts stated once
 * for the service and its clients: RFC 6962 hashing and proofs (`hash.ts`),
 * C2SP tlog-tiles paths, tiles and entry bundles (`tile.ts`), a tree grown
 * as tiles (`tile_append.ts`), the entries that commit to events
 * (`entry.ts`), signed notes and the log's key (`note.ts`, as
 * `golang.org/x/mod/sumdb/note` has them), checkpoints (`checkpoint.ts`),
 * Ed25519 witness cosignatures (`cosignature.ts`), the check of a checkpoint
 * against a log key and a witness policy (`checkpoint_verify.ts`), and
 * `c2sp.org/tlog-proof@v1` proofs (`proof.ts`).
 *
 * Nothing here stores or fetches: hashes are read through a function the
 * caller gives, so a server reads them from its tiles and a client from the
 * tiles it fetched.
 *
 * @example
 * ```ts
 * import {
 *   entryBytes,
 *   formatCheckpoint,
 *   formatTlogProof,
 *   generateNoteKey,
 *   leafHash,
 *   memoryTree,
 *   parseSignerKey,
 *   proveInclusion,
 *   signNote,
 *   treeHash,
 *   verifyTlogProof,
 * } from "./mod.ts";
 *
 * const { signerKey, verifierKey } = generateNoteKey("example.com/log");
 * const entries = [entryBytes("intent.accepted", { id: "a" }), entryBytes("intent.accepted", { id: "b" })];
 * const leaves = entries.map(leafHash);
 * const checkpoint = signNote(
 *   formatCheckpoint({ origin: "example.com/log", size: 2, rootHash: treeHash(leaves) }),
 *   [parseSignerKey(signerKey)],
 * );
 * const proof = formatTlogProof({ index: 1, proof: proveInclusion(1, 2, memoryTree(leaves)), checkpoint });
 * verifyTlogProof({ proof, entry: entries[1], logKey: verifierKey }).ok; // true
 * ```
 * @module
 */

export * from "./hash.ts";
export * from "./tile.ts";
export * from "./tile_append.ts";
export * from "./entry.ts";
export * from "./note.ts";
export * from "./checkpoint.ts";
export * from "./cosignature.ts";
export * from "./checkpoint_verify.ts";
export * from "./proof.ts";

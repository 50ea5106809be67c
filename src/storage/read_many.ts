/**
 * Reading many keys at once within KV's limit on one read.
 * @module
 */

import { KV_READ_KEYS } from "./layout.ts";

/**
 * Reads `readKeys`, {@link KV_READ_KEYS} at a time (what one `getMany` may
 * ask for), all at once; the entries in the order of the keys.
 */
export async function readMany(
  kv: Deno.Kv,
  readKeys: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  if (readKeys.length <= KV_READ_KEYS) return await kv.getMany(readKeys as Deno.KvKey[]);
  const reads: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
  for (let i = 0; i < readKeys.length; i += KV_READ_KEYS) {
    reads.push(kv.getMany(readKeys.slice(i, i + KV_READ_KEYS)));
  }
  return (await Promise.all(reads)).flat();
}

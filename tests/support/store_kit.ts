/**
 * What the store's own tests build again and again: a small intent, a
 * pending one, a template to reference, a KV file in a temp folder of its own.
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { DocumentRef, NewIntent } from "../../src/domain/intent.ts";
import type { KvStore } from "../../src/storage/kv_store.ts";

/** An accepted, unsigned Variant A intent under `ref`, its body the id as a JSON string. */
export function smallIntent(id: string, ref: Pick<DocumentRef, "id">): NewIntent {
  return {
    id,
    variant: "A",
    refId: ref.id,
    authorship: { kind: "Unsigned", signers: [] },
    body: new TextEncoder().encode(`"${id}"`),
    state: "accepted",
  };
}

/**
 * A Variant B intent under policy `p`, pending: signed by `a` of a 2-of-2
 * quorum of `a` and `b`, its approval window `windowS` seconds.
 */
export function pendingIntent(id: string, windowS = 60): NewIntent {
  return {
    id,
    variant: "B",
    refId: "p",
    authorship: { kind: "Ed25519", signers: ["a"] },
    body: new TextEncoder().encode(`{"intent":{"id":"${id}","policy_id":"p"}}`),
    state: "pending",
    quorum: {
      signers: new Map([["a", { keyText: "a", weight: 1 }], ["b", { keyText: "b", weight: 1 }]]),
      threshold: 2,
      unsigned: false,
      approvalWindowS: windowS,
    },
    approvals: [{ key: "a", kind: "Ed25519" }],
  };
}

/** Stores a one-byte `text/plain` template `id` and returns the reference an insert checks. */
export async function plainTemplate(store: KvStore, id = "T"): Promise<DocumentRef> {
  await store.putDocument("template", id, { contentType: "text/plain", bytes: new Uint8Array(1) });
  const ref = await store.findDocument("template", id);
  if (!ref) throw new Error(`template ${id} not found after storing it`);
  return ref;
}

/** Runs `fn` with the path of a KV file in a new temp folder, removed afterwards. */
export async function withKvFile(
  prefix: string,
  fn: (path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  try {
    await fn(join(dir, "intents.kv"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes `value` to a fresh in-memory KV and reads it back, as any reader of the store would. */
export async function throughKv(value: unknown): Promise<unknown> {
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["v"], value);
    return (await kv.get(["v"])).value;
  } finally {
    kv.close();
  }
}

/** Stores `count` intents named `prefix-i`, nine a batch, as requests' commits do. */
export async function insertMany(store: KvStore, prefix: string, count: number): Promise<void> {
  const ref = await plainTemplate(store, `T-${prefix}`).catch(async () =>
    (await store.findDocument("template", `T-${prefix}`))!
  );
  for (let i = 0; i < count; i += 9) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 9); j++) {
      batch.push({ intent: smallIntent(`${prefix}-${j}`, ref), ref });
    }
    const results = await store.insertIntents(batch);
    assert.ok(results.every((r) => r.outcome === "created"));
  }
}

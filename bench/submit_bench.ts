/**
 * One intent submit commit on Deno KV (`:memory:` and a file): the atomic
 * commit that checks the id is new, the template unchanged and the feed head
 * unmoved, and writes the event, the pointer and the head. Also 32 concurrent
 * inserts through the group commit writer, per insert, to show what grouping
 * saves.
 */

import { join } from "node:path";
import type { DocumentRef } from "../src/domain/intent.ts";
import type { PendingIntent } from "../src/domain/store.ts";
import { KvStore } from "../src/storage/kv_store.ts";
import { createWriter } from "../src/storage/group_commit.ts";
import { TYPICAL_SIGNER, typicalRequest } from "./_typical_request.ts";
const body = new TextEncoder().encode(
  JSON.stringify(typicalRequest("7c0e2f5e-1f1a-4d7e-9a43-3c2b1d0e9f88")),
);

async function setUp(path: string): Promise<{ store: KvStore; ref: DocumentRef; kv: Deno.Kv }> {
  const kv = await Deno.openKv(path);
  const store = new KvStore(kv);
  await store.putDocument("policy", "policy", { contentType: "application/json", bytes: body });
  const ref = await store.findDocument("policy", "policy");
  if (!ref) throw new Error("policy not stored");
  return { store, ref, kv };
}

function pending(ref: DocumentRef): PendingIntent {
  return {
    intent: {
      id: crypto.randomUUID(),
      variant: "B",
      refId: "policy",
      authorship: { kind: "Ed25519", signers: [TYPICAL_SIGNER] },
      body,
      state: "accepted",
    },
    ref,
  };
}

const dir = await Deno.makeTempDir({ prefix: "submit-bench-" });
const targets = {
  ":memory:": await setUp(":memory:"),
  file: await setUp(join(dir, "intents.kv")),
};

for (const [name, { store, ref }] of Object.entries(targets)) {
  Deno.bench(`one submit commit (${name} KV)`, { group: name, baseline: true }, async () => {
    const [result] = await store.insertIntents([pending(ref)]);
    if (result.outcome !== "created") throw new Error("not created");
  });

  const grouped = createWriter(store, { batchMax: 32 });
  Deno.bench(
    `32 concurrent inserts, COMMIT_BATCH_MAX=32 (${name} KV)`,
    { group: name, n: 200 },
    async (b) => {
      const batch = Array.from({ length: 32 }, () => pending(ref));
      b.start();
      await Promise.all(batch.map((p) => grouped.insert(p)));
      b.end();
    },
  );
}

globalThis.addEventListener("unload", () => {
  for (const { kv } of Object.values(targets)) kv.close();
  Deno.removeSync(dir, { recursive: true });
});

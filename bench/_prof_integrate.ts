import { join } from "node:path";
import { canonicalBytesWithin } from "@intents/protocol/jcs";
import type { NewIntent } from "../src/domain/intent.ts";
import { integrateStep, readEntries } from "../src/log/integrate.ts";
import { KvStore } from "../src/storage/kv_store.ts";
import { TYPICAL_POLICY, TYPICAL_SIGNER, typicalRequest } from "./_typical_request.ts";
const EVENTS = 8192;
function intent(): NewIntent {
  const id = crypto.randomUUID();
  const value = typicalRequest(id, `load-${id}`);
  const { bytes } = canonicalBytesWithin(value, value.intent);
  return {
    id,
    variant: "B",
    refId: TYPICAL_POLICY,
    authorship: { kind: "Ed25519", signers: [TYPICAL_SIGNER] },
    body: new TextEncoder().encode(JSON.stringify(value)),
    state: "accepted",
    canonical: { bytes, attrs: value.intent.attrs },
  };
}
const dir = await Deno.makeTempDir();
const path = join(dir, "f.kv");
{
  const kv = await Deno.openKv(path);
  const store = new KvStore(kv);
  await store.prepare();
  await store.putDocument("policy", TYPICAL_POLICY, {
    contentType: "application/json",
    bytes: new TextEncoder().encode("{}"),
  });
  const ref = (await store.findDocument("policy", TYPICAL_POLICY))!;
  for (let i = 0; i < EVENTS; i += 64) {
    await store.insertIntents(Array.from({ length: 64 }, () => ({ intent: intent(), ref })));
  }
  await store.moveAll();
  kv.close();
}
const kv0 = await Deno.openKv(path);
const s0 = new KvStore(kv0);
const held: Uint8Array[] = [];
for (let r; (r = await readEntries(s0, held.length, 500)) !== null;) held.push(...r.entries);
kv0.close();
let total = 0;
for (let round = 0; round < 8; round++) {
  const p = join(dir, `r${round}.kv`);
  await Deno.copyFile(path, p);
  const kv = await Deno.openKv(p);
  const store = new KvStore(kv);
  await store.prepare();
  const options = {
    kv,
    store,
    recent: (after: number, limit: number) => held.slice(after, after + limit),
  };
  const t = performance.now();
  let count = 0;
  let steps = 0;
  for (
    let step = await integrateStep(options);
    step.outcome === "integrated";
    step = await integrateStep(options)
  ) {
    count += step.count;
    steps++;
  }
  total += performance.now() - t;
  kv.close();
  console.log(round, count, steps, ((performance.now() - t) * 1000 / count).toFixed(2), "us/entry");
}

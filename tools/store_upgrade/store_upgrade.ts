/**
 * Brings a store an earlier version wrote over to this version, offline:
 * values kept as JavaScript values are rewritten as bytes (`convert.ts`;
 * they are readable only by the Deno that wrote them or a newer one, and
 * Deno Deploy runs an older one), the fence is made (`src/storage/fence.ts`),
 * and intents stored before the feed existed are taken into it
 * (`src/storage/take_in.ts`). Safe to run again, and while this version
 * serves; an interrupted run loses nothing (docs/deployment.md, upgrading).
 *
 * ```sh
 * KV_PATH=./data/intents.kv deno task store-upgrade
 * KV_PATH=https://api.deno.com/v2/databases/<id>/connect DENO_KV_ACCESS_TOKEN=… \
 *   deno task store-upgrade                                  # Deno Deploy's KV, from outside
 * ```
 *
 * Exits 0 once the store is this version's, 2 on a usage or connection error.
 * @module
 */

import { toolOptions } from "../options.ts";
import { upgradeStore } from "./upgrade.ts";

const USAGE = "usage: KV_PATH=<file or KV Connect URL> deno task store-upgrade";
const { fail, parse } = toolOptions("store-upgrade");

async function main(): Promise<number> {
  parse(Deno.args, {}, USAGE);
  const path = Deno.env.get("KV_PATH");
  if (!path) fail(`KV_PATH is not set\n${USAGE}`);
  let kv: Deno.Kv;
  try {
    kv = await Deno.openKv(path);
  } catch (error) {
    return fail(`cannot open ${path}: ${(error as Error).message.split("\n")[0]}`);
  }
  try {
    let told = performance.now();
    const { rewritten, taken, from } = await upgradeStore(kv, (count) => {
      if (performance.now() - told < 2_000) return;
      told = performance.now();
      console.error(`store-upgrade: ${count} values rewritten so far`);
    });
    console.log(
      `${path}: this version's store (${rewritten} values rewritten as bytes, ` +
        `${taken} intents taken into the feed${from === "earlier" ? ", fenced" : ""})`,
    );
    return 0;
  } catch (error) {
    return fail((error as Error).message.split("\n")[0]);
  } finally {
    kv.close();
  }
}

if (import.meta.main) Deno.exit(await main());

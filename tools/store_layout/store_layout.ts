/**
 * Shows a store's write layout, and switches it to the staged layout: the
 * operator's step of an upgrade (docs/deployment.md, upgrading), run once no
 * process of a version that writes the head layout runs.
 *
 * ```sh
 * KV_PATH=./data/intents.kv deno task store-layout            # says which layout
 * KV_PATH=./data/intents.kv deno task store-layout --switch   # switches it
 * KV_PATH=https://api.deno.com/v2/databases/<id>/connect DENO_KV_ACCESS_TOKEN=… \
 *   deno task store-layout --switch                          # Deno Deploy's KV, from outside
 * ```
 *
 * Exits 0 when the store is (now) in the staged layout, 1 when it is in the
 * head layout and was not switched, 2 on a usage or connection error.
 * @module
 */

import { parseArgs } from "node:util";
import { readWriteLayout, switchToStaged } from "../../src/storage/write_layout.ts";

const USAGE = "usage: KV_PATH=<file or KV Connect URL> deno task store-layout [--switch]";

const SAYS = {
  staged: "the staged layout: commits of several instances do not take turns",
  head: "the head layout: every commit takes turns on the feed head (a store an earlier " +
    "version began); once no earlier version runs, switch it with --switch",
  empty: "empty: the first start of this version begins the staged layout",
} as const;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args,
      options: { switch: { type: "boolean" }, help: { type: "boolean" } },
      strict: true,
    }));
  } catch (error) {
    console.error(`store-layout: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const path = Deno.env.get("KV_PATH");
  if (!path) {
    console.error(`store-layout: KV_PATH is not set\n${USAGE}`);
    return 2;
  }
  let kv: Deno.Kv;
  try {
    kv = await Deno.openKv(path);
  } catch (error) {
    console.error(`store-layout: cannot open ${path}: ${(error as Error).message.split("\n")[0]}`);
    return 2;
  }
  try {
    if (!values.switch) {
      const layout = await readWriteLayout(kv);
      console.log(`${path}: ${SAYS[layout]}`);
      return layout === "head" ? 1 : 0;
    }
    const { before, after } = await switchToStaged(kv);
    console.log(
      before === after
        ? `${path}: already in ${SAYS[after]}`
        : `${path}: switched from the ${before} layout to ${SAYS[after]}`,
    );
    return 0;
  } catch (error) {
    console.error(`store-layout: ${(error as Error).message.split("\n")[0]}`);
    return 2;
  } finally {
    kv.close();
  }
}

if (import.meta.main) Deno.exit(await main());

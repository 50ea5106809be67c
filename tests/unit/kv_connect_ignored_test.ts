/**
 * Where the tests that need a KV Connect server run (`tests/support/stores.ts`):
 * everywhere denokv's backend is found; where it is missing they are ignored
 * with a reason, except with `CI` set on linux-x64, the backend's platform,
 * where a missing backend fails them.
 */

import assert from "node:assert/strict";
import { BACKEND_PLATFORM, locateBackend, thisPlatform } from "../../testing/kv_connect/backend.ts";
import { ignoresKvConnect, KV_CONNECT_MISSING } from "../support/stores.ts";

Deno.test("KV Connect tests run where the backend is found, in CI or not", () => {
  for (const ci of [false, true]) {
    assert.equal(ignoresKvConnect({ missing: null, ci, platform: "linux-x64" }), false);
  }
});

Deno.test("off linux-x64 the KV Connect tests are ignored, in CI too", () => {
  const missing = "exists for linux-x64 only; this is darwin-arm64";
  for (const platform of ["darwin-arm64", "darwin-x64", "linux-arm64", "windows-x64"]) {
    for (const ci of [false, true]) {
      assert.equal(ignoresKvConnect({ missing, ci, platform }), true, `${platform}, CI ${ci}`);
    }
  }
});

Deno.test("on linux-x64 a missing backend is ignored outside CI and fails in CI", () => {
  const missing = "cannot be found: not in the npm cache";
  assert.equal(ignoresKvConnect({ missing, ci: false, platform: BACKEND_PLATFORM }), true);
  assert.equal(ignoresKvConnect({ missing, ci: true, platform: BACKEND_PLATFORM }), false);
});

Deno.test("the backend is located on its platform, and elsewhere says why not", async () => {
  const location = await locateBackend();
  if (thisPlatform() === BACKEND_PLATFORM) {
    assert.ok("file" in location, JSON.stringify(location));
    assert.match(location.file, /\.node$/);
    assert.equal(KV_CONNECT_MISSING, null);
  } else {
    assert.ok("missing" in location);
    assert.match(location.missing, /exists for linux-x64 only; this is /);
    assert.equal(KV_CONNECT_MISSING, location.missing);
  }
});

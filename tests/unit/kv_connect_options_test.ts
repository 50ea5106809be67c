/** The command line of the KV Connect server of `testing/kv_connect/` (`main.ts`). */

import assert from "node:assert/strict";
import { MIN_TOKEN_LENGTH, parseOptions } from "../../testing/kv_connect/main.ts";

Deno.test("kv-connect: the command line takes the token from the environment or a flag", () => {
  const token = "t".repeat(MIN_TOKEN_LENGTH);
  assert.deepEqual(parseOptions(["--path", "kv.sqlite", "--port", "4512"], { token }), {
    path: "kv.sqlite",
    port: 4512,
    hostname: "127.0.0.1",
    token,
  });
  assert.equal(parseOptions(["--path", "f", "--token", `${token}x`], { token }).token, `${token}x`);
  assert.throws(() => parseOptions(["--path", "f"], {}), /no access token/);
  assert.throws(() => parseOptions(["--path", "f"], { token: "short" }), /at minimum 12 chars/);
  assert.throws(() => parseOptions(["--port", "1"], { token }), /--path FILE is required/);
  assert.throws(() => parseOptions(["--path", "f", "--port", "70000"], { token }), /port number/);
  assert.equal(parseOptions(["--path", "f", "--lose-answers", "3"], { token }).loseAnswers, 3);
  assert.throws(
    () => parseOptions(["--path", "f", "--lose-answers", "0"], { token }),
    /--lose-answers must be a whole number of at least 1/,
  );
});

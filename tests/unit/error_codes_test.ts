/**
 * The one list of error codes (src/errors.ts) against the lists kept apart on
 * purpose: the hostile-input oracle names, independently, the codes a client
 * may see from `POST /intents`; each must be a code of the service.
 */

import assert from "node:assert/strict";
import { ERROR_CODES } from "../../src/errors.ts";
import { ERROR_CODES as ORACLE_CODES } from "../fuzz/valid_bodies.ts";

Deno.test("every code the hostile-input oracle accepts is a code of the service", () => {
  const service = new Set<string>(ERROR_CODES);
  for (const code of ORACLE_CODES) assert.ok(service.has(code), code);
});

Deno.test("the service's codes are distinct snake_case names", () => {
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length);
  for (const code of ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
});

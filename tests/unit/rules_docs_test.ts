/**
 * The examples of docs/rules.md are rules the service accepts, and the
 * refusal it shows is the one the service gives.
 */

import assert from "node:assert/strict";
import { checkDocument } from "../../src/domain/governance.ts";
import { ServiceError } from "../../src/errors.ts";

const text = await Deno.readTextFile(new URL("../../docs/rules.md", import.meta.url));
const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]));
const encoder = new TextEncoder();
const document = blocks[0] as { authorization: { signers: Record<string, number> } };

function check(rules: unknown) {
  const authorization = { ...document.authorization, threshold: 1, rules };
  return checkDocument({ bytes: encoder.encode(JSON.stringify({ authorization })), json: true });
}

Deno.test("every example of docs/rules.md compiles", () => {
  assert.ok(blocks.length >= 5);
  assert.equal(
    checkDocument({ bytes: encoder.encode(JSON.stringify(document)), json: true })
      ?.rules?.length,
    2,
  );
  for (const rules of blocks.slice(1)) assert.ok(check(rules)?.rules, JSON.stringify(rules));
});

Deno.test("the refusal docs/rules.md shows is the service's", () => {
  const shown = text.match(/```text\n(authorization\.rules.*)\n```/)![1];
  const rules = [
    { when: "true", deny: "x" },
    { when: "intent.attrs.fields.to == amount", deny: "x" },
  ];
  assert.throws(() => check(rules), (error) => {
    assert.ok(error instanceof ServiceError);
    assert.equal(error.code, "invalid_rule");
    assert.equal(error.message, shown);
    return true;
  });
});

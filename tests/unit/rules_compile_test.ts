/**
 * Rules checked when a governed document is stored (docs/interface.md §15):
 * every refusal is 400 `invalid_rule` naming the rule's path, and for CEL the
 * line, column and reason, at most 200 characters of it.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { base58 } from "@scure/base";
import { checkDocument } from "../../src/domain/governance.ts";
import type { Quorum } from "../../src/domain/intent.ts";
import { ServiceError } from "../../src/errors.ts";

const edKey = () => base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const E1 = edKey();
const E2 = edKey();
const P_SECRET = p256.utils.randomSecretKey();
const P_FULL = base58.encode(p256.getPublicKey(P_SECRET, false));
const P_SHORT = base58.encode(p256.getPublicKey(P_SECRET, true));

/** Checks a document whose authorization names E1, E2 and P (weights 1, 2, 3) with `rules`. */
function check(rules: unknown): Quorum | null {
  const doc = {
    authorization: { signers: { [E1]: 1, [E2]: 2, [P_FULL]: 3 }, threshold: 2, rules },
  };
  return checkDocument({ bytes: new TextEncoder().encode(JSON.stringify(doc)), json: true });
}

/** Asserts that `rules` are refused with `invalid_rule`, the message starting with `path`. */
function refused(rules: unknown, path: string, mentions: string[] = []): string {
  try {
    check(rules);
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, "invalid_rule", error.message);
    assert.ok(error.message.startsWith(`${path}: `), error.message);
    for (const m of mentions) assert.ok(error.message.includes(m), `${error.message} ∌ ${m}`);
    // The path, ": ", and at most 200 characters of reason.
    assert.ok(error.message.length <= path.length + 2 + 200, error.message);
    return error.message;
  }
  assert.fail(`${JSON.stringify(rules)} was accepted`);
}

Deno.test("each effect alone compiles, cached with the quorum", () => {
  const quorum = check([
    { when: "intent.amount > 1000.0", threshold: 6 },
    { when: "true", signers: [E1, P_SHORT] },
    { when: "variant == 'B'", kinds: ["Passkey"] },
    { when: "intent.to in ['x', 'y']", deny: "blocked account" },
  ])!;
  assert.equal(quorum.rules?.length, 4);
  assert.deepEqual(quorum.rules!.map((r) => r.index), [0, 1, 2, 3]);
  assert.deepEqual(quorum.rules![0].effect, { threshold: 6 });
  // Keys compared as points: the uncompressed signer named compressed is the same signer.
  assert.deepEqual(
    [...(quorum.rules![1].effect as { signers: Set<string> }).signers],
    [E1, P_SHORT],
  );
});

Deno.test("a document without rules compiles to a quorum without rules", () => {
  const doc = { authorization: { signers: { [E1]: 1 }, threshold: 1 } };
  const quorum = checkDocument({
    bytes: new TextEncoder().encode(JSON.stringify(doc)),
    json: true,
  });
  assert.equal(quorum?.rules, undefined);
  assert.ok(quorum && !("rules" in quorum));
});

Deno.test("shape refusals name the rule's member", () => {
  refused([], "authorization.rules", ["at least one"]);
  refused(Array(17).fill({ when: "true", deny: "no" }), "authorization.rules", ["16"]);
  refused([{ when: "true" }], "authorization.rules[0]", ["exactly one effect"]);
  refused([{ when: "true", deny: "no", threshold: 1 }], "authorization.rules[0]", ["exactly one"]);
  refused([{ when: "true", deny: "" }], "authorization.rules[0].deny");
  refused([{ when: "true", deny: "x".repeat(201) }], "authorization.rules[0].deny");
  refused([{ when: "true", deny: "tab\there" }], "authorization.rules[0].deny", ["control"]);
  refused([{ when: "x".repeat(1001), deny: "no" }], "authorization.rules[0].when", ["1000"]);
  refused([{ when: 1, deny: "no" }], "authorization.rules[0].when");
  refused([{ when: "true", deny: "no", other: 1 }], "authorization.rules[0].other");
  refused([{ when: "true", threshold: 0 }], "authorization.rules[0].threshold");
  refused([{ when: "true", threshold: 7 }], "authorization.rules[0].threshold", ["6"]);
  refused([{ when: "true", signers: [] }], "authorization.rules[0].signers");
  refused([{ when: "true", signers: [E1, E1] }], "authorization.rules[0].signers", ["twice"]);
  refused([{ when: "true", signers: [P_FULL, P_SHORT] }], "authorization.rules[0].signers[1]");
  refused([{ when: "true", signers: [edKey()] }], "authorization.rules[0].signers[0]", [
    "not a signer",
  ]);
  refused([{ when: "true", kinds: [] }], "authorization.rules[0].kinds");
  refused([{ when: "true", kinds: ["Passkey", "Passkey"] }], "authorization.rules[0].kinds");
  refused([{ when: "true", kinds: ["Multisig"] }], "authorization.rules[0].kinds[0]");
  // The path names the rule at fault, after good ones.
  refused(
    [{ when: "true", deny: "no" }, { when: "true", deny: "no" }, { when: "1 +", deny: "no" }],
    "authorization.rules[2].when",
  );
});

Deno.test("CEL refusals give the line, column and reason", () => {
  const at = refused([{ when: "intent.amount >", deny: "no" }], "authorization.rules[0].when");
  assert.match(at, /at 1:\d+: /);
  refused([{ when: "true &&\n  request", deny: "no" }], "authorization.rules[0].when", [
    "at 2:3",
  ]);
  // Only the variables of §15.
  refused([{ when: "request.size() > 0", deny: "no" }], "authorization.rules[0].when", [
    "at 1:1",
    "unknown variable request",
  ]);
  // A boolean (or a dynamic value) only.
  for (const when of ["1 + 2", "'text'", "variant", "signers", "now", "[true]", "{'a': true}"]) {
    refused([{ when, deny: "no" }], "authorization.rules[0].when", ["not a boolean"]);
  }
  // A dynamic value passes: only evaluation can tell (a non-boolean is then a rule_error).
  assert.ok(check([{ when: "intent.flag", deny: "no" }]));
  // Standard definitions only: no extension libraries, no functions of our own.
  for (const when of ["intent.name.lowerAscii() == 'a'", "f(1)", "'a'.size(1) == 1"]) {
    refused([{ when, deny: "no" }], "authorization.rules[0].when", ["not a standard function"]);
  }
  refused(
    [{ when: "google.protobuf.Timestamp{} == now", deny: "no" }],
    "authorization.rules[0].when",
  );
});

Deno.test("bounds: nodes, nested comprehensions, literal patterns", () => {
  // size([…]) > 0 is the list's elements and four nodes more.
  const list = (n: number) => `size([${Array(n).fill("1").join(",")}]) > 0`;
  refused([{ when: list(197), deny: "no" }], "authorization.rules[0].when", ["200 nodes"]);
  assert.ok(check([{ when: list(196), deny: "no" }]));
  // One comprehension is fine, and so is a chain; one inside another is not.
  assert.ok(check([{ when: "intent.items.all(i, i.amount < 10.0)", deny: "no" }]));
  assert.ok(check([{ when: "intent.items.filter(i, i.amount > 1.0).all(i, i.ok)", deny: "no" }]));
  refused(
    [{ when: "intent.a.exists(x, intent.b.filter(y, y == x).size() > 0)", deny: "no" }],
    "authorization.rules[0].when",
    ["inside another"],
  );
  refused(
    [{ when: "intent.a.all(x, intent.b.exists(y, y == x))", deny: "no" }],
    "authorization.rules[0].when",
    ["inside another"],
  );
  refused(
    [{ when: "intent.to.matches(intent.pattern)", deny: "no" }],
    "authorization.rules[0].when",
    [
      "literal pattern",
    ],
  );
  refused([{ when: "intent.to.matches('[')", deny: "no" }], "authorization.rules[0].when", [
    "pattern",
  ]);
  assert.ok(check([{ when: "intent.to.matches('^acct-[0-9]+$')", deny: "no" }]));
  // The global form: its pattern, the second argument, bounded as the method's.
  assert.ok(check([{ when: "matches(intent.to, '^acct-[0-9]+$')", deny: "no" }]));
  refused(
    [{ when: "matches(intent.to, intent.pattern)", deny: "no" }],
    "authorization.rules[0].when",
    ["literal pattern"],
  );
  refused([{ when: "matches(intent.to, '(')", deny: "no" }], "authorization.rules[0].when", [
    "pattern",
  ]);
  // Deeply nested text is refused, not a crash.
  refused(
    [{ when: `${"(".repeat(490)}true${")".repeat(490)}`, deny: "no" }],
    "authorization.rules[0].when",
  );
});

Deno.test("a reason from the parser is cut to 200 characters", () => {
  const when = `intent.${"a".repeat(400)} ==`;
  const message = refused([{ when, deny: "no" }], "authorization.rules[0].when");
  assert.ok(message.length <= "authorization.rules[0].when: ".length + 200);
});

/**
 * Rules evaluated at submission (docs/interface.md §15): the variables, each
 * effect alone and combined into the effective quorum, the first failing or
 * denying rule deciding (fail closed), and the refusals of a submission that
 * cannot count under the effective quorum.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { base58 } from "@scure/base";
import { checkDocument, type SignedBy } from "../../src/domain/governance.ts";
import type { Quorum } from "../../src/domain/intent.ts";
import { applyRules } from "../../src/domain/rules/apply.ts";
import type { Verified } from "../../src/domain/authorship.ts";
import { ServiceError } from "../../src/errors.ts";

const edKey = () => base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const E1 = edKey();
const E2 = edKey();
const P_SECRET = p256.utils.randomSecretKey();
/** The passkey signer, named uncompressed by the document. */
const P_FULL = base58.encode(p256.getPublicKey(P_SECRET, false));
/** The same key as the rules see it: canonical compressed base58. */
const P_ID = base58.encode(p256.getPublicKey(P_SECRET, true));
const NOW = new Date("2026-11-27T10:30:00.000Z");
const encoder = new TextEncoder();

type Rules = Record<string, unknown>[];

/** A quorum of E1, E2 and P (weights 1, 2, 3), threshold 3, with `rules`. */
function quorumOf(rules: Rules, extra: Record<string, unknown> = {}): Quorum {
  const doc = {
    authorization: { signers: { [E1]: 1, [E2]: 2, [P_FULL]: 3 }, threshold: 3, rules, ...extra },
  };
  return checkDocument({ bytes: encoder.encode(JSON.stringify(doc)), json: true })!;
}

/** A signature by `keyId` of `kind`, as verification reports it. */
const by = (keyId: string, kind: "Ed25519" | "Passkey" = "Ed25519"): SignedBy =>
  kind === "Ed25519" ? { keyId, kind, path: "signature", signature: new Uint8Array(1) } : {
    keyId,
    kind,
    path: "signature",
    signature: new Uint8Array(1),
    authenticatorData: new Uint8Array(37),
    clientData: "{}",
  };

interface Run {
  signed?: SignedBy[] | null;
  intent?: Record<string, unknown>;
  variant?: "A" | "B";
  now?: Date;
}

/** Applies `rules` to a submission of `intent` signed by `signed` (null: Unsigned). */
function apply(rules: Rules, run: Run = {}, extra: Record<string, unknown> = {}) {
  const quorum = quorumOf(rules, extra);
  const variant = run.variant ?? "B";
  const signed = { id: "i-1", ...(run.intent ?? {}) };
  const body = variant === "A"
    ? { payload: signed, signature: {} }
    : { intent: signed, authorship: "Unsigned" };
  const signedBy = run.signed === undefined ? [by(E1)] : run.signed;
  const verified: Verified | null = signedBy === null
    ? null
    : { authorship: { kind: "Ed25519", signers: [] }, signedBy };
  return applyRules({
    quorum: { ...quorum, rules: quorum.rules! },
    document: "doc-id",
    variant,
    body: encoder.encode(JSON.stringify(body)),
    verified,
    now: run.now ?? NOW,
  });
}

function refusedWith(code: string, fn: () => unknown, mentions: string[] = []): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.code, code, error.message);
    for (const m of mentions) assert.ok(error.message.includes(m), `${error.message} ∌ ${m}`);
    return error.message;
  }
  assert.fail(`not refused with ${code}`);
}

const weights = (signers: Map<string, { weight: number }>) =>
  Object.fromEntries([...signers].map(([id, s]) => [id, s.weight]));

Deno.test("no rule true: the document's quorum, all kinds, no indices", () => {
  const { quorum, ruled } = apply([{ when: "false", threshold: 6 }]);
  assert.equal(quorum.threshold, 3);
  assert.deepEqual(weights(quorum.signers), { [E1]: 1, [E2]: 2, [P_ID]: 3 });
  assert.deepEqual(ruled, { kinds: ["Ed25519", "Passkey"], rules: [] });
  assert.equal(quorum.rules, undefined);
});

Deno.test("threshold alone: higher or lower, the greatest of the true rules", () => {
  assert.equal(apply([{ when: "true", threshold: 1 }]).quorum.threshold, 1);
  const { quorum, ruled } = apply([
    { when: "true", threshold: 2 },
    { when: "true", threshold: 5 },
    { when: "false", threshold: 6 },
    { when: "true", threshold: 4 },
  ]);
  assert.equal(quorum.threshold, 5);
  assert.deepEqual(ruled.rules, [0, 1, 3]);
});

Deno.test("signers alone and combined: kept where every true list names them", () => {
  const one = apply([{ when: "true", signers: [E1, P_FULL] }]);
  assert.deepEqual(weights(one.quorum.signers), { [E1]: 1, [P_ID]: 3 });
  const both = apply([
    { when: "true", signers: [E1, P_FULL] },
    { when: "true", signers: [P_ID, E1, E2] },
  ], { signed: [by(E1)] });
  assert.deepEqual(weights(both.quorum.signers), { [E1]: 1, [P_ID]: 3 });
});

Deno.test("kinds alone and combined: the intersection; keys of other kinds do not count", () => {
  const passkeys = apply([{ when: "true", kinds: ["Passkey"] }], { signed: [by(P_ID, "Passkey")] });
  assert.deepEqual(passkeys.ruled.kinds, ["Passkey"]);
  assert.deepEqual(weights(passkeys.quorum.signers), { [P_ID]: 3 });
  refusedWith("quorum_unreachable", () =>
    apply(
      [
        { when: "true", kinds: ["Ed25519", "Passkey"] },
        { when: "true", kinds: ["Ed25519"] },
      ],
      { signed: [by(E1)] },
      { threshold: 4 },
    ));
});

Deno.test("every effect together", () => {
  const { quorum, ruled } = apply([
    { when: "intent.amount > 1000.0", threshold: 4 },
    { when: "true", signers: [E2, P_FULL] },
    { when: "true", kinds: ["Passkey", "Ed25519"] },
    { when: "intent.to == 'blocked'", deny: "never to this account" },
  ], { intent: { amount: 5000, to: "fine" }, signed: [by(P_ID, "Passkey")] });
  assert.equal(quorum.threshold, 4);
  assert.deepEqual(weights(quorum.signers), { [E2]: 2, [P_ID]: 3 });
  assert.deepEqual(ruled, { kinds: ["Ed25519", "Passkey"], rules: [0, 1, 2] });
});

Deno.test("deny: 403 rule_denied with the index and the reason verbatim", () => {
  const reason = "never to account 42 — see policy §3";
  const message = refusedWith(
    "rule_denied",
    () =>
      apply([
        { when: "false", deny: "not this one" },
        { when: "intent.to == '42'", deny: reason },
      ], { intent: { to: "42" } }),
  );
  assert.equal(message, `rules[1]: ${reason}`);
  // A deny applies to Unsigned as to any other.
  refusedWith("rule_denied", () => apply([{ when: "true", deny: "no" }], { signed: null }), [
    "rules[0]",
  ]);
});

Deno.test("evaluation errors fail closed: 403 rule_error naming the rule", () => {
  // A missing field without has(), a type mismatch, a non-boolean, a bad index.
  const failing = [
    "intent.missing == 1.0",
    "intent.amount + 1 > 2.0",
    "intent.note",
    "intent.list[5] == 1.0",
    "variant > 1",
    "int(intent.huge) > 0",
  ];
  for (const when of failing) {
    refusedWith(
      "rule_error",
      () =>
        apply([{ when: "false", deny: "x" }, { when, threshold: 1 }], {
          intent: { amount: 1, note: "text", list: [1], huge: 1e300 },
        }),
      ["rules[1]"],
    );
  }
  // has() makes a missing field a plain false; the first rule to fail or deny decides.
  assert.deepEqual(apply([{ when: "has(intent.missing)", threshold: 1 }]).ruled.rules, []);
  refusedWith(
    "rule_denied",
    () => apply([{ when: "true", deny: "first" }, { when: "intent.missing", deny: "x" }]),
  );
  refusedWith(
    "rule_error",
    () => apply([{ when: "intent.missing", deny: "x" }, { when: "true", deny: "second" }]),
    ["rules[0]"],
  );
});

Deno.test("variables: intent (A's payload, B's intent), variant, document, signers, kinds", () => {
  const rule = (when: string) => [{ when, threshold: 1 }];
  const held = (when: string, run: Run = {}) => apply(rule(when), run).ruled.rules.length === 1;
  assert.ok(held("intent.amount == 12.5 && variant == 'B'", { intent: { amount: 12.5 } }));
  assert.ok(
    held("intent.amount == 12.5 && variant == 'A'", { intent: { amount: 12.5 }, variant: "A" }),
  );
  assert.ok(held("intent.id == 'i-1' && document == 'doc-id'"));
  // JSON numbers are doubles.
  assert.ok(held("type(intent.n) == double && intent.n == double(3)", { intent: { n: 3 } }));
  assert.ok(held("intent.attrs.fields.tags.exists(t, t == 'urgent')", {
    intent: { attrs: { fields: { tags: ["a", "urgent"] } } },
  }));
  // A passkey named uncompressed is seen compressed; kinds in the same order as signers.
  assert.ok(held(`signers == ['${E1}', '${P_ID}'] && kinds == ['Ed25519', 'Passkey']`, {
    signed: [by(E1), by(P_ID, "Passkey")],
    intent: {},
  }));
  // Unsigned: no signers, no kinds (a deny is the only effect that applies to it).
  const none = [{ when: "signers.size() != 0 || kinds.size() != 0", deny: "signed" }];
  assert.ok(apply(none, { signed: null }, { unsigned: true }));
});

Deno.test("now is the receipt time, a timestamp", () => {
  const hours =
    "now.getHours() >= 9 && now.getHours() < 17 && now.getDayOfWeek() in [1, 2, 3, 4, 5]";
  const business = [{ when: `!(${hours})`, deny: "outside business hours (UTC)" }];
  // Friday 10:30 UTC passes; Saturday is refused; 17:00 is refused.
  assert.ok(apply(business, { now: NOW }));
  refusedWith("rule_denied", () => apply(business, { now: new Date("2026-11-28T10:30:00Z") }));
  refusedWith("rule_denied", () => apply(business, { now: new Date("2026-11-27T17:00:00Z") }));
  const exact = `now == timestamp('${NOW.toISOString()}')`;
  assert.deepEqual(apply([{ when: exact, threshold: 1 }], { now: NOW }).ruled.rules, [0]);
});

Deno.test("matches is RE2: a hostile pattern on a 25,000-character field answers at once", () => {
  const rules = [{ when: "intent.memo.matches('^(a+)+$')", deny: "no" }, {
    when: "intent.memo.matches('(a|aa)*b')",
    deny: "no",
  }];
  const memo = `${"a".repeat(25_000)}!`;
  apply(rules, { intent: { memo: "warm" } });
  const start = performance.now();
  for (let i = 0; i < 5; i++) apply(rules, { intent: { memo } });
  const each = (performance.now() - start) / 5;
  // A backtracking engine takes longer than the test's life; a loaded machine's pause, less than this.
  assert.ok(each < 1_000, `${each} ms per evaluation`);
});

Deno.test("matches in its global form: matches(s, p), RE2 as the method", () => {
  const rules = [{ when: "matches(intent.memo, '^(a+)+$')", deny: "no" }];
  refusedWith("rule_denied", () => apply(rules, { intent: { memo: "aaa" } }));
  assert.ok(apply(rules, { intent: { memo: `${"a".repeat(25_000)}!` } }));
});

Deno.test("the effective quorum refuses what cannot count", () => {
  const only = [{ when: "true", signers: [E2, P_FULL] }];
  refusedWith("signer_not_authorized", () => apply(only, { signed: [by(E1)] }), [
    "does not count",
  ]);
  refusedWith(
    "signer_not_authorized",
    () => apply([{ when: "true", kinds: ["Passkey"] }], { signed: [by(E1)] }),
    ["Ed25519 signatures"],
  );
  refusedWith(
    "quorum_unreachable",
    () => apply([{ when: "true", signers: [E1, E2] }], { signed: [by(E1)] }, { threshold: 4 }),
    ["3", "4"],
  );
  refusedWith(
    "quorum_unreachable",
    () => apply([{ when: "true", threshold: 6 }, { when: "true", signers: [E1, P_FULL] }]),
  );
  // Unsigned under any true rule with a threshold, signers or kinds.
  for (const effect of [{ threshold: 1 }, { signers: [E1] }, { kinds: ["Ed25519"] }]) {
    refusedWith(
      "unsigned_not_permitted",
      () => apply([{ when: "true", ...effect }], { signed: null }, { unsigned: true }),
    );
  }
  // Unsigned where no such rule is true keeps the document's quorum.
  const unsigned = apply([{ when: "false", threshold: 1 }], { signed: null }, { unsigned: true });
  assert.equal(unsigned.quorum.threshold, 3);
});

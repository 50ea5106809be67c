/**
 * A submission under a document with rules (docs/interface.md §15): the
 * rules evaluated once, at the receipt time, and the effective quorum they
 * make, which the record keeps.
 * @module
 */

import type { Verified } from "../authorship.ts";
import type { NewIntent, Quorum, Variant } from "../intent.ts";
import type { PublicKeyCache } from "../public_keys.ts";
import { signedObject } from "../record.ts";
import type { CompiledRule } from "./rule.ts";
import { evaluateRules } from "./evaluate.ts";
import { checkEffective, effectiveQuorum } from "./quorum.ts";

/** What evaluating a submission's rules needs. */
export interface RulesInput {
  /** The document's quorum and its rules. */
  quorum: Quorum & { rules: readonly CompiledRule[] };
  /** The document's id. */
  document: string;
  variant: Variant;
  /** The body as stored: its signed object is the rules' `intent`. */
  body: Uint8Array;
  /** Who signed; null for `Unsigned`. */
  verified: Verified | null;
  /** The receipt time: the rules' `now` and the record's `received_at`. */
  now: Date;
  keys?: PublicKeyCache;
}

/** What the rules make of a submission: the quorum it is judged against, for its record. */
export interface Ruled {
  /** The effective quorum, as the record's `approval` keeps it. */
  quorum: Quorum;
  ruled: NonNullable<NewIntent["ruled"]>;
}

/**
 * Evaluates the rules of a submission's document and checks the submission
 * against the effective quorum they make.
 *
 * @throws {ServiceError} `rule_error`, `rule_denied`, `signer_not_authorized`,
 *   `quorum_unreachable` or `unsigned_not_permitted`.
 */
export function applyRules(input: RulesInput): Ruled {
  const signedBy = input.verified?.signedBy ?? null;
  const held = evaluateRules(input.quorum.rules, {
    signed: signedObject({ body: input.body, variant: input.variant }),
    variant: input.variant,
    document: input.document,
    signers: (signedBy ?? []).map((s) => s.keyId),
    kinds: (signedBy ?? []).map((s) => s.kind),
    now: input.now,
  });
  const effective = effectiveQuorum(input.quorum, held, input.keys);
  checkEffective(effective, held, signedBy);
  const { rules: _, ...document } = input.quorum;
  return {
    quorum: { ...document, threshold: effective.threshold, signers: effective.signers },
    ruled: { kinds: effective.kinds, rules: effective.rules },
  };
}

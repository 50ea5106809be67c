/**
 * The effective quorum of an intent under rules (docs/interface.md §15): the
 * greatest threshold of the true rules (or the document's), the document's
 * signers that every true `signers` list names and whose kind every true
 * `kinds` list names, and the refusals of a submission that cannot count
 * under it. It is stored in the record, and later decisions are judged
 * against it, never the rules again.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import type { SignedBy } from "../governance.ts";
import type { Quorum, Signers } from "../intent.ts";
import { decodePublicKey, type PublicKeyCache } from "../public_keys.ts";
import { RULE_KINDS } from "../schemas.ts";
import type { CompiledRule, RuleKind } from "./rule.ts";

/** The quorum one intent is judged against, and the rules that made it. */
export interface EffectiveQuorum {
  threshold: number;
  /** The counting signers, by key id, with the document's weights. */
  signers: Signers;
  /** The signature kinds that count. */
  kinds: RuleKind[];
  /** The indices of the rules that were true. */
  rules: number[];
}

/** The kind of signature a key makes: Ed25519 keys sign as Ed25519, P-256 keys as passkeys. */
export function kindOfKey(keyId: string, keys?: PublicKeyCache): RuleKind {
  return decodePublicKey(keyId, "signer", "any", keys).curve === "ed25519" ? "Ed25519" : "Passkey";
}

/**
 * The effective quorum the true rules make of the document's quorum.
 *
 * @param quorum the document's quorum.
 * @param held the rules whose condition was true, none of them a `deny`.
 * @param keys where decoded public keys are kept.
 */
export function effectiveQuorum(
  quorum: Quorum,
  held: readonly CompiledRule[],
  keys?: PublicKeyCache,
): EffectiveQuorum {
  let threshold: number | undefined;
  let kinds: RuleKind[] = [...RULE_KINDS];
  const lists: ReadonlySet<string>[] = [];
  for (const { effect } of held) {
    if ("threshold" in effect) threshold = Math.max(threshold ?? 0, effect.threshold);
    else if ("signers" in effect) lists.push(effect.signers);
    else if ("kinds" in effect) kinds = kinds.filter((kind) => effect.kinds.includes(kind));
  }
  const signers: Signers = new Map();
  for (const [keyId, signer] of quorum.signers) {
    if (lists.some((list) => !list.has(keyId))) continue;
    if (!kinds.includes(kindOfKey(keyId, keys))) continue;
    signers.set(keyId, signer);
  }
  return {
    threshold: threshold ?? quorum.threshold,
    signers,
    kinds,
    rules: held.map((rule) => rule.index),
  };
}

/** True when a true rule sets a threshold, signers or kinds. */
export function restricts(held: readonly CompiledRule[]): boolean {
  return held.some(({ effect }) => !("deny" in effect));
}

/**
 * Refuses a submission that cannot count under its effective quorum.
 *
 * @param signed the submission's signatures; null for `Unsigned`.
 * @throws {ServiceError} `signer_not_authorized` for a key or kind that does
 *   not count, `quorum_unreachable` when the counting weight cannot reach the
 *   threshold, `unsigned_not_permitted` for `Unsigned` under a true rule
 *   that sets a threshold, signers or kinds.
 */
export function checkEffective(
  effective: EffectiveQuorum,
  held: readonly CompiledRule[],
  signed: readonly SignedBy[] | null,
): void {
  if (signed === null) {
    if (restricts(held)) {
      throw new ServiceError(
        "unsigned_not_permitted",
        `authorship: Unsigned intents are not permitted under rules[${
          held.find(({ effect }) => !("deny" in effect))!.index
        }]`,
      );
    }
    return;
  }
  for (const { keyId, kind, path } of signed) {
    if (!effective.kinds.includes(kind)) {
      throw new ServiceError(
        "signer_not_authorized",
        `${path}: under the document's rules, ${kind} signatures do not count for this intent`,
      );
    }
    if (!effective.signers.has(keyId)) {
      throw new ServiceError(
        "signer_not_authorized",
        `${path}: under the document's rules, this key does not count for this intent`,
      );
    }
  }
  let weight = 0n;
  for (const { weight: w } of effective.signers.values()) weight += BigInt(w);
  if (weight < BigInt(effective.threshold)) {
    throw new ServiceError(
      "quorum_unreachable",
      `under the document's rules the keys that count weigh ${weight} in all, below the ` +
        `threshold ${effective.threshold}`,
    );
  }
}

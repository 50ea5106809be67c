/**
 * Writing a governed template or policy: a JSON document whose
 * `authorization` member fixes who signs the intents that reference it.
 * @module
 */

import {
  MAX_APPROVAL_WINDOW_S,
  MAX_MULTISIG_ENTRIES,
  MAX_RULE_WHEN_CHARS,
  MAX_RULES,
} from "@intents/protocol/bounds";
import type { DocumentRule } from "./applied_rules.ts";

/** Options of {@link governedDocument}; every other member is the document's own content. */
export interface GovernedDocumentOptions {
  /** base58 public keys (Ed25519, or a passkey's SEC1 P-256 point) → positive integer weight. */
  signers: Record<string, number>;
  /** The weight of approvals that accepts an intent: 1 to the sum of the weights. */
  threshold: number;
  /** Whether `Unsigned` intents are accepted under the document (default false). */
  unsigned?: boolean;
  /** Seconds a pending intent waits for approvals: 1 to 2592000 (default, 604800: 7 days). */
  approvalWindowS?: number;
  /**
   * The document's rules (docs/rules.md): 1 to 16, written as `authorization.rules`. Each has a
   * CEL `when` and exactly one effect (`deny`, `threshold`, `signers` or `kinds`). Not `rules`,
   * which stays one of the document's own members.
   */
  authorizationRules?: DocumentRule[];
  /** The document's own members; `authorization` is added after them. */
  [member: string]: unknown;
}

// The most signers a document may name, and the longest approval window.
const MAX_SIGNERS = MAX_MULTISIG_ENTRIES;
const MAX_WINDOW_S = MAX_APPROVAL_WINDOW_S;

function isPositiveInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

const EFFECTS = ["deny", "threshold", "signers", "kinds"] as const;

/** The checks of rules the client can make: their count, one effect each, the length of `when`. */
function checkRules(rules: readonly DocumentRule[]): void {
  if (!Array.isArray(rules) || rules.length < 1 || rules.length > MAX_RULES) {
    throw new RangeError(`authorizationRules holds 1 to ${MAX_RULES} rules`);
  }
  rules.forEach((rule, i) => {
    if (typeof rule?.when !== "string" || [...rule.when].length > MAX_RULE_WHEN_CHARS) {
      throw new RangeError(
        `authorizationRules[${i}].when is a CEL expression of at most ${MAX_RULE_WHEN_CHARS} characters`,
      );
    }
    if (EFFECTS.filter((effect) => rule[effect] !== undefined).length !== 1) {
      throw new RangeError(
        `authorizationRules[${i}] has exactly one effect: deny, threshold, signers or kinds`,
      );
    }
  });
}

/**
 * The JSON text of a governed document, to store with `addPolicy` or
 * `addTemplate` (as `application/json`). Checks what it can without the
 * service (counts, weights, threshold, how many rules, each with one effect
 * and a `when` of at most 1,000 characters); the service checks the keys and
 * compiles the rules.
 *
 * @throws {RangeError} on a signer count, weight, threshold, window or rule the service would
 *   refuse.
 * @example
 * ```ts
 * import { base58 } from "@scure/base";
 * import { generateEd25519Key } from "./mod.ts";
 *
 * const [alice, bob] = [generateEd25519Key(), generateEd25519Key()]
 *   .map((key) => base58.encode(key.publicKey));
 * const text = governedDocument({
 *   rules: "pay up to 100",
 *   signers: { [alice]: 1, [bob]: 1 },
 *   threshold: 2,
 * });
 * // then: `const { id } = await client.addPolicy(text);`
 *
 * // Two approvals above 1,000 (`rules` above is the document's own member):
 * governedDocument({
 *   signers: { [alice]: 1, [bob]: 1 },
 *   threshold: 1,
 *   authorizationRules: [{ when: "intent.attrs.fields.amount > 1000.0", threshold: 2 }],
 * });
 * ```
 */
export function governedDocument(options: GovernedDocumentOptions): string {
  const { signers, threshold, unsigned, approvalWindowS, authorizationRules, ...content } = options;
  const weights = Object.values(signers);
  if (weights.length < 1 || weights.length > MAX_SIGNERS) {
    throw new RangeError(`a governed document names 1 to ${MAX_SIGNERS} signers`);
  }
  if (!weights.every(isPositiveInteger)) {
    throw new RangeError("signer weights are positive integers");
  }
  // Sixteen safe integers may add up past 2^53: the service sums them exactly.
  const total = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
  if (!isPositiveInteger(threshold) || BigInt(threshold) > total) {
    throw new RangeError(`the threshold is an integer from 1 to the sum of the weights, ${total}`);
  }
  if (
    approvalWindowS !== undefined &&
    (!isPositiveInteger(approvalWindowS) || approvalWindowS > MAX_WINDOW_S)
  ) {
    throw new RangeError(`approvalWindowS is an integer from 1 to ${MAX_WINDOW_S}`);
  }
  if (authorizationRules !== undefined) checkRules(authorizationRules);
  const authorization: Record<string, unknown> = { signers, threshold };
  if (unsigned !== undefined) authorization.unsigned = unsigned;
  if (approvalWindowS !== undefined) authorization.approval_window_s = approvalWindowS;
  if (authorizationRules !== undefined) authorization.rules = authorizationRules;
  return JSON.stringify({ ...content, authorization });
}

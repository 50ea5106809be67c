/**
 * The rules that made a pending intent's quorum (docs/rules.md): the record's
 * `approval.rules` names their indices; the document, public and addressed by
 * the SHA-256 of its bytes, says what each one is.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { base58 } from "@scure/base";
import type { PendingApprovals } from "@intents/protocol/types";
import { IntentsError } from "./errors.ts";

/** One rule of a governed document's `authorization.rules`, as its document writes it. */
export interface DocumentRule {
  /** The CEL condition. */
  when: string;
  /** Effect (exactly one of the four): the intent is refused, with this reason. */
  deny?: string;
  /** Effect: the quorum's threshold for this intent. */
  threshold?: number;
  /** Effect: only these of the document's signers (base58 keys) count. */
  signers?: string[];
  /** Effect: only signatures of these kinds count. */
  kinds?: ("Ed25519" | "Passkey")[];
}

/** One rule that was true for an intent: its index, and the rule when the document gave it. */
export interface AppliedRule {
  /** The rule's index in the document's `authorization.rules`. */
  index: number;
  /** Null when the document could not be read or does not hold this rule. */
  rule: DocumentRule | null;
}

/** What {@link appliedRules} reads documents with: an `IntentsClient`. */
export interface DocumentReader {
  /** `GET /templates/{id}`: the stored bytes. */
  getTemplate(id: string): Promise<{ bytes: Uint8Array }>;
  /** `GET /policies/{id}`: the stored bytes. */
  getPolicy(id: string): Promise<{ bytes: Uint8Array }>;
}

function isRule(value: unknown): value is DocumentRule {
  return typeof value === "object" && value !== null &&
    typeof (value as { when?: unknown }).when === "string";
}

/**
 * The rules that were true for a pending intent, in index order, each with
 * its text from the document the intent references (`GET /templates/{id}` or
 * `GET /policies/{id}`, public). Null when the intent is not under rules (its
 * view has no `approval.rules`); an empty list when none was true, and then no
 * document is read.
 *
 * @throws {IntentsError} `bad_response` when the document's bytes are not
 *   those its id names (base58 of their SHA-256); what the reads throw.
 * @example
 * ```ts ignore
 * const view = await client.approvals(id);
 * if (view.state === "pending") {
 *   for (const { index, rule } of await appliedRules(client, view) ?? []) {
 *     console.log(index, rule?.when);
 *   }
 * }
 * ```
 */
export async function appliedRules(
  reader: DocumentReader,
  view: PendingApprovals,
): Promise<AppliedRule[] | null> {
  const indices = view.approval.rules;
  if (!Array.isArray(indices)) return null;
  if (indices.length === 0) return [];
  const id = view.variant === "B" ? view.policy_id : view.template_id;
  if (typeof id !== "string") return indices.map((index) => ({ index, rule: null }));
  const { bytes } = view.variant === "B"
    ? await reader.getPolicy(id)
    : await reader.getTemplate(id);
  if (base58.encode(sha256(bytes)) !== id) {
    throw new IntentsError(200, "bad_response", `the document's bytes are not those of ${id}`);
  }
  let rules: unknown;
  try {
    rules = JSON.parse(new TextDecoder().decode(bytes))?.authorization?.rules;
  } catch {
    rules = undefined;
  }
  return indices.map((index) => {
    const rule = Array.isArray(rules) ? rules[index] : undefined;
    return { index, rule: isRule(rule) ? rule : null };
  });
}

/** One rule's effect, as `threshold 2`, `deny "reason"`, `signers K1, K2` or `kinds Passkey`. */
export function ruleEffect(rule: DocumentRule): string {
  if (rule.deny !== undefined) return `deny ${JSON.stringify(rule.deny)}`;
  if (rule.threshold !== undefined) return `threshold ${rule.threshold}`;
  if (rule.signers !== undefined) return `signers ${rule.signers.join(", ")}`;
  if (rule.kinds !== undefined) return `kinds ${rule.kinds.join(", ")}`;
  return "no effect";
}

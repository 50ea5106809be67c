/**
 * Evaluating a governed document's rules at submission (docs/interface.md
 * §15): in index order, the first rule that fails or denies decides, failing
 * closed; otherwise the rules whose condition is true.
 * @module
 */

import { type CelInput, celList, celMap, isCelError } from "@bufbuild/cel";
import { timestampFromDate, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { reflect } from "@bufbuild/protobuf/reflect";
import { ServiceError } from "../../errors.ts";
import type { Variant } from "../intent.ts";
import type { CompiledRule, RuleKind } from "./rule.ts";

/** What a submission gives its rules' variables. */
export interface RuleInput {
  /** Variant B's `intent` or Variant A's `payload`, as signed. */
  signed: Record<string, unknown>;
  variant: Variant;
  /** The document's id. */
  document: string;
  /** The key ids that signed (canonical compressed base58), in order. */
  signers: readonly string[];
  /** Their kinds, in the same order. */
  kinds: readonly RuleKind[];
  /** The receipt time: the record's `received_at`. */
  now: Date;
}

/**
 * A JSON value as the evaluator's own values: objects as CEL maps, arrays as
 * CEL lists, at every depth. The evaluator converts a plain object each time a
 * rule reads it (at each step of `intent.attrs.fields.x`, in each rule);
 * converted once here, every read finds the value it needs. Strict JSON bounds
 * the depth (32).
 */
function celValue(value: unknown): CelInput {
  if (Array.isArray(value)) return celList(value.map(celValue));
  if (typeof value === "object" && value !== null) {
    return celMap(new Map(Object.entries(value).map(([k, v]) => [k, celValue(v)])));
  }
  // A string, a double, a boolean or null, as JSON gives them.
  return value as CelInput;
}

/** Longest part of an evaluation error a message carries. */
const MAX_REASON = 200;

function ruleError(index: number, reason: string): ServiceError {
  const line = reason.replace(/\s+/g, " ").trim();
  const shown = line.length > MAX_REASON ? `${line.slice(0, MAX_REASON - 1)}…` : line;
  return new ServiceError("rule_error", `rules[${index}]: ${shown}`);
}

/** The CEL type of a value the condition yielded, for a message. */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "bigint") return "an integer";
  if (typeof value === "number") return "a double";
  if (typeof value === "string") return "a string";
  return "a value";
}

/**
 * Evaluates `rules` in index order.
 *
 * @returns the rules whose condition is true, in order.
 * @throws {ServiceError} `rule_error` for the first rule whose evaluation
 *   fails or yields no boolean, or `rule_denied` for the first true `deny`
 *   (its reason verbatim), whichever comes first.
 */
export function evaluateRules(rules: readonly CompiledRule[], input: RuleInput): CompiledRule[] {
  // The variables as the evaluator's values, converted once for every rule.
  const bindings = {
    intent: celValue(input.signed),
    variant: input.variant,
    document: input.document,
    signers: celList([...input.signers]),
    kinds: celList([...input.kinds]),
    // Reflected once, not at each read.
    now: reflect(TimestampSchema, timestampFromDate(input.now)),
  };
  const held: CompiledRule[] = [];
  for (const rule of rules) {
    let result: unknown;
    try {
      result = rule.when(bindings);
    } catch {
      // Fail closed: whatever went wrong, the intent does not pass this rule.
      throw ruleError(rule.index, "the evaluation failed");
    }
    if (isCelError(result)) throw ruleError(rule.index, result.message);
    if (typeof result !== "boolean") {
      throw ruleError(rule.index, `yields ${typeOf(result)}, not a boolean`);
    }
    if (!result) continue;
    if ("deny" in rule.effect) {
      throw new ServiceError("rule_denied", `rules[${rule.index}]: ${rule.effect.deny}`);
    }
    held.push(rule);
  }
  return held;
}

/**
 * A governed document's rule as the domain holds it once compiled
 * (docs/interface.md §15): its place, its planned condition and its effect.
 * @module
 */

/** A signature kind a rule may name. */
export type RuleKind = "Ed25519" | "Passkey";

/** What one rule does when its condition is true. */
export type RuleEffect =
  | { deny: string }
  | { threshold: number }
  /** The key ids (`public_keys.ts`) of the signers that count. */
  | { signers: ReadonlySet<string> }
  | { kinds: readonly RuleKind[] };

/** The values a rule's condition is evaluated with, as CEL receives them. */
export type RuleBindings = Record<string, unknown>;

/** A rule ready to evaluate: its condition planned once, and its effect. */
export interface CompiledRule {
  /** Its place in the document's `rules`. */
  index: number;
  /** Evaluates the condition: a CEL value, or a CEL error. */
  when: (bindings: RuleBindings) => unknown;
  effect: RuleEffect;
}

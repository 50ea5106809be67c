/**
 * The bounds of a multisig descriptor and of a governed document's
 * `authorization` (docs/interface.md §4, §10), as numbers: the schemas
 * (`request_schemas.ts`) check them, and the client checks a governed
 * document against them before it is sent. A module of its own, so that code
 * that needs only the numbers does not load the schemas.
 * @module
 */

/** Largest number of signers in a multisig descriptor and of entries in its signature list. */
export const MAX_MULTISIG_ENTRIES = 16;

/** The longest approval window of a governed document: 30 days. */
export const MAX_APPROVAL_WINDOW_S = 2_592_000;

/** The approval window when a governed document names none: 7 days. */
export const DEFAULT_APPROVAL_WINDOW_S = 604_800;

/** Most rules in a governed document's `authorization` (docs/interface.md §15). */
export const MAX_RULES = 16;

/** Longest CEL expression of a rule's `when`, in characters. */
export const MAX_RULE_WHEN_CHARS = 1_000;

/** Longest reason of a `deny` rule, in characters. */
export const MAX_RULE_REASON_CHARS = 200;

/**
 * The rules of the load's governed document under `--rules`
 * (docs/performance.md#rules): sixteen rules of close to the longest a rule
 * may be, every one true for every body `bodies.ts` builds, whose effects
 * leave the quorum as the document's (its one signer, threshold 1), so each
 * submission is still accepted at once and the cost measured is that of
 * evaluating them.
 * @module
 */

import { MAX_RULE_WHEN_CHARS, MAX_RULES } from "@intents/protocol/bounds";

/** One rule of a governed document's `authorization.rules` (docs/rules.md). */
export type LoadRule =
  & { when: string }
  & ({ threshold: number } | { signers: string[] } | { kinds: ("Ed25519" | "Passkey")[] });

const FIELDS = "intent.attrs.fields";

/** Words for literal lists and patterns; each rule takes them from its own offset. */
const WORDS = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliett",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
  "quebec",
  "romeo",
  "sierra",
  "tango",
  "uniform",
  "victor",
  "whiskey",
  "xray",
  "yankee",
  "zulu",
];

function words(rule: number, count: number, prefix: string): string[] {
  return Array.from({ length: count }, (_, k) => `${prefix}${WORDS[(rule + k) % WORDS.length]}`);
}

/**
 * The conditions rule `rule` is made of, in order, each true for a load body
 * signed by `signer`: fields read and compared, a deny list that names no load
 * reference, the signer found among the signers, a literal pattern matched.
 */
function conditions(rule: number, signer: string): string[] {
  const quoted = (list: string[]) => list.map((w) => `'${w}'`).join(", ");
  return [
    `has(${FIELDS}.reference)`,
    `${FIELDS}.currency in ['EUR', 'USD', 'GBP', 'CHF', 'JPY', 'SEK', 'NOK', 'DKK']`,
    `double(${FIELDS}.amount) >= 0.0`,
    `double(${FIELDS}.amount) < ${1_000_000 + rule}.0`,
    `${FIELDS}.reference.startsWith('load-')`,
    `size(${FIELDS}.reference) < ${64 + rule}`,
    `!(${FIELDS}.reference in [${quoted(words(rule, 6, "blocked-"))}])`,
    `signers.exists(s, s == '${signer}')`,
    `kinds.all(k, k in ['Ed25519', 'Passkey'])`,
    `variant in ['A', 'B'] && size(document) > 0`,
    `now > timestamp('2020-01-01T00:00:00Z')`,
    `${FIELDS}.reference.matches('^load-[0-9]{1,9}$|^(${words(rule, 8, "").join("|")})-[0-9]+$')`,
    `!${FIELDS}.currency.contains('${WORDS[rule % WORDS.length]}')`,
    `!(${FIELDS}.currency in [${quoted(words(rule + 5, 6, "x-"))}])`,
    `intent.id.size() > 0 && !intent.id.endsWith('-${WORDS[(rule + 3) % WORDS.length]}')`,
    `!(${FIELDS}.reference in [${quoted(words(rule + 11, 8, "held-"))}])`,
  ];
}

/**
 * The `when` of rule `rule`: its conditions joined by `&&`, as many as fit in
 * {@link MAX_RULE_WHEN_CHARS} characters, each condition evaluated (all are true).
 */
export function loadRuleWhen(rule: number, signer: string): string {
  let when = "";
  for (const condition of conditions(rule, signer)) {
    const next = when === "" ? condition : `${when} && ${condition}`;
    if (next.length > MAX_RULE_WHEN_CHARS) break;
    when = next;
  }
  return when;
}

/**
 * Sixteen rules, all true for every load body signed by `signer` (the
 * document's one signer, weight 1, threshold 1): their effects, in turn a
 * threshold of 1, that signer, the kind Ed25519, keep the document's quorum.
 */
export function loadRules(signer: string): LoadRule[] {
  return Array.from({ length: MAX_RULES }, (_, rule) => {
    const when = loadRuleWhen(rule, signer);
    if (rule % 4 === 1) return { when, signers: [signer] };
    if (rule % 4 === 3) return { when, kinds: ["Ed25519"] };
    return { when, threshold: 1 };
  });
}

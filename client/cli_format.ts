/**
 * The command-line client's human output: records, approvals views and feed
 * events, one text each.
 * @module
 */

import type { AppliedRule, Approval, ApprovalsView, IntentEvent, IntentRecord } from "./mod.ts";
import { ruleEffect } from "./applied_rules.ts";

/** `weight 1 of 2`. */
export function weightText(approval: Approval): string {
  return `weight ${approval.weight} of ${approval.threshold}`;
}

/** An argument as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9._:@%+=,/-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The commands that show and add approvals (or rejections) for an intent. */
export function approveHint(id: string): string {
  return `approve with: deno task cli approve ${shellWord(id)} --key FILE\n` +
    `or reject with: deno task cli reject ${shellWord(id)} --key FILE\n` +
    `see who has decided: deno task cli approvals ${shellWord(id)}\n`;
}

function referenceOf(record: { variant: "A" | "B"; template_id?: string; policy_id?: string }) {
  return record.variant === "A" ? `template ${record.template_id}` : `policy ${record.policy_id}`;
}

/** A stored record: id, variant and reference, authorship, time, and its approval state. */
export function describeRecord(record: IntentRecord): string {
  const signers = record.authorship.signers.length > 0
    ? ` by ${record.authorship.signers.join(", ")}`
    : "";
  let text = `intent ${record.id} (variant ${record.variant}, ${referenceOf(record)})\n` +
    `  authorship: ${record.authorship.kind}${signers}\n` +
    `  received at: ${record.received_at}\n`;
  const approval = record.approval;
  if (approval) {
    const deadline = record.state === "pending"
      ? `, expires at ${approval.expires_at}`
      : record.state === "expired"
      ? `, expired at ${approval.expires_at}`
      : "";
    text += `  state: ${record.state} (${weightText(approval)})${deadline}\n`;
  }
  return text;
}

/**
 * Under rules, the effective quorum's kinds and the rules that were true,
 * each with its condition and effect when the document gave them.
 */
function rulesText(approval: Approval, applied: AppliedRule[] | null): string {
  if (!Array.isArray(approval.rules)) return "";
  const indices = approval.rules.length > 0 ? approval.rules.join(", ") : "none";
  let text = `  under the document's rules: true ${indices}; kinds that count: ${
    (approval.kinds ?? []).join(", ") || "none"
  }\n`;
  for (const { index, rule } of applied ?? []) {
    // JSON text: a condition from the document is shown escaped, never raw.
    text += rule
      ? `    rules[${index}] when ${JSON.stringify(rule.when)}: ${ruleEffect(rule)}\n`
      : `    rules[${index}]\n`;
  }
  return text;
}

/**
 * The view of `approvals ID`: state, what is signed, the quorum (under rules,
 * the kinds that count and the rules that were true, with `applied`) and who
 * has decided.
 */
export function describeApprovals(
  view: ApprovalsView,
  applied: AppliedRule[] | null = null,
): string {
  if (view.state !== "pending") return `intent ${view.id}: ${view.state}\n`;
  const { approval } = view;
  const approvedBy = new Map(approval.approvals.map((a) => [a.key, a]));
  const rejectedBy = new Map((approval.rejections ?? []).map((r) => [r.key, r]));
  const width = Math.max(...Object.keys(approval.signers).map((key) => key.length));
  const quorum = Object.entries(approval.signers).map(([key, weight]) => {
    const approved = approvedBy.get(key);
    const rejected = rejectedBy.get(key);
    const mark = approved ? "[x]" : rejected ? "[-]" : "[ ]";
    const when = approved
      ? `  approved at ${approved.at} (${approved.kind})`
      : rejected
      ? `  rejected at ${rejected.at} (${rejected.kind})`
      : "";
    return `  ${mark} ${key.padEnd(width)}  weight ${weight}${when}\n`;
  });
  const signed = JSON.stringify(view.signed, null, 2).replaceAll("\n", "\n  ");
  return `intent ${view.id}: pending (${
    weightText(approval)
  }), expires at ${approval.expires_at}\n` +
    `  variant ${view.variant}, ${referenceOf(view)}\n` +
    `  signed (what every approver signs):\n  ${signed}\n` +
    `  challenge: ${view.challenge}\n` +
    `  reject challenge: ${view.reject_challenge}\n` +
    rulesText(approval, applied) +
    `  signers (threshold ${approval.threshold}):\n` + quorum.join("");
}

/** The answer of `approve ID`: the state after the approval. */
export function describeApproved(view: ApprovalsView): string {
  return view.state === "pending"
    ? `approved: ${weightText(view.approval)}, still pending\n`
    : `approved: ${view.state}\n`;
}

/** The answer of `reject ID`: the state after the rejection. */
export function describeRejected(view: ApprovalsView): string {
  return view.state === "pending"
    ? `rejected by this key: ${weightText(view.approval)}, still pending\n`
    : `rejected by this key: the intent is ${view.state}\n`;
}

/** When an event happened, as far as its record tells. */
function eventTime(event: IntentEvent): string {
  const { record } = event;
  const approval = record.approval;
  if (!approval) return record.received_at;
  if (event.type === "intent.expired") return approval.expires_at;
  // Decisions are listed in the order they were stored; the last one made this event.
  if (event.type === "intent.rejection_added" || event.type === "intent.rejected") {
    return approval.rejections?.at(-1)?.at ?? record.received_at;
  }
  return approval.approvals.at(-1)?.at ?? record.received_at;
}

/** One feed event on one line: id, time, type, intent id, state (weight/threshold), reference, kind. */
export function describeEvent(event: IntentEvent): string {
  const r = event.record;
  const weight = r.approval ? ` ${r.approval.weight}/${r.approval.threshold}` : "";
  return `${event.id}  ${eventTime(event)}  ${event.type.padEnd(22)}  ${r.id}  ` +
    `${r.state}${weight}  ${r.variant} ${referenceOf(r)}  ${r.authorship.kind}\n`;
}

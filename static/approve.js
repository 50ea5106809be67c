// The approval view (`/?approve=<id>`): shows what a pending intent's signers
// decide on (the signed object, its template or policy, the quorum and who has
// approved or rejected) from GET /intents/{id}/approvals, and approves it with
// a passkey registered in this browser by POST /intents/{id}/approvals, or
// rejects it by POST /intents/{id}/rejections, through the client library's
// `IntentsClient`.
//
// The page signs only what it shows: before any passkey is asked, the client
// library's `approvalRequest` recomputes the challenge from the signed object
// (and `rejectionRequest` the rejection's), and a view whose challenges differ
// (or whose template or policy is not the signed one) is refused. The view
// shown is the view signed, and the challenge handed to the authenticator is
// the recomputed one.

import {
  appliedRules,
  approvalRequest,
  base58,
  IntentsClient,
  rejectionRequest,
  ruleEffect,
} from "./client.js";
import { $, describeError, describeRefusal, el, isRefusal, refusalBody, shown } from "./dom.js";
import { jsonView } from "./json_view.js";
import {
  allPasskeys,
  assertWithOneOf,
  isPasskeyKey,
  onPasskeysChanged,
  tickedPasskeys,
} from "./passkeys.js";

/** @type {string} the intent id from the page's URL */
let intentId = "";
/** The service, for anyone: reading and approving need no token. */
const client = new IntentsClient({ url: location.origin });
/** The last pending view that passed the checks, with its approval request, or null. */
let current = null;
/** Keys that approved from this page after `current` was read, with the passkey's name. */
let approvedHere = new Map();

/** What the page says of an intent that waits for nothing any more, by its state. */
const SETTLED = {
  accepted: "This intent is accepted: its approvals reached the threshold.",
  expired: "This intent expired before its approvals reached the threshold.",
  rejected: "This intent is rejected: the signers who have not rejected can no longer reach " +
    "the threshold.",
};

/** The member naming the document: `template_id` (Variant A) or `policy_id` (Variant B). */
function refName(view) {
  return view.variant === "B" ? "policy_id" : "template_id";
}

/** A long key cut to its ends for display; the full key goes in the title. */
function shortKey(key) {
  return key.length > 20 ? `${key.slice(0, 8)}…${key.slice(-8)}` : key;
}

function keyKind(key) {
  try {
    const length = base58.decode(key).length;
    return length === 32 ? "Ed25519" : length === 33 || length === 65 ? "Passkey" : "?";
  } catch {
    return "?";
  }
}

/** A `<time>` showing an ISO time in the reader's locale, the ISO text on hover. */
function timeElement(iso) {
  const parsed = new Date(iso);
  const time = el("time", {
    text: Number.isNaN(parsed.getTime()) ? iso : parsed.toLocaleString(),
    title: iso,
  });
  time.dateTime = iso;
  return time;
}

/** Sets the view's state (for styles and tests) and its one-line status. */
function setState(state, text) {
  $("approve-section").dataset.state = state;
  $("approve-status").textContent = text;
}

function showOutcome(state, summary, body = "") {
  $("approve-result").dataset.state = state;
  $("approve-summary").textContent = summary;
  $("approve-body").textContent = body;
}

/** The quorum table: one row per signer, in the document's order. */
function renderQuorum(approval) {
  const order = new Map(approval.approvals.map((a, i) => [a.key, { ...a, n: i + 1 }]));
  const rejections = new Map((approval.rejections ?? []).map((r) => [r.key, r]));
  const rows = [];
  for (const [key, weight] of Object.entries(approval.signers)) {
    const row = el("tr");
    row.dataset.key = key;
    const keyCell = el("td");
    keyCell.append(el("code", { className: "key", text: shortKey(key), title: key }));
    const approved = el("td", { className: "approved" });
    const done = order.get(key);
    const here = approvedHere.get(key);
    const rejected = rejections.get(key);
    if (done) {
      row.dataset.approved = "true";
      approved.append(`✓ #${done.n} (${done.kind}) at `, timeElement(done.at));
    } else if (rejected) {
      row.dataset.rejected = "true";
      approved.append(`✗ rejected (${rejected.kind}) at `, timeElement(rejected.at));
    } else if (here) {
      row.dataset.approved = "true";
      approved.append(`✓ just now, from this page`);
    } else {
      approved.textContent = "not yet";
    }
    const mine = allPasskeys().filter((p) => isPasskeyKey(p, key)).map((p) => p.name);
    row.append(
      keyCell,
      el("td", { text: keyKind(key) }),
      el("td", { className: "weight", text: String(weight) }),
      approved,
      el("td", { className: "mine", text: mine.join(", ") }),
    );
    rows.push(row);
  }
  $("approve-quorum").replaceChildren(...rows);
}

/**
 * Under a document with rules: the effective quorum (threshold, counting
 * signers, kinds) and the rules that were true, each with its condition and
 * effect once the document (public, checked against its id) is read. Hidden
 * for an intent whose document has no rules.
 */
async function renderRules(view) {
  const { approval } = view;
  const box = $("approve-rules");
  box.hidden = !Array.isArray(approval.rules);
  $("approve-rules-list").replaceChildren();
  if (box.hidden) return;
  const indices = approval.rules.length > 0 ? approval.rules.join(", ") : "none";
  const counting = Object.keys(approval.signers).length;
  $("approve-rules-line").textContent = "Under the document's rules: rules true: " +
    `${indices}; effective quorum: threshold ${approval.threshold}, ${counting} counting ` +
    `signer${counting === 1 ? "" : "s"} (below), kinds that count: ` +
    `${(approval.kinds ?? []).join(", ") || "none"}.`;
  let applied;
  try {
    applied = await appliedRules(client, view);
  } catch (error) {
    $("approve-rules-list").replaceChildren(
      el("li", { text: `The rules could not be read: ${describeError(error)}.` }),
    );
    return;
  }
  // A later view may have replaced this one while the document was read.
  if (current?.view !== view) return;
  $("approve-rules-list").replaceChildren(...(applied ?? []).map(({ index, rule }) => {
    const item = el("li");
    item.dataset.rule = String(index);
    item.append(`rules[${index}]`);
    if (rule) item.append(" when ", el("code", { text: rule.when }), `: ${ruleEffect(rule)}`);
    return item;
  }));
}

/** Renders a checked pending view and the bytes its approvers sign. */
function renderView({ view, request }) {
  const approval = view.approval;
  $("approve-view").hidden = false;
  $("approve-variant").textContent = view.variant;
  $("approve-ref-label").textContent = refName(view);
  $("approve-ref").textContent = view[refName(view)];
  $("approve-expires").replaceChildren(timeElement(approval.expires_at));
  $("approve-signed").replaceChildren(jsonView(view.signed));
  $("approve-signed-text").textContent = new TextDecoder().decode(request.bytes);
  $("approve-challenge").textContent = view.challenge;
  $("approve-reject-challenge").textContent = view.reject_challenge;
  renderQuorum(approval);
  const reached = current?.accepted === true;
  const rejected = (approval.rejections ?? []).length;
  $("approve-weight").textContent = reached
    ? `Threshold ${approval.threshold} reached.`
    : `Weight ${approval.weight} of ${approval.threshold} reached.` +
      (rejected > 0 ? ` ${rejected} rejected.` : "");
  const progress = $("approve-progress");
  progress.max = approval.threshold;
  progress.value = reached ? approval.threshold : Math.min(approval.weight, approval.threshold);
}

/** Shows a view as GET or POST /intents/{id}/approvals answered it. */
async function showView(view) {
  approvedHere = new Map();
  $("approve-actions").hidden = true;
  if (Object.hasOwn(SETTLED, view?.state)) {
    current = null;
    $("approve-view").hidden = true;
    setState(view.state, SETTLED[view.state]);
    return;
  }
  let request;
  try {
    request = await approvalRequest(view);
    // Its rejection challenge must hold together too, before either button is offered.
    await rejectionRequest(view);
  } catch (error) {
    current = null;
    $("approve-view").hidden = true;
    setState("refused", `Not signing this: ${describeError(error)}.`);
    return;
  }
  current = { view, request, accepted: false };
  renderView(current);
  void renderRules(view);
  $("approve-actions").hidden = false;
  setState("pending", "Pending: waiting for approvals.");
}

/** Both buttons, enabled or not: one decision at a time. */
function setButtons(enabled) {
  $("approve-button").disabled = !enabled;
  $("reject-button").disabled = !enabled;
}

/** GET /intents/{id}/approvals and show it. */
async function load() {
  setState("loading", "Loading…");
  let view;
  try {
    view = await client.approvals(intentId);
  } catch (error) {
    $("approve-view").hidden = true;
    setState(
      "missing",
      isRefusal(error)
        ? `${describeRefusal(error)}.`
        : `Could not load the intent: ${describeError(error)}`,
    );
    return;
  }
  await showView(view);
}

/**
 * The passkeys to ask: the ticked ones that are signers and have not decided;
 * when none is, every ticked one, and the service says why it refuses.
 */
function candidates(view) {
  const ticked = tickedPasskeys();
  if (ticked.length === 0) throw new Error("register a passkey and tick it (section 1)");
  const decided = new Set(
    [...view.approval.approvals, ...(view.approval.rejections ?? [])].map((a) => a.key),
  );
  const open = Object.keys(view.approval.signers).filter((key) => !decided.has(key));
  const fitting = ticked.filter((p) => open.some((key) => isPasskeyKey(p, key)));
  return fitting.length > 0 ? fitting : ticked;
}

/**
 * "Approve with passkey": one assertion over the challenge of the view shown
 * (one of the candidate passkeys makes it), sent by the client library.
 */
async function approve() {
  if (!current) return;
  const { view } = current;
  setButtons(false);
  showOutcome("working", "Waiting for the authenticator…");
  let passkey;
  const signer = async (request) => {
    const assertion = await assertWithOneOf(candidates(view), request.challenge);
    passkey = assertion.passkey;
    showOutcome("working", `Sending the approval of “${passkey.name}”…`);
    return assertion.signature;
  };
  try {
    const answer = await client.approve(intentId, signer, { view });
    if (answer.state === "accepted") {
      const key = Object.keys(view.approval.signers).find((k) => isPasskeyKey(passkey, k));
      current.accepted = true;
      if (key) approvedHere.set(key, passkey.name);
      renderView(current);
      $("approve-actions").hidden = true;
      setState("accepted", "This intent is accepted: its approvals reached the threshold.");
      const summary = `Approved by “${passkey.name}”: the intent is accepted.`;
      showOutcome("accepted", summary, shown(answer));
      return;
    }
    await showView(answer);
    const { weight, threshold } = answer.approval ?? {};
    // The answer is the view, shown above in full.
    showOutcome(
      "pending",
      `Approved by “${passkey.name}”: still pending, weight ${weight} of ${threshold}.`,
    );
  } catch (error) {
    if (!isRefusal(error)) {
      showOutcome("failed", `Not approved: ${describeError(error)}`);
      return;
    }
    showOutcome("rejected", describeRefusal(error), refusalBody(error));
    // Someone else completed it, or it expired: show what it is now.
    if (error.code === "not_pending") await load();
  } finally {
    setButtons(true);
  }
}

/**
 * "Reject with passkey": one assertion over the rejection challenge of the
 * view shown, sent by the client library; the page then says what was
 * rejected and what that did.
 */
async function reject() {
  if (!current) return;
  const { view } = current;
  setButtons(false);
  showOutcome("working", "Waiting for the authenticator…");
  let passkey;
  const signer = async (request) => {
    const assertion = await assertWithOneOf(candidates(view), request.challenge);
    passkey = assertion.passkey;
    showOutcome("working", `Sending the rejection of “${passkey.name}”…`);
    return assertion.signature;
  };
  const what = `intent ${view.id} (${refName(view)} ${view[refName(view)]})`;
  try {
    const answer = await client.reject(intentId, signer, { view });
    await showView(answer);
    if (answer.state === "rejected") {
      showOutcome(
        "intent-rejected",
        `Rejected by “${passkey.name}”: ${what} is rejected; it can no longer be accepted.`,
        shown(answer),
      );
      return;
    }
    const { weight, threshold } = answer.approval ?? {};
    showOutcome(
      "pending",
      `Rejected by “${passkey.name}”: ${what} stays pending, weight ${weight} of ` +
        `${threshold}; the signers who have not rejected can still reach the threshold.`,
    );
  } catch (error) {
    if (!isRefusal(error)) {
      showOutcome("failed", `Not rejected: ${describeError(error)}`);
      return;
    }
    showOutcome("rejected", describeRefusal(error), refusalBody(error));
    if (error.code === "not_pending") await load();
  } finally {
    setButtons(true);
  }
}

/** Turns the page into the approval view of intent `id` and loads it. */
export async function startApproval(id) {
  intentId = id;
  document.title = "Intents · approve or reject with a passkey";
  $("page-title").textContent = "Approve or reject an intent with a passkey";
  $("lede-submit").hidden = true;
  $("lede-approve").hidden = false;
  for (const section of document.querySelectorAll("[data-mode='submit']")) section.hidden = true;
  $("approve-section").hidden = false;
  $("approve-id").textContent = id;
  $("approve-button").addEventListener("click", approve);
  $("reject-button").addEventListener("click", reject);
  onPasskeysChanged(() => {
    if (current) renderQuorum(current.view.approval);
  });
  if (id.length === 0) {
    setState("missing", "The link names no intent.");
    return;
  }
  await load();
}

// The passkey page: registers passkeys with WebAuthn, signs a Variant A payload
// with one of them (or a multisig of several) and submits it to POST /intents;
// opened with `?approve=<id>`, it approves a pending intent instead
// (approve.js). The signed bytes, the challenge, the signature members and the
// calls to the service come from the service's client library (client.js, a
// bundle of client/browser.ts), so the page cannot drift from what the server
// verifies.

import {
  base64urlnopad,
  IntentsClient,
  multisigSignature,
  newIntentId,
  passkeyChallenge,
  signedBytes,
} from "./client.js";
import {
  $,
  describeError,
  describeRefusal,
  isRefusal,
  refusalBody,
  setStatus,
  shown,
} from "./dom.js";
import {
  allPasskeys,
  assertWithOneOf,
  publicKeyBase58,
  registerPasskey,
  renderPasskeys,
  tickedPasskeys,
} from "./passkeys.js";
import { startApproval } from "./approve.js";
import { showLogProof } from "./log_proof.js";

const MAX_SIGNERS = 16;

// --- template (admin) ---------------------------------------------------------

async function addTemplate() {
  const button = $("add-template-button");
  button.disabled = true;
  setStatus("template-status", "Adding…");
  try {
    const admin = new IntentsClient({
      url: location.origin,
      token: $("admin-token").value.trim(),
    });
    const { id, created } = await admin.addTemplate($("template-doc").value, "application/json");
    $("template-id").value = id;
    setStatus("template-status", `${created ? "Added" : "Already stored"}: ${id}`);
  } catch (error) {
    const text = isRefusal(error) ? describeRefusal(error) : `Failed: ${describeError(error)}`;
    setStatus("template-status", text, true);
  } finally {
    button.disabled = false;
  }
}

// --- signing and submitting ---------------------------------------------------

/** The Variant A payload from the form; throws with a message for the person. */
function readPayload() {
  const id = $("intent-id").value;
  const templateId = $("template-id").value.trim();
  if (id.length === 0) throw new Error("enter an intent id");
  if (templateId.length === 0) throw new Error("enter a template id");
  const payload = { id, template_id: templateId };
  const text = $("fields").value.trim();
  if (text.length > 0) {
    let fields;
    try {
      fields = JSON.parse(text);
    } catch (error) {
      throw new Error(`fields are not JSON: ${describeError(error)}`);
    }
    if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
      throw new Error("fields must be a JSON object");
    }
    payload.attrs = { fields };
  }
  return payload;
}

function showResult(state, summary, body) {
  const result = $("result");
  result.dataset.state = state;
  $("result-summary").textContent = summary;
  $("result-body").textContent = body;
}

/** Shows (or, with `null`, hides) the link that opens the approval view of a pending intent. */
function showShareLink(id) {
  $("share").hidden = id === null;
  setStatus("share-status", "");
  if (id === null) return;
  const url = new URL("/", location.href);
  url.searchParams.set("approve", id);
  const link = $("share-link");
  link.href = url.href;
  link.textContent = url.href;
}

async function copyShareLink() {
  try {
    await navigator.clipboard.writeText($("share-link").href);
    setStatus("share-status", "Copied.");
  } catch (error) {
    // Without clipboard access the link stays selectable by hand.
    getSelection()?.selectAllChildren($("share-link"));
    setStatus("share-status", `Not copied (${describeError(error)}); copy it by hand.`, true);
  }
}

/** The record POST /intents answered (201 accepted, 202 pending) as the result section shows it. */
function showSubmission(record) {
  if (record.state === "pending") {
    const approval = record.approval ?? {};
    showResult(
      "pending",
      `202 Accepted: the intent is stored pending, weight ${approval.weight} of ` +
        `${approval.threshold}; it needs more approvals before ${approval.expires_at}.`,
      shown(record),
    );
    showShareLink(record.id);
  } else {
    showResult("accepted", "201 Created: the service stored the intent.", shown(record));
  }
  // Not awaited: the proof comes within seconds, and the result is shown meanwhile.
  showLogProof(record);
}

async function signAndSubmit() {
  const button = $("submit");
  button.disabled = true;
  showResult("working", "Signing…", "");
  showShareLink(null);
  $("log-proof").hidden = true;
  try {
    const payload = readPayload();
    const multisig = $("mode-multisig").checked;
    const passkeys = allPasskeys();
    const signing = tickedPasskeys();
    if (signing.length === 0) throw new Error("register a passkey and tick it to sign");
    if (!multisig && signing.length !== 1) {
      throw new Error("tick exactly one passkey, or choose the multisig");
    }
    if (multisig && passkeys.length > MAX_SIGNERS) {
      throw new Error(`a multisig has at most ${MAX_SIGNERS} signers`);
    }

    const challengeText = await passkeyChallenge(payload);
    $("signed-text").textContent = new TextDecoder().decode(signedBytes(payload));
    $("challenge").textContent = challengeText;
    const challenge = base64urlnopad.decode(challengeText);

    const signatures = [];
    for (const passkey of signing) {
      showResult("working", `Waiting for “${passkey.name}”…`, "");
      signatures.push((await assertWithOneOf([passkey], challenge)).signature);
    }
    const signature = multisig
      ? multisigSignature({
        signers: Object.fromEntries(
          passkeys.map((p) => [publicKeyBase58(p), Math.max(1, Math.trunc(p.weight ?? 1))]),
        ),
        threshold: Math.max(1, Math.trunc(Number($("threshold").value)) || 1),
        signatures,
      })
      : signatures[0];
    const body = JSON.stringify({ payload, signature });
    $("request-body").textContent = JSON.stringify(JSON.parse(body), null, 2);

    showResult("working", "Submitting…", "");
    showSubmission(await new IntentsClient({ url: location.origin }).submit(body));
  } catch (error) {
    if (isRefusal(error)) {
      const summary = `${error.status} ${error.code}: the service rejected the intent.`;
      showResult("rejected", summary, refusalBody(error));
    } else {
      showResult("failed", `Not submitted: ${describeError(error)}`, "");
    }
  } finally {
    button.disabled = false;
  }
}

function fillNewIntentId() {
  $("intent-id").value = newIntentId();
}

// --- wiring -------------------------------------------------------------------

$("register").addEventListener("click", registerPasskey);
$("add-template-button").addEventListener("click", addTemplate);
$("new-id").addEventListener("click", fillNewIntentId);
$("submit").addEventListener("click", signAndSubmit);
$("share-copy").addEventListener("click", copyShareLink);
fillNewIntentId();
renderPasskeys();
if (!globalThis.PublicKeyCredential) {
  setStatus("passkey-status", "This browser does not offer WebAuthn (passkeys).", true);
  $("register").disabled = true;
}
const approving = new URLSearchParams(location.search).get("approve");
if (approving !== null) await startApproval(approving);
document.documentElement.dataset.ready = "true";

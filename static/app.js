// The passkey page: registers passkeys with WebAuthn, signs a Variant A payload
// with one of them (or a multisig of several) and submits it to POST /intents.
// The signed bytes, the challenge and the signature members come from the
// service's client library (client.js, a bundle of client/browser.ts), so the
// page cannot drift from what the server verifies.

import {
  base58,
  base64urlnopad,
  multisigSignature,
  p256PointFromSpki,
  passkeyChallenge,
  passkeySignature,
  signedBytes,
} from "./client.js";

const STORAGE_KEY = "intents.passkeys.v1";
// COSE algorithm -7: ECDSA P-256 with SHA-256, the only passkey kind the service verifies.
const ES256 = -7;
const RS256 = -257;
const WEBAUTHN_TIMEOUT_MS = 60_000;
const MAX_SIGNERS = 16;

const $ = (id) => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`missing #${id}`);
  return element;
};

/** @returns {{id: string, name: string, spki: string, weight: number}[]} */
function loadPasskeys() {
  try {
    const list = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "[]");
    return Array.isArray(list)
      ? list.filter((p) => typeof p?.id === "string" && typeof p?.spki === "string")
      : [];
  } catch {
    return [];
  }
}

function savePasskeys(list) {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(list));
}

/** The base58 SEC1 point the service shows as the signer of a passkey. */
function publicKeyBase58(passkey) {
  return base58.encode(p256PointFromSpki(base64urlnopad.decode(passkey.spki)));
}

function setStatus(id, text, bad = false) {
  const element = $(id);
  element.textContent = text;
  element.classList.toggle("bad", bad);
}

function describeError(error) {
  if (error instanceof DOMException) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

// --- passkey list -----------------------------------------------------------

let passkeys = loadPasskeys();
const selected = new Set(passkeys.map((p) => p.id));

function renderPasskeys() {
  const list = $("passkeys");
  list.replaceChildren();
  for (const passkey of passkeys) {
    const item = document.createElement("li");
    item.dataset.credentialId = passkey.id;

    const pick = document.createElement("input");
    pick.type = "checkbox";
    pick.className = "pick";
    pick.checked = selected.has(passkey.id);
    pick.title = "sign with this passkey";
    pick.addEventListener("change", () => {
      if (pick.checked) selected.add(passkey.id);
      else selected.delete(passkey.id);
    });

    const name = document.createElement("strong");
    name.textContent = passkey.name;

    const key = document.createElement("span");
    key.className = "key";
    key.textContent = publicKeyBase58(passkey);
    key.title = key.textContent;

    const weightLabel = document.createElement("label");
    weightLabel.className = "inline";
    weightLabel.textContent = "weight ";
    const weight = document.createElement("input");
    weight.type = "number";
    weight.className = "narrow weight";
    weight.min = "1";
    weight.max = "1000";
    weight.value = String(passkey.weight ?? 1);
    weight.addEventListener("change", () => {
      passkey.weight = Math.max(1, Math.trunc(Number(weight.value)) || 1);
      savePasskeys(passkeys);
    });
    weightLabel.append(weight);

    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "remove";
    remove.textContent = "Forget";
    remove.addEventListener("click", () => {
      passkeys = passkeys.filter((p) => p.id !== passkey.id);
      selected.delete(passkey.id);
      savePasskeys(passkeys);
      renderPasskeys();
    });

    item.append(pick, name, key, weightLabel, remove);
    list.append(item);
  }
  $("passkeys-empty").hidden = passkeys.length > 0;
}

async function registerPasskey() {
  const button = $("register");
  button.disabled = true;
  setStatus("passkey-status", "Waiting for the authenticator…");
  try {
    const name = $("passkey-name").value.trim() || "Passkey";
    const credential = await navigator.credentials.create({
      publicKey: {
        rp: { name: "Intents", id: location.hostname },
        // A fresh user handle per passkey, so a new one never replaces an older one.
        user: { id: crypto.getRandomValues(new Uint8Array(16)), name, displayName: name },
        // The registration is not verified by the server; only later assertions are.
        challenge: crypto.getRandomValues(new Uint8Array(32)),
        // RS256 is listed only because browsers warn without it; an RS256 key is refused below.
        pubKeyCredParams: [{ type: "public-key", alg: ES256 }, { type: "public-key", alg: RS256 }],
        authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
        attestation: "none",
        timeout: WEBAUTHN_TIMEOUT_MS,
      },
    });
    const response = credential.response;
    if (response.getPublicKeyAlgorithm() !== ES256) {
      throw new Error("the authenticator did not make a P-256 (ES256) key");
    }
    const spki = new Uint8Array(response.getPublicKey());
    const passkey = {
      id: base64urlnopad.encode(new Uint8Array(credential.rawId)),
      name,
      spki: base64urlnopad.encode(spki),
      weight: 1,
    };
    // Checked here so a bad key never reaches the list.
    p256PointFromSpki(spki);
    passkeys.push(passkey);
    selected.add(passkey.id);
    savePasskeys(passkeys);
    renderPasskeys();
    setStatus("passkey-status", `Registered “${name}”.`);
  } catch (error) {
    setStatus("passkey-status", `Registration failed: ${describeError(error)}`, true);
  } finally {
    button.disabled = false;
  }
}

// --- template (admin) ---------------------------------------------------------

async function addTemplate() {
  const button = $("add-template-button");
  button.disabled = true;
  setStatus("template-status", "Adding…");
  try {
    const response = await fetch("/templates", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${$("admin-token").value.trim()}`,
      },
      body: $("template-doc").value,
    });
    const body = await response.json();
    if (!response.ok) {
      setStatus("template-status", `${response.status} ${body.code}: ${body.message}`, true);
      return;
    }
    $("template-id").value = body.id;
    setStatus(
      "template-status",
      `${response.status === 201 ? "Added" : "Already stored"}: ${body.id}`,
    );
  } catch (error) {
    setStatus("template-status", `Failed: ${describeError(error)}`, true);
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

/** One WebAuthn assertion over `challenge` by one stored passkey, as a Passkey signature. */
async function assert(passkey, challenge) {
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge,
      rpId: location.hostname,
      allowCredentials: [{ type: "public-key", id: base64urlnopad.decode(passkey.id) }],
      userVerification: "preferred",
      timeout: WEBAUTHN_TIMEOUT_MS,
    },
  });
  const response = credential.response;
  return passkeySignature({
    authenticatorData: new Uint8Array(response.authenticatorData),
    clientDataJSON: new Uint8Array(response.clientDataJSON),
    signature: new Uint8Array(response.signature),
    publicKey: base64urlnopad.decode(passkey.spki),
  });
}

function showResult(state, summary, body) {
  const result = $("result");
  result.dataset.state = state;
  $("result-summary").textContent = summary;
  $("result-body").textContent = body;
}

async function signAndSubmit() {
  const button = $("submit");
  button.disabled = true;
  showResult("working", "Signing…", "");
  try {
    const payload = readPayload();
    const multisig = $("mode-multisig").checked;
    const signing = passkeys.filter((p) => selected.has(p.id));
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
      signatures.push(await assert(passkey, challenge));
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
    const response = await fetch("/intents", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    let shown = text;
    let answer;
    try {
      answer = JSON.parse(text);
      shown = JSON.stringify(answer, null, 2);
    } catch {
      // Not JSON (a proxy's page, say): show it as it came.
    }
    if (response.status === 201) {
      showResult("accepted", `${response.status} Created: the service stored the intent.`, shown);
    } else {
      const code = typeof answer?.code === "string" ? answer.code : "unknown";
      showResult("rejected", `${response.status} ${code}: the service rejected the intent.`, shown);
    }
  } catch (error) {
    showResult("failed", `Not submitted: ${describeError(error)}`, "");
  } finally {
    button.disabled = false;
  }
}

function newIntentId() {
  $("intent-id").value = crypto.randomUUID();
}

// --- wiring -------------------------------------------------------------------

$("register").addEventListener("click", registerPasskey);
$("add-template-button").addEventListener("click", addTemplate);
$("new-id").addEventListener("click", newIntentId);
$("submit").addEventListener("click", signAndSubmit);
newIntentId();
renderPasskeys();
if (!globalThis.PublicKeyCredential) {
  setStatus("passkey-status", "This browser does not offer WebAuthn (passkeys).", true);
  $("register").disabled = true;
}
document.documentElement.dataset.ready = "true";

// The passkeys this browser registered on the page (credential id, name and
// public key, kept in localStorage), which of them are ticked to sign, and one
// WebAuthn assertion by one of them. The submit and the approval flows share it.

import { base58, base64urlnopad, p256PointFromSpki, passkeySignature } from "./client.js";
import { $, describeError, el, setStatus } from "./dom.js";

const STORAGE_KEY = "intents.passkeys.v1";
// COSE algorithm -7: ECDSA P-256 with SHA-256, the only passkey kind the service verifies.
const ES256 = -7;
const RS256 = -257;
const WEBAUTHN_TIMEOUT_MS = 60_000;

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

function savePasskeys() {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(passkeys));
}

let passkeys = loadPasskeys();
const selected = new Set(passkeys.map((p) => p.id));
const listeners = new Set();

/** Every registered passkey, in registration order. */
export function allPasskeys() {
  return passkeys;
}

/** The ticked passkeys, in registration order. */
export function tickedPasskeys() {
  return passkeys.filter((p) => selected.has(p.id));
}

/** Calls `listener` whenever a passkey is registered, forgotten, ticked or unticked. */
export function onPasskeysChanged(listener) {
  listeners.add(listener);
}

function changed() {
  for (const listener of listeners) listener();
}

/** The base58 SEC1 point the service shows as the signer of a passkey. */
export function publicKeyBase58(passkey) {
  return base58.encode(p256PointFromSpki(base64urlnopad.decode(passkey.spki)));
}

/**
 * True when a signer key (base58 SEC1, compressed or not) is this passkey's
 * point. The compressed form is the x coordinate behind 02 or 03 by the parity
 * of y, so both forms are recognized without curve arithmetic.
 */
export function isPasskeyKey(passkey, keyText) {
  let key;
  try {
    key = base58.decode(keyText);
  } catch {
    return false;
  }
  const point = p256PointFromSpki(base64urlnopad.decode(passkey.spki));
  if (key.length === 65) return key.every((byte, i) => byte === point[i]);
  if (key.length !== 33) return false;
  if (key[0] !== 2 + (point[64] & 1)) return false;
  return key.subarray(1).every((byte, i) => byte === point[1 + i]);
}

/** Renders the list of section 1. */
export function renderPasskeys() {
  const list = $("passkeys");
  list.replaceChildren();
  for (const passkey of passkeys) {
    const item = el("li");
    item.dataset.credentialId = passkey.id;

    const pick = el("input", { className: "pick", title: "sign with this passkey" });
    pick.type = "checkbox";
    pick.checked = selected.has(passkey.id);
    pick.addEventListener("change", () => {
      if (pick.checked) selected.add(passkey.id);
      else selected.delete(passkey.id);
      changed();
    });

    const name = el("strong", { text: passkey.name });
    const keyText = publicKeyBase58(passkey);
    const key = el("span", { className: "key", text: keyText, title: keyText });

    const weightLabel = el("label", { className: "inline", text: "weight " });
    const weight = el("input", { className: "narrow weight" });
    weight.type = "number";
    weight.min = "1";
    weight.max = "1000";
    weight.value = String(passkey.weight ?? 1);
    weight.addEventListener("change", () => {
      passkey.weight = Math.max(1, Math.trunc(Number(weight.value)) || 1);
      savePasskeys();
    });
    weightLabel.append(weight);

    const remove = el("button", { className: "remove", text: "Forget" });
    remove.type = "button";
    remove.addEventListener("click", () => {
      passkeys = passkeys.filter((p) => p.id !== passkey.id);
      selected.delete(passkey.id);
      savePasskeys();
      renderPasskeys();
      changed();
    });

    item.append(pick, name, key, weightLabel, remove);
    list.append(item);
  }
  $("passkeys-empty").hidden = passkeys.length > 0;
}

/** Registers a new passkey with WebAuthn and adds it to the list, ticked. */
export async function registerPasskey() {
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
    savePasskeys();
    renderPasskeys();
    changed();
    setStatus("passkey-status", `Registered “${name}”.`);
  } catch (error) {
    setStatus("passkey-status", `Registration failed: ${describeError(error)}`, true);
  } finally {
    button.disabled = false;
  }
}

/**
 * One WebAuthn assertion over `challenge` by one of `candidates` (the
 * authenticator picks among them), as a Passkey signature member together with
 * the passkey that made it: its public key is the one kept at registration.
 */
export async function assertWithOneOf(candidates, challenge) {
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge,
      rpId: location.hostname,
      allowCredentials: candidates.map((p) => ({
        type: "public-key",
        id: base64urlnopad.decode(p.id),
      })),
      userVerification: "preferred",
      timeout: WEBAUTHN_TIMEOUT_MS,
    },
  });
  const id = base64urlnopad.encode(new Uint8Array(credential.rawId));
  const passkey = candidates.find((p) => p.id === id);
  if (!passkey) throw new Error("the authenticator answered with a passkey that was not asked");
  const response = credential.response;
  const signature = passkeySignature({
    authenticatorData: new Uint8Array(response.authenticatorData),
    clientDataJSON: new Uint8Array(response.clientDataJSON),
    signature: new Uint8Array(response.signature),
    publicKey: base64urlnopad.decode(passkey.spki),
  });
  return { passkey, signature };
}

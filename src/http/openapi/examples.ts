/**
 * Examples for the OpenAPI document, made from real signatures: fixed keys
 * sign fixed payloads, so every example request verifies against the server,
 * and deterministic signatures (RFC 8032, RFC 6979 nonces) keep the document
 * the same on every build.
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { base58 } from "@scure/base";
import { canonicalBytes } from "@intents/protocol/jcs";
import { challengeText } from "@intents/protocol/signed";

const utf8 = new TextEncoder();

/** The origin and relying-party id the passkey examples were made for (`deno task start`'s defaults). */
export const EXAMPLE_PASSKEY_ORIGIN = "http://localhost:8000";
/** Relying-party id hashed into the example authenticator data. */
export const EXAMPLE_PASSKEY_RP_ID = "localhost";

/** A document to store as a template or policy, with its content address. */
export interface ExampleDocument {
  contentType: string;
  text: string;
  id: string;
}

/** One example request body for `POST /intents`, with a summary. */
export interface ExampleIntent {
  summary: string;
  body: Record<string, unknown>;
  /** What the server stores and returns for it (with a fixed `received_at`). */
  record: Record<string, unknown>;
}

/** Everything the document shows as examples. */
export interface OpenApiExamples {
  template: ExampleDocument;
  policy: ExampleDocument;
  /** Keyed by a stable example name. */
  intents: Record<string, ExampleIntent>;
}

/** A webhook delivery attempt as the attempts log shows it. */
export const ATTEMPT_EXAMPLE = {
  event_id: "42",
  attempt: 1,
  at: "2026-01-01T12:00:01.000Z",
  status: 204,
  error: null,
  duration_ms: 38,
};

/** A webhook endpoint as the webhook admin API shows it. */
export const WEBHOOK_EXAMPLE = {
  id: "wh_0193f2b1c4d87a4e9b1f2c3d4e5f6a7b",
  url: "https://hooks.example/intents",
  events: ["intent.accepted"],
  description: "orchestrator",
  status: "active",
  created_at: "2026-01-01T12:00:00.000Z",
  after: "42",
  next_event: null,
  lag: 0,
  last_attempt: ATTEMPT_EXAMPLE,
};

/** A webhook secret. */
export const SECRET_EXAMPLE = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwtWwpwaB9zSM=";

function document(text: string): ExampleDocument {
  return { contentType: "application/json", text, id: base58.encode(sha256(utf8.encode(text))) };
}

/** A 32-byte secret derived from a label, so the examples need no stored secret. */
function fixedSecret(label: string): Uint8Array {
  return sha256(utf8.encode(`intents openapi example: ${label}`));
}

function ed25519Member(signed: unknown, secret: Uint8Array) {
  return {
    Ed25519: {
      pub_key: base58.encode(ed25519.getPublicKey(secret)),
      signature: base58.encode(ed25519.sign(canonicalBytes(signed), secret)),
    },
  };
}

/** A passkey assertion as a browser and authenticator would make it. */
function passkeyMember(signed: unknown, secret: Uint8Array) {
  const clientData = JSON.stringify({
    type: "webauthn.get",
    challenge: challengeText(canonicalBytes(signed)),
    origin: EXAMPLE_PASSKEY_ORIGIN,
    crossOrigin: false,
  });
  const authenticatorData = new Uint8Array(37);
  authenticatorData.set(sha256(utf8.encode(EXAMPLE_PASSKEY_RP_ID)), 0);
  authenticatorData[32] = 0x05; // user present and user verified
  const message = new Uint8Array(37 + 32);
  message.set(authenticatorData, 0);
  message.set(sha256(utf8.encode(clientData)), 37);
  const signature = p256.sign(message, secret, {
    prehash: true, // WebAuthn signs SHA-256(authenticatorData || SHA-256(clientData))
    lowS: false, // authenticators do not normalise s; the server accepts either half
    format: "der", // what authenticators emit
    extraEntropy: false, // RFC 6979 nonce only, so the example is reproducible
  });
  return {
    Passkey: {
      authenticator_data: base58.encode(authenticatorData),
      client_data: clientData,
      pub_key: base58.encode(p256.getPublicKey(secret, true)),
      signature: base58.encode(signature),
    },
  };
}

/** An example request `body`, and what the server stores and returns for it (at a fixed time). */
function example(
  summary: string,
  body: Record<string, Record<string, unknown>>,
  authorship: { kind: string; signers: string[] },
): ExampleIntent {
  const { id, template_id, policy_id, attrs } = body.payload ?? body.intent;
  const record = {
    id,
    variant: body.payload ? "A" : "B",
    ...(template_id ? { template_id } : { policy_id }),
    ...(attrs ? { attrs } : {}),
    authorship,
    received_at: "2026-01-01T12:00:00.000Z",
    state: "accepted",
    request: body,
  };
  return { summary, body, record };
}

/**
 * Builds the example documents and signed requests: the same on every call.
 * The document they go into is built once per app (`GET /openapi.json`).
 */
export function openApiExamples(): OpenApiExamples {
  const edSecret = fixedSecret("ed25519");
  const pkSecret = fixedSecret("passkey");
  const edKey = base58.encode(ed25519.getPublicKey(edSecret));
  const pkKey = base58.encode(p256.getPublicKey(pkSecret, true));
  const template = document('{"name":"payment","fields":{"amount":"decimal","to":"account"}}');
  const policy = document('{"name":"two-person rule","threshold":2}');
  const attrs = { fields: { amount: "12.50", to: "acct-42" } };

  const payloadEd = { id: "order-2026-0001", template_id: template.id, attrs };
  const bodyAEd = { payload: payloadEd, signature: ed25519Member(payloadEd, edSecret) };

  const payloadPk = { id: "order-2026-0002", template_id: template.id };
  const bodyAPk = { payload: payloadPk, signature: passkeyMember(payloadPk, pkSecret) };

  const intentEd = { id: "6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b", policy_id: policy.id, attrs };
  const bodyBEd = { authorship: { Signed: ed25519Member(intentEd, edSecret) }, intent: intentEd };

  const intentMs = { id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", policy_id: policy.id, attrs };
  const multisig = {
    Multisig: {
      pub_key: { signers: { [edKey]: 1, [pkKey]: 1 }, threshold: 2 },
      signatures: [ed25519Member(intentMs, edSecret), passkeyMember(intentMs, pkSecret)],
    },
  };
  const bodyBMs = { authorship: { Signed: multisig }, intent: intentMs };
  const ed = { kind: "Ed25519", signers: [edKey] };
  const pk = { kind: "Passkey", signers: [pkKey] };

  return {
    template,
    policy,
    intents: {
      variant_a_ed25519: example("Variant A signed with Ed25519", bodyAEd, ed),
      variant_a_passkey: example(
        "Variant A signed with a passkey (WebAuthn assertion)",
        bodyAPk,
        pk,
      ),
      variant_b_ed25519: example("Variant B signed with Ed25519", bodyBEd, ed),
      variant_b_multisig: example(
        "Variant B signed by a 2-of-2 multisig (Ed25519 key and passkey)",
        bodyBMs,
        { kind: "Multisig", signers: [edKey, pkKey] },
      ),
    },
  };
}

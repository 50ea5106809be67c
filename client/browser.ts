/**
 * The browser entry of the client library: what the passkey page needs, and
 * nothing that pulls in Ed25519. `deno task bundle` turns it into
 * `static/client.js`, so the page computes the signed bytes and the challenge
 * with the very code the server and the other clients use.
 * @module
 */

export {
  multisigSignature,
  p256PointFromSpki,
  passkeyChallenge,
  passkeyChallengeBytes,
  passkeySignature,
  signedBytes,
} from "./mod.ts";
export type {
  IntentRecord,
  MultisigSignature,
  PasskeySignature,
  Payload,
  VariantABody,
  WebAuthnAssertion,
} from "./mod.ts";
export { base58, base64urlnopad } from "@scure/base";

/**
 * The browser entry of the client library: what the passkey page needs, with
 * no Ed25519 signing (Ed25519 verifies the log's signatures only: the page
 * checks an intent's inclusion proof with `client.log.proveEntry`).
 * `deno task bundle` turns it into `static/client.js`, so the page computes
 * the signed bytes, the challenge and the log's entry with the very code the
 * server and the other clients use.
 *
 * To approve a pending intent with a passkey:
 * `new IntentsClient({ url: location.origin }).approve(id, webAuthnSigner({ publicKey, credentialId }))`
 * (`approvals(id)` first shows what is signed and who has decided); `reject`
 * the same way says no. This `IntentsClient` takes signer functions only, not
 * Ed25519 keys.
 * @module
 */

export {
  appliedRules,
  approvalRequest,
  entryBytes,
  LogVerificationError,
  multisigSignature,
  p256PointFromSpki,
  passkeyChallenge,
  passkeyChallengeBytes,
  passkeySignature,
  rejectionBytes,
  rejectionRequest,
  ruleEffect,
  signedBytes,
  webAuthnSigner,
} from "./mod.ts";
export { type ApproveOptions, IntentsClient, IntentsError } from "./client.ts";
export { newIntentId } from "./ids.ts";
export type {
  AppliedRule,
  ApprovalRequest,
  ApprovalSigner,
  ApprovalsView,
  DocumentRule,
  IntentRecord,
  MultisigSignature,
  PasskeySignature,
  Payload,
  PendingApprovals,
  VariantABody,
  WebAuthnAssertion,
  WebAuthnSignerOptions,
} from "./mod.ts";
// Their types too, so that the page's code and these docs can name them.
export { base58, base64urlnopad, type BytesCoder, type Coder } from "@scure/base";

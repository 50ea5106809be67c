/**
 * Passkey assertions for the verifier's unit tests: the policies they run
 * under, the bytes they sign, and assertions made by the software
 * authenticator, decoded as the verifier takes them.
 * @module
 */

import { base58 } from "@scure/base";
import type { PasskeyAssertion, PasskeyPolicy } from "../../src/domain/passkey.ts";
import type { AssertOptions, SoftwarePasskey } from "../../testing/software_passkey.ts";

/** The default policy of the tests: `localhost`, user verification not required. */
export const policy: PasskeyPolicy = {
  rpIds: ["localhost"],
  origins: ["http://localhost:8000"],
  requireUserVerification: false,
};

/** The same, with user verification required. */
export const strictPolicy: PasskeyPolicy = { ...policy, requireUserVerification: true };

/** What the assertions sign. */
export const signedBytes = new TextEncoder().encode('{"id":"intent-1","template_id":"t"}');

/** `key` signs {@link signedBytes}; the body decoded to an assertion. */
export async function assertionBy(
  key: SoftwarePasskey,
  options: AssertOptions = {},
): Promise<PasskeyAssertion & { publicKey: Uint8Array }> {
  const body = await key.assert(signedBytes, options);
  return {
    authenticatorData: base58.decode(body.authenticator_data),
    clientData: body.client_data,
    publicKey: base58.decode(body.pub_key),
    signature: base58.decode(body.signature),
  };
}

/**
 * What the `POST /intents` suites share on one service: a template, a
 * policy, two Ed25519 keys, two software passkeys (uncompressed and
 * compressed public key), valid bodies of each variant, and the assertions for
 * the two most common refusals.
 * @module
 */

import {
  type Ed25519Key,
  generateEd25519Key,
  signVariantA,
  signVariantB,
} from "../../client/mod.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";
import { expectError, newIntent, newPayload } from "./fixtures.ts";
import type { Harness } from "./harness.ts";
import type { Json } from "./record.ts";

/** See the module documentation. */
export interface SubmitKit {
  templateId: string;
  policyId: string;
  key: Ed25519Key;
  other: Ed25519Key;
  passkey: SoftwarePasskey;
  passkeyCompressed: SoftwarePasskey;
  /** A fresh, valid Variant A body signed by `key`. */
  goodA(): Json;
  /** A fresh, valid Variant B body signed by `key`. */
  goodB(): Json;
  /** Asserts 400 `invalid_body` naming `mentions` and not echoing `notEcho`. */
  invalidBody(body: unknown, mentions: string | string[], notEcho?: string): Promise<void>;
  /** Asserts 400 `invalid_signature`, naming `mentions` when given. */
  invalidSignature(body: unknown, mentions?: string): Promise<void>;
}

/** Adds a template and a policy to the harness's server and makes the keys. */
export async function submitKit(h: Harness): Promise<SubmitKit> {
  const templateId = await h.newTemplate();
  const policyId = await h.newPolicy();
  const key = generateEd25519Key();
  const other = generateEd25519Key();
  const passkey = await SoftwarePasskey.create();
  const passkeyCompressed = await SoftwarePasskey.create({ compressed: true });
  return {
    templateId,
    policyId,
    key,
    other,
    passkey,
    passkeyCompressed,
    goodA: () => signVariantA(newPayload(templateId), key) as unknown as Json,
    goodB: () => signVariantB(newIntent(policyId), key) as unknown as Json,
    async invalidBody(body, mentions, notEcho) {
      await expectError(await h.submit(body), 400, "invalid_body", { mentions, notEcho });
    },
    async invalidSignature(body, mentions) {
      await expectError(await h.submit(body), 400, "invalid_signature", { mentions });
    },
  };
}

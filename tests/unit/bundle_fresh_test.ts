/**
 * The committed browser bundle of the client library (`static/client.js`) is
 * fresh, self-contained and computes the same bytes as the library itself.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  bundleInputs,
  digestInputs,
  OUTPUT,
  recordedDigest,
  ROOT,
} from "../../tools/build/bundle_client.ts";
import * as library from "../../client/mod.ts";
import { base64urlnopad } from "@scure/base";

const bundlePath = join(ROOT, OUTPUT);
const bundleText = await Deno.readTextFile(bundlePath);

Deno.test("static/client.js records the digest of its current inputs (else run `deno task bundle`)", async () => {
  const recorded = recordedDigest(bundleText);
  assert.ok(recorded, `${OUTPUT} has no "// inputs-sha256:" header`);
  const inputs = await bundleInputs();
  const names = inputs.map((i) => i.name);
  for (const expected of ["client/browser.ts", "client/mod.ts", "protocol/jcs.ts"]) {
    assert.ok(names.includes(expected), `${expected} is an input of the bundle`);
  }
  // One JCS writer, the wire protocol's, which the service uses too.
  assert.ok(
    !names.some((n) => n.startsWith("npm:canonicalize@")) &&
      names.every((n) => !n.startsWith("src/")),
  );
  assert.equal(
    recorded,
    await digestInputs(inputs),
    `${OUTPUT} is stale: its inputs changed since it was built; run \`deno task bundle\``,
  );
});

Deno.test("the inputs digest changes when a file's bytes, a file's name or a locked package changes", async () => {
  const encoder = new TextEncoder();
  const base = [
    { name: "client/mod.ts", bytes: encoder.encode("export const a = 1;\n") },
    { name: "npm:canonicalize@5.1.0", bytes: encoder.encode("sha512-abc") },
  ];
  const digest = await digestInputs(base);
  assert.match(digest, /^[0-9a-f]{64}$/);
  assert.equal(await digestInputs([...base].reverse()), digest, "input order does not matter");
  assert.notEqual(
    await digestInputs([base[0], { ...base[1], bytes: encoder.encode("sha512-abd") }]),
    digest,
  );
  assert.notEqual(
    await digestInputs([{ ...base[0], name: "client/mod2.ts" }, base[1]]),
    digest,
  );
  assert.notEqual(
    await digestInputs([{ ...base[0], bytes: encoder.encode("export const a = 2;\n") }, base[1]]),
    digest,
  );
  // Moving bytes from one name to the next is a different input set.
  assert.notEqual(
    await digestInputs([
      { name: "a", bytes: encoder.encode("xy") },
      { name: "b", bytes: encoder.encode("") },
    ]),
    await digestInputs([
      { name: "a", bytes: encoder.encode("x") },
      { name: "b", bytes: encoder.encode("y") },
    ]),
  );
});

Deno.test("static/client.js imports nothing and cannot sign with Ed25519", () => {
  const code = bundleText.split("\n").filter((line) => !line.startsWith("//")).join("\n");
  assert.doesNotMatch(code, /^\s*import[\s{*]/m, "a browser cannot resolve bare imports");
  assert.doesNotMatch(code, /\bimport\s*\(/, "no dynamic imports");
  // Ed25519 verifies the log's signatures; the page never signs with it.
  const exported = /^export \{([^}]*)\}/m.exec(code)?.[1] ?? "";
  assert.match(exported, /\bentryBytes\b/);
  assert.doesNotMatch(exported, /ed25519|signVariant|generateEd25519Key/i, "no Ed25519 signing");
  assert.doesNotMatch(code, /\/root\/|\.cache\/deno/, "no machine-specific paths");
});

Deno.test("static/client.js computes the same signed bytes, challenge and signature members as client/mod.ts", async () => {
  const bundled = await import(new URL(`file://${bundlePath}`).href);
  const payload: library.Payload = {
    template_id: "tmpl",
    id: "é-😀-\u2028",
    attrs: { fields: { z: 1e21, a: [true, null, 0.1], "\u00e9": "x" } },
  };
  assert.deepEqual(bundled.signedBytes(payload), library.signedBytes(payload));
  assert.equal(await bundled.passkeyChallenge(payload), await library.passkeyChallenge(payload));
  assert.deepEqual(
    await bundled.passkeyChallengeBytes(payload),
    await library.passkeyChallengeBytes(payload),
  );

  const spki = new Uint8Array(91);
  spki.set(
    Uint8Array.from(
      "3059301306072a8648ce3d020106082a8648ce3d030107034200".match(/../g)!,
      (h) => parseInt(h, 16),
    ),
  );
  spki[26] = 4;
  const assertion = {
    authenticatorData: new Uint8Array(37).fill(7),
    clientDataJSON: new TextEncoder().encode('{"type":"webauthn.get"}'),
    signature: new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
    publicKey: spki,
  };
  const passkey = bundled.passkeySignature(assertion);
  assert.deepEqual(passkey, library.passkeySignature(assertion));
  const options = {
    signers: { [passkey.Passkey.pub_key]: 1 },
    threshold: 1,
    signatures: [passkey],
  };
  assert.deepEqual(bundled.multisigSignature(options), library.multisigSignature(options));
});

Deno.test("static/client.js checks an approvals view and asks a passkey as client/mod.ts does", async () => {
  const bundled = await import(new URL(`file://${bundlePath}`).href);
  const signed = { id: "pay-1", template_id: "tmpl", attrs: { fields: { amount: 5 } } };
  const view = {
    id: "pay-1",
    state: "pending",
    variant: "A",
    template_id: "tmpl",
    signed,
    challenge: await library.passkeyChallenge(signed),
    reject_challenge: base64urlnopad.encode(
      new Uint8Array(
        await crypto.subtle.digest(
          "SHA-256",
          library.rejectionBytes(signed) as Uint8Array<ArrayBuffer>,
        ),
      ),
    ),
    approval: {
      threshold: 2,
      weight: 1,
      signers: {},
      approvals: [],
      rejections: [],
      expires_at: "",
    },
  } as library.PendingApprovals;
  const request = await bundled.approvalRequest(view);
  const expected = await library.approvalRequest(view);
  assert.deepEqual(request.bytes, expected.bytes);
  assert.deepEqual(request.challenge, expected.challenge);
  const rejection = await bundled.rejectionRequest(view);
  assert.deepEqual(rejection, await library.rejectionRequest(view));
  assert.deepEqual(bundled.rejectionBytes(signed), library.rejectionBytes(signed));
  await assert.rejects(
    bundled.approvalRequest({ ...view, signed: { ...signed, id: "pay-2" } }),
    { name: "IntentsError", code: "bad_response" },
  );

  // The page's signer hands the checked challenge to navigator.credentials.get.
  let asked: Uint8Array | undefined;
  const credentials = {
    get(options: { publicKey: { challenge: Uint8Array } }) {
      asked = options.publicKey.challenge;
      return Promise.resolve({
        response: {
          authenticatorData: new Uint8Array(37).buffer,
          clientDataJSON: new TextEncoder().encode("{}").buffer,
          signature: new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]).buffer,
        },
      });
    },
  };
  const publicKey = new Uint8Array(33).fill(2);
  const member = await bundled.webAuthnSigner({ publicKey, credentials })(request);
  assert.deepEqual(asked, expected.challenge);
  assert.deepEqual(member, await library.webAuthnSigner({ publicKey, credentials })(expected));
  assert.equal(typeof bundled.IntentsClient.prototype.approve, "function");
  assert.equal(typeof bundled.IntentsClient.prototype.reject, "function");
});

/**
 * The signers of a Multisig or of a governed document, decoded by one rule
 * (`decodeSigners`), and what a quorum makes of a submission's approvals
 * (`governance.ts`): the refusal of a key the document does not name, and
 * the approval state a record starts with.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { base58 } from "@scure/base";
import { decodeSigners, publicKeyCache } from "../../src/domain/public_keys.ts";
import {
  approvalsOf,
  checkDocument,
  quorumReached,
  rejectionDecides,
  signerNotAuthorized,
  startApproval,
} from "../../src/domain/governance.ts";
import type { Quorum } from "../../src/domain/intent.ts";
import { ServiceError } from "../../src/errors.ts";
import { torsionTwin } from "../support/keys.ts";

const edKey = () => base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));

Deno.test("decodeSigners gives the signers by key id, keys of either curve compared as points", () => {
  const secret = p256.utils.randomSecretKey();
  const point = base58.encode(p256.getPublicKey(secret, false));
  const ed = edKey();
  const signers = decodeSigners({ [ed]: 1, [point]: 3 }, { path: "pub_key.signers" });
  assert.deepEqual([...signers.values()], [{ keyText: ed, weight: 1 }, {
    keyText: point,
    weight: 3,
  }]);
  // The P-256 key's id is its compressed point.
  assert.ok(signers.has(base58.encode(p256.getPublicKey(secret, true))));
});

Deno.test("decodeSigners refuses a key outside the prime-order subgroup and two forms of one point, with the code asked", () => {
  const secret = ed25519.utils.randomSecretKey();
  const twin = base58.encode(torsionTwin(secret).publicKey);
  assert.throws(
    () =>
      decodeSigners({ [twin]: 1 }, {
        path: "authorization.signers",
        code: "invalid_authorization",
      }),
    {
      name: "ServiceError",
      code: "invalid_authorization",
      message: /^authorization\.signers(\.\w+|\[".*"\]): is not in the prime-order subgroup$/,
    },
  );

  const p = p256.utils.randomSecretKey();
  const forms = {
    [base58.encode(p256.getPublicKey(p, true))]: 1,
    [base58.encode(p256.getPublicKey(p, false))]: 1,
  };
  assert.throws(() => decodeSigners(forms, { path: "pub_key.signers" }), {
    code: "invalid_body",
    message: /: names the same key as another signer$/,
  });
  assert.throws(() => decodeSigners({ "0OIl": 1 }, { path: "s", code: "invalid_authorization" }), {
    code: "invalid_authorization",
    message: /: is not valid base58$/,
  });
});

Deno.test("decodeSigners keeps what it decoded in the cache it is given", () => {
  const keys = publicKeyCache();
  const key = edKey();
  decodeSigners({ [key]: 1 }, { path: "s", cache: keys });
  assert.equal(keys.size, 1);
  assert.equal(keys.get(key)?.id, key);
});

function quorumOf(weights: Record<string, number>, threshold: number, windowS = 60): Quorum {
  return {
    signers: new Map(
      Object.entries(weights).map(([key, weight]) => [key, { keyText: key, weight }]),
    ),
    threshold,
    unsigned: false,
    approvalWindowS: windowS,
  };
}

Deno.test("a key the document does not name is signer_not_authorized, naming where it signed", () => {
  const quorum = quorumOf({ a: 1 }, 1);
  const signed = [
    {
      keyId: "b",
      kind: "Ed25519" as const,
      path: "signature.Ed25519",
      signature: new Uint8Array(),
    },
  ];
  assert.throws(() => approvalsOf(quorum, signed), {
    name: "ServiceError",
    code: "signer_not_authorized",
    message: "signature.Ed25519: the key is not a signer of the document",
  });
  assert.deepEqual(
    signerNotAuthorized("signature.Ed25519"),
    new ServiceError(
      "signer_not_authorized",
      "signature.Ed25519: the key is not a signer of the document",
    ),
  );
});

Deno.test("startApproval stamps the submission's approvals and the deadline of the approval window", () => {
  const quorum = quorumOf({ a: 1, b: 2 }, 3, 90);
  const at = "2026-06-01T12:00:00.000Z";
  assert.deepEqual(startApproval(quorum, [{ key: "a", kind: "Ed25519" }], at), {
    threshold: 3,
    signers: { a: 1, b: 2 },
    approvals: [{ key: "a", kind: "Ed25519", at }],
    rejections: [],
    expiresAt: "2026-06-01T12:01:30.000Z",
  });
  assert.equal(quorumReached(quorum, [{ key: "a", kind: "Ed25519" }]), false);
  assert.equal(
    quorumReached(quorum, [{ key: "b", kind: "Passkey" }, { key: "a", kind: "Ed25519" }]),
    true,
  );
});

Deno.test("checkDocument reads a quorum only from a document sent as JSON", () => {
  const key = edKey();
  const bytes = new TextEncoder().encode(
    JSON.stringify({ authorization: { signers: { [key]: 2 }, threshold: 2 } }),
  );
  const quorum = checkDocument({ bytes, json: true });
  assert.equal(quorum?.threshold, 2);
  assert.equal(quorum?.approvalWindowS, 604_800);
  assert.throws(() => checkDocument({ bytes: new TextEncoder().encode("{"), json: true }), {
    code: "invalid_json",
  });
});

Deno.test("a document that looks governed but is not sent as JSON is invalid_authorization", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const refused = [
    JSON.stringify({ authorization: { signers: { [edKey()]: 2 }, threshold: 2 } }),
    // Whatever the member holds, and after white space.
    ' \r\n\t{"rules": 1, "authorization": "none"}',
    '{"authorization": null}',
  ];
  for (const text of refused) {
    assert.throws(() => checkDocument({ bytes: encode(text), json: false }), {
      code: "invalid_authorization",
      message: /send it as application\/json/,
    });
  }
  const stored = [
    '{"rules": "no authorization"}',
    '[{"authorization": 1}]',
    '{"a": {"authorization": 1}}',
    // Not strict JSON: a member named twice, a byte order mark, not JSON at all.
    '{"authorization": 1, "authorization": 2}',
    '\ufeff{"authorization": 1}',
    "authorization: yes",
    "",
  ];
  for (const text of stored) {
    assert.equal(checkDocument({ bytes: encode(text), json: false }), null);
  }
  assert.equal(checkDocument({ bytes: new Uint8Array([0x7b, 0xff, 0x7d]), json: false }), null);
});

Deno.test("an intent is rejected once the keys that have not rejected cannot reach the threshold", () => {
  const signers = { a: 1, b: 2, c: 3 };
  const rejecting = (...keys: string[]) =>
    rejectionDecides({
      signers,
      threshold: 4,
      rejections: keys.map((key) => ({ key, kind: "Ed25519" as const, at: "" })),
    });
  // 6 in all: rejecting a (5 left) or b (4 left) still leaves 4; c (3 left) does not.
  assert.equal(rejecting(), false);
  assert.equal(rejecting("a"), false);
  assert.equal(rejecting("b"), false);
  assert.equal(rejecting("c"), true);
  assert.equal(rejecting("a", "b"), true);
  // A record written before rejections existed has none.
  assert.equal(rejectionDecides({ signers, threshold: 6 }), false);
  assert.equal(rejectionDecides({ signers, threshold: 6, rejections: [] }), false);
});

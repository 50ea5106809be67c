/**
 * The client library's side of approvals over time (docs/interface.md §10): submit
 * answering pending, approvals(), approve() with Ed25519 keys and passkeys,
 * against the whole server stack in-process on a real KV.
 */

import assert from "node:assert/strict";
import { base58, base64urlnopad } from "@scure/base";
import {
  appliedRules,
  type ApprovalSigner,
  type ApprovalsView,
  ed25519Signature,
  generateEd25519Key,
  governedDocument,
  type IntentEvent,
  IntentsClient,
  IntentsError,
  type PendingApprovals,
  signedBytes,
  signVariantA,
  signVariantB,
  variantBBody,
  type WebAuthnCredentials,
  webAuthnSigner,
} from "../../client/mod.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";
import { withApp } from "../support/in_process.ts";

const ADMIN_TOKEN = "client-approvals-admin-token-0123";
const ORIGIN = "http://localhost:8000";

interface Service {
  /** The admin's client. */
  admin: IntentsClient;
  /** A client without a token: approvals are public. */
  anyone: IntentsClient;
  /** Moves the service's clock. */
  advance(ms: number): void;
  /** Every request the clients sent, as `METHOD path`. */
  sent: string[];
}

/** The whole server stack in-process on an in-memory KV, reached through the client's `fetch`. */
async function withService(
  fn: (service: Service) => Promise<void>,
  options: { rewrite?: (path: string, body: unknown) => unknown } = {},
) {
  let offsetMs = 0;
  const sent: string[] = [];
  const now = () => new Date(Date.now() + offsetMs);
  await withApp({ env: { ADMIN_TOKEN, PASSKEY_ORIGINS: ORIGIN }, now }, async ({ app }) => {
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      const path = new URL(request.url).pathname;
      sent.push(`${request.method} ${path}`);
      const response = await app.handler(request);
      if (!options.rewrite || !response.ok) return response;
      // A service that answers something else than what it stores.
      const body = options.rewrite(path, await response.json());
      return new Response(JSON.stringify(body), { status: response.status });
    };
    const url = "http://service.test";
    await fn({
      admin: new IntentsClient({ url, token: ADMIN_TOKEN, fetch }),
      anyone: new IntentsClient({ url, fetch }),
      advance: (ms) => offsetMs += ms,
      sent,
    });
  });
}

/**
 * An approval signer made from the software authenticator, as a test's
 * passkey. Its assertions are deterministic for one `signCount`: another
 * count makes another signature.
 */
function passkeySigner(passkey: SoftwarePasskey, signCount = 0): ApprovalSigner {
  return async (request) => ({
    Passkey: await passkey.assert(request.bytes, { origin: ORIGIN, signCount }),
  });
}

/** `navigator.credentials` as a browser with this one passkey would answer `get`. */
function softwareCredentials(passkey: SoftwarePasskey): WebAuthnCredentials & { asked: number } {
  return {
    asked: 0,
    async get({ publicKey }) {
      this.asked++;
      // The assertion is over whatever challenge the page asked for, as an authenticator's is.
      const body = await passkey.assert(new Uint8Array(), {
        origin: ORIGIN,
        challenge: base64urlnopad.encode(publicKey.challenge),
      });
      return {
        response: {
          authenticatorData: base58.decode(body.authenticator_data).buffer,
          clientDataJSON: new TextEncoder().encode(body.client_data).buffer,
          signature: base58.decode(body.signature).buffer,
        },
      };
    },
  };
}

function pending(view: ApprovalsView): PendingApprovals {
  assert.equal(view.state, "pending", JSON.stringify(view));
  return view as PendingApprovals;
}

async function feed(admin: IntentsClient, id: string): Promise<string[]> {
  const types: string[] = [];
  for await (const event of admin.events({ follow: false }) as AsyncIterable<IntentEvent>) {
    if (event.record.id === id) types.push(`${event.type}:${event.record.state}`);
  }
  return types;
}

Deno.test("a 2-of-3 policy (one Ed25519 key, two passkeys) goes pending, then accepted by approvals", async () => {
  await withService(async ({ admin, anyone }) => {
    const key = generateEd25519Key();
    const first = await SoftwarePasskey.create();
    const second = await SoftwarePasskey.create({ compressed: true });
    const keyText = base58.encode(key.publicKey);
    const signers = {
      [keyText]: 1,
      [base58.encode(first.publicKey)]: 1,
      [base58.encode(second.publicKey)]: 1,
    };
    const policy = (await admin.addPolicy(
      governedDocument({ rules: "pay up to 100", signers, threshold: 2 }),
    )).id;

    const intent = { id: crypto.randomUUID(), policy_id: policy, attrs: { fields: { n: 1 } } };
    const record = await anyone.submit(signVariantB(intent, key));
    assert.equal(record.state, "pending");
    assert.equal(record.approval?.weight, 1);
    assert.equal(record.approval?.threshold, 2);
    assert.deepEqual(record.approval?.signers, signers);
    assert.deepEqual(record.approval?.approvals.map((a) => [a.key, a.kind]), [
      [keyText, "Ed25519"],
    ]);

    const view = pending(await anyone.approvals(intent.id));
    assert.deepEqual(view.signed, intent);
    assert.equal(view.policy_id, policy);
    assert.equal(view.variant, "B");
    assert.equal(view.approval.expires_at, record.approval?.expires_at);

    const credentials = softwareCredentials(first);
    const signer = webAuthnSigner({ publicKey: first.publicKey, credentials });
    const after = await anyone.approve(intent.id, signer);
    assert.equal(credentials.asked, 1);
    assert.deepEqual(after, { id: intent.id, state: "accepted" });
    assert.deepEqual(await anyone.approvals(intent.id), { id: intent.id, state: "accepted" });

    const stored = await admin.getIntent(intent.id);
    assert.equal(stored.state, "accepted");
    assert.deepEqual(stored.approval?.approvals.map((a) => a.kind), ["Ed25519", "Passkey"]);
    assert.equal(stored.approval?.weight, 2);
    assert.deepEqual(await feed(admin, intent.id), [
      "intent.pending:pending",
      "intent.accepted:accepted",
    ]);

    // The third signer comes too late: the client reads the view and stops before signing.
    let signed = false;
    await assert.rejects(
      anyone.approve(intent.id, (request) => {
        signed = true;
        return passkeySigner(second)(request);
      }),
      { name: "IntentsError", status: 409, code: "not_pending" },
    );
    assert.equal(signed, false);
  });
});

Deno.test("approvals count one by one: a passkey submits, a passkey and an Ed25519 key approve", async () => {
  await withService(async ({ admin, anyone }) => {
    const key = generateEd25519Key();
    const first = await SoftwarePasskey.create();
    const second = await SoftwarePasskey.create();
    const template = (await admin.addTemplate(governedDocument({
      signers: {
        [base58.encode(key.publicKey)]: 2,
        [base58.encode(first.publicKey)]: 1,
        [base58.encode(second.publicKey)]: 1,
      },
      threshold: 4,
    }))).id;
    const payload = { id: "three-signers", template_id: template };
    const submitted = await anyone.submit({
      payload,
      signature: { Passkey: await first.assert(signedBytes(payload), { origin: ORIGIN }) },
    });
    assert.equal(submitted.state, "pending");

    const halfway = pending(await anyone.approve(payload.id, passkeySigner(second)));
    assert.equal(halfway.approval.weight, 2);
    assert.equal(halfway.approval.approvals.length, 2);
    assert.deepEqual(halfway.signed, payload);

    // The same assertion again is answered with the view; another assertion of the key is 409.
    assert.deepEqual(await anyone.approve(payload.id, passkeySigner(second)), halfway);
    await assert.rejects(anyone.approve(payload.id, passkeySigner(second, 1)), {
      status: 409,
      code: "already_approved",
    });
    assert.deepEqual(await anyone.approve(payload.id, key), {
      id: payload.id,
      state: "accepted",
    });
    assert.deepEqual(await feed(admin, payload.id), [
      "intent.pending:pending",
      "intent.approval_added:pending",
      "intent.accepted:accepted",
    ]);
  });
});

Deno.test("a refused approval surfaces the service's status, code and message", async () => {
  await withService(async ({ admin, anyone }) => {
    const signer = generateEd25519Key();
    const stranger = generateEd25519Key();
    const policy = (await admin.addPolicy(governedDocument({
      signers: {
        [base58.encode(signer.publicKey)]: 1,
        [base58.encode(generateEd25519Key().publicKey)]: 1,
      },
      threshold: 2,
    }))).id;
    const intent = { id: crypto.randomUUID(), policy_id: policy };
    assert.equal((await anyone.submit(signVariantB(intent, signer))).state, "pending");

    await assert.rejects(anyone.approve(intent.id, stranger), (error: unknown) => {
      assert.ok(error instanceof IntentsError);
      assert.equal(error.status, 403);
      assert.equal(error.code, "signer_not_authorized");
      assert.match(error.message, /not a signer of the document/);
      return true;
    });
    // The submission's own signature, sent as an approval, is recorded already: the view.
    assert.equal((await anyone.approve(intent.id, signer)).state, "pending");
    // The signer saying no after its submission: it has decided.
    await assert.rejects(anyone.reject(intent.id, signer), {
      status: 409,
      code: "already_approved",
    });
    // A signature over other bytes does not verify.
    const forged: ApprovalSigner = () =>
      ed25519Signature({ ...intent, attrs: { fields: {} } }, signer);
    await assert.rejects(anyone.approve(intent.id, forged), {
      status: 400,
      code: "invalid_signature",
    });
    await assert.rejects(anyone.approvals("no-such-intent"), { status: 404, code: "not_found" });
    await assert.rejects(anyone.approve("no-such-intent", signer), {
      status: 404,
      code: "not_found",
    });

    // An intent under an ungoverned document has no approvals.
    const plain = (await admin.addTemplate('{"plain":true}')).id;
    await anyone.submit(signVariantA({ id: "plain-1", template_id: plain }, signer));
    await assert.rejects(anyone.approvals("plain-1"), { status: 404, code: "not_found" });
  });
});

Deno.test("an expired intent is not approved: the view says expired and nothing is signed", async () => {
  await withService(async ({ admin, anyone, advance, sent }) => {
    const key = generateEd25519Key();
    const policy = (await admin.addPolicy(governedDocument({
      signers: {
        [base58.encode(key.publicKey)]: 1,
        [base58.encode(generateEd25519Key().publicKey)]: 1,
      },
      threshold: 2,
      approvalWindowS: 60,
    }))).id;
    const intent = { id: crypto.randomUUID(), policy_id: policy };
    await anyone.submit(signVariantB(intent, key));
    advance(61_000);
    assert.deepEqual(await anyone.approvals(intent.id), { id: intent.id, state: "expired" });
    const before = sent.length;
    await assert.rejects(anyone.approve(intent.id, generateEd25519Key()), {
      status: 409,
      code: "not_pending",
      message: "the intent is expired",
    });
    assert.deepEqual(sent.slice(before), [`GET /intents/${intent.id}/approvals`]);
  });
});

Deno.test("a view whose challenge does not match its signed object is refused before signing", async () => {
  const tamper = (path: string, body: unknown) => {
    if (!path.endsWith("/approvals")) return body;
    const view = body as PendingApprovals;
    // The signed object changes, the challenge stays: the client must notice.
    return { ...view, signed: { ...view.signed, attrs: { fields: { amount: 1_000_000 } } } };
  };
  await withService(async ({ admin, anyone, sent }) => {
    const key = generateEd25519Key();
    const other = generateEd25519Key();
    const policy = (await admin.addPolicy(governedDocument({
      signers: { [base58.encode(key.publicKey)]: 1, [base58.encode(other.publicKey)]: 1 },
      threshold: 2,
    }))).id;
    const intent = { id: crypto.randomUUID(), policy_id: policy, attrs: { fields: { amount: 5 } } };
    await anyone.submit(signVariantB(intent, key));
    let signed = false;
    await assert.rejects(
      anyone.approve(intent.id, () => {
        signed = true;
        return ed25519Signature(intent, other);
      }),
      (error: unknown) => {
        assert.ok(error instanceof IntentsError);
        assert.equal(error.code, "bad_response");
        assert.match(error.message, /challenge is not SHA-256 of its signed object/);
        return true;
      },
    );
    assert.equal(signed, false);
    assert.ok(!sent.includes(`POST /intents/${intent.id}/approvals`), "nothing was sent");
  }, { rewrite: tamper });
});

Deno.test("submit resolves with the record for 201 and 202; a descriptor reaching the threshold is accepted", async () => {
  await withService(async ({ admin, anyone }) => {
    const a = generateEd25519Key();
    const b = generateEd25519Key();
    const signers = { [base58.encode(a.publicKey)]: 1, [base58.encode(b.publicKey)]: 1 };
    const policy = (await admin.addPolicy(governedDocument({ signers, threshold: 2 }))).id;
    const intent = { id: crypto.randomUUID(), policy_id: policy };
    const record = await anyone.submit(variantBBody(intent, {
      Multisig: {
        pub_key: { signers, threshold: 2 },
        signatures: [ed25519Signature(intent, a), ed25519Signature(intent, b)],
      },
    }));
    assert.equal(record.state, "accepted");
    assert.equal(record.approval?.weight, 2);
    assert.deepEqual(await anyone.approvals(intent.id), { id: intent.id, state: "accepted" });
  });
});

Deno.test("governedDocument writes the authorization member the service reads", async () => {
  const key = base58.encode(generateEd25519Key().publicKey);
  assert.deepEqual(
    JSON.parse(governedDocument({
      name: "n",
      signers: { [key]: 3 },
      threshold: 2,
      unsigned: false,
      approvalWindowS: 3600,
    })),
    {
      name: "n",
      authorization: {
        signers: { [key]: 3 },
        threshold: 2,
        unsigned: false,
        approval_window_s: 3600,
      },
    },
  );
  assert.throws(() => governedDocument({ signers: {}, threshold: 1 }), RangeError);
  assert.throws(() => governedDocument({ signers: { [key]: 1 }, threshold: 2 }), RangeError);
  assert.throws(() => governedDocument({ signers: { [key]: 0 }, threshold: 1 }), RangeError);
  assert.throws(() => governedDocument({ signers: { [key]: 1.5 }, threshold: 1 }), RangeError);
  assert.throws(
    () => governedDocument({ signers: { [key]: 1 }, threshold: 1, approvalWindowS: 2_592_001 }),
    RangeError,
  );
  await withService(async ({ admin }) => {
    const text = governedDocument({ signers: { [key]: 1 }, threshold: 1, approvalWindowS: 60 });
    assert.equal((await admin.addPolicy(text)).created, true);
    // The service checks the keys themselves.
    await assert.rejects(
      admin.addPolicy(governedDocument({ signers: { "1111": 1 }, threshold: 1 })),
      { status: 400, code: "invalid_authorization" },
    );
  });
});

Deno.test("authorizationRules writes authorization.rules; appliedRules reads the true ones back", async () => {
  const key = generateEd25519Key();
  const keyText = base58.encode(key.publicKey);
  const authorizationRules = [
    { when: "intent.attrs.fields.n > 1.0", threshold: 2 },
    { when: "intent.attrs.fields.n > 9.0", deny: "too many" },
    { when: "true", kinds: ["Ed25519" as const] },
  ];
  const signers = { [keyText]: 1, [base58.encode(generateEd25519Key().publicKey)]: 1 };
  const text = governedDocument({ rules: "own", signers, threshold: 1, authorizationRules });
  assert.deepEqual(JSON.parse(text), {
    rules: "own",
    authorization: { signers, threshold: 1, rules: authorizationRules },
  });
  const one = { signers, threshold: 1 };
  assert.throws(() => governedDocument({ ...one, authorizationRules: [] }), RangeError);
  assert.throws(
    () =>
      governedDocument({ ...one, authorizationRules: [{ when: "true", threshold: 1, deny: "x" }] }),
    RangeError,
  );
  assert.throws(
    () => governedDocument({ ...one, authorizationRules: [{ when: "a".repeat(1001), deny: "x" }] }),
    RangeError,
  );
  await withService(async ({ admin, anyone }) => {
    const policy = (await admin.addPolicy(text)).id;
    const intent = { id: crypto.randomUUID(), policy_id: policy, attrs: { fields: { n: 5 } } };
    assert.equal((await anyone.submit(signVariantB(intent, key))).state, "pending");
    const view = pending(await anyone.approvals(intent.id));
    assert.deepEqual(view.approval.rules, [0, 2]);
    assert.deepEqual(view.approval.kinds, ["Ed25519"]);
    assert.deepEqual(await appliedRules(anyone, view), [
      { index: 0, rule: authorizationRules[0] },
      { index: 2, rule: authorizationRules[2] },
    ]);
    // The document read must be the one the id names.
    const forged = {
      getPolicy: async (id: string) => {
        const { bytes } = await anyone.getPolicy(id);
        return { bytes: new Uint8Array([...bytes, 0x20]) };
      },
      getTemplate: (id: string) => anyone.getTemplate(id),
    };
    await assert.rejects(appliedRules(forged, view), { code: "bad_response" });
    // Not under rules: null, and nothing read.
    const plain = (await admin.addPolicy(governedDocument({ signers, threshold: 2 }))).id;
    const other = { id: crypto.randomUUID(), policy_id: plain, attrs: { fields: { n: 5 } } };
    await anyone.submit(signVariantB(other, key));
    assert.equal(await appliedRules(anyone, pending(await anyone.approvals(other.id))), null);
  });
});

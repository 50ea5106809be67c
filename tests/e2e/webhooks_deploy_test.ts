/**
 * Webhooks under Deno Deploy's socket rule (docs/interface.md §11), on this
 * Deno and on Deno 2.5: the server runs with a preload that refuses
 * `Deno.connect` to port 443 as Deploy does (`testing/deploy_sockets.ts`),
 * and delivers to an HTTPS receiver on port 443 reached by the name
 * `localhost`, trusting its test authority through `DENO_CERT`. With
 * `DENO_DEPLOY=true`, or without it once the runtime has refused a plain
 * connection, every event arrives in the feed's order, each accepted by the
 * Standard Webhooks reference library. With private addresses refused, the
 * same name (which resolves to loopback) fails `refused_address` at each
 * attempt and the receiver sees no connection at all.
 */

import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import { newPayload } from "../support/fixtures.ts";
import { harnessFor, type ProcessHarness } from "../support/process.ts";
import { startServer } from "../support/server.ts";
import { startTlsReceiver, type TlsReceiver } from "../support/tls_receiver.ts";
import { HAS_OPENSSL, makeCertificates, settled } from "../support/webhooks.ts";
import { sleep } from "../support/time.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";

/** The log's key, which a start where DENO_DEPLOY=true needs. */
const LOG_SIGNING_KEY = generateNoteKey("deploy.test/intents").signerKey;

/** The server as Deploy would run it, its socket rule applied by the preload. */
async function withDeployServer(
  options: { deno: string | undefined; env: Record<string, string> },
  fn: (h: ProcessHarness) => Promise<void>,
): Promise<void> {
  const server = await startServer({
    deno: options.deno,
    flags: ["--quiet", "--preload", "testing/deploy_sockets.ts"],
    env: { PASSKEY_ORIGINS: "http://localhost:8000", ...options.env },
  });
  try {
    await fn(harnessFor(server));
  } finally {
    await server.stop();
  }
}

/** Submits `n` accepted intents; their ids in order. */
async function submit(h: ProcessHarness, n: number): Promise<string[]> {
  const template = await h.newTemplate();
  const key = generateEd25519Key();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const payload = newPayload(template);
    const response = await h.submit(signVariantA(payload, key));
    assert.equal(response.status, 201, await response.clone().text());
    await response.body?.cancel();
    ids.push(payload.id);
  }
  return ids;
}

/** Waits until the receiver has `n` requests, for at most `ms`. */
async function requests(receiver: TlsReceiver, n: number, ms: number) {
  for (const end = Date.now() + ms; receiver.requests.length < n;) {
    assert.ok(Date.now() < end, `${receiver.requests.length} of ${n} deliveries within ${ms} ms`);
    await sleep(25);
  }
}

const certs = HAS_OPENSSL ? await makeCertificates("localhost") : undefined;
const URL_443 = "https://localhost/hook";

for (const version of [undefined, DEPLOY_DENO]) {
  const on = version ? `Deno ${version}` : "this Deno";
  for (const deploy of [true, false]) {
    const how = deploy ? "DENO_DEPLOY=true" : "the runtime's first refusal";
    Deno.test({
      name:
        `on ${on}, under Deploy's socket rule (${how}), an HTTPS endpoint on 443 gets every event`,
      ignore: !HAS_OPENSSL,
      async fn() {
        const receiver = await startTlsReceiver({ cert: certs!.cert, key: certs!.key });
        const env = {
          WEBHOOKS_ALLOW_HTTP: "false",
          WEBHOOKS_ALLOW_PRIVATE: "true",
          DENO_CERT: certs!.caFile,
          WEBHOOK_TIMEOUT_MS: "5000",
          ...(deploy ? { DENO_DEPLOY: "true", LOG_SIGNING_KEY } : {}),
        };
        try {
          const deno = version ? await denoBinary(version) : undefined;
          await withDeployServer({ deno, env }, async (h) => {
            const endpoint = await h.client.webhooks.add({ url: URL_443 });
            const ids = await submit(h, 20);
            await requests(receiver, 20, 15_000);
            const reference = new Webhook(endpoint.secret);
            const delivered = receiver.requests.map((r) => {
              const event = reference.verify(r.body, r.headers) as { record: { id: string } };
              return event.record.id;
            });
            assert.deepEqual(delivered, ids, "every event, in the feed's order, verified");
            const shown = await settled(h.client, endpoint.id, (e) => e.lag === 0);
            assert.deepEqual([shown.status, shown.last_attempt?.status], ["active", 204]);
            assert.ok(receiver.connections.every((c) => c.handshake));
          });
        } finally {
          await receiver.close();
        }
      },
    });
  }

  Deno.test({
    name:
      `on ${on}, under Deploy's socket rule, a name resolving to loopback is refused: no connection`,
    ignore: !HAS_OPENSSL,
    async fn() {
      const receiver = await startTlsReceiver({ cert: certs!.cert, key: certs!.key });
      const env = {
        WEBHOOKS_ALLOW_HTTP: "false",
        WEBHOOKS_ALLOW_PRIVATE: "false",
        DENO_CERT: certs!.caFile,
        DENO_DEPLOY: "true",
        LOG_SIGNING_KEY,
        WEBHOOK_RETRY_SCHEDULE_MS: "100,100",
      };
      try {
        const deno = version ? await denoBinary(version) : undefined;
        await withDeployServer({ deno, env }, async (h) => {
          const endpoint = await h.client.webhooks.add({ url: URL_443 });
          await submit(h, 1);
          const shown = await settled(h.client, endpoint.id, (e) => e.status === "disabled", 5_000);
          assert.equal(shown.disabled_reason, "failing");
          const attempts = await h.client.webhooks.attempts(endpoint.id);
          assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.error]), [
            [3, null, "refused_address"],
            [2, null, "refused_address"],
            [1, null, "refused_address"],
          ]);
          assert.deepEqual(receiver.connections, [], "not even a TCP handshake");
        });
      } finally {
        await receiver.close();
      }
    },
  });
}

globalThis.addEventListener("unload", () => {
  if (certs) Deno.removeSync(certs.dir, { recursive: true });
});

/**
 * The wire protocol of the intent submission service, stated once for the
 * service and its clients (docs/interface.md): the signed bytes (UTF-8 of the
 * RFC 8785 JCS text of `payload` or `intent`), the rejection bytes, passkey
 * challenges, the event types, intent ids, the bounds of multisig and
 * governed documents, the Standard Webhooks signature and its verification,
 * and the shapes of requests and answers as the OpenAPI document states them.
 *
 * Each part is also an entry of its own (`@intents/protocol/signed`, `/jcs`,
 * `/events`, `/bounds`, `/intent_id`, `/webhook_signature`, `/webhook_verify`,
 * `/types`), so that code that needs one part loads only that part. The
 * verifiable log's parts (§14) are the entry `@intents/protocol/log`, and
 * each of them an entry below it (`/log/hash`, `/log/tile`, `/log/note`, …).
 *
 * @example
 * ```ts
 * import { rejectionBytes, signedBytes } from "./mod.ts";
 *
 * const intent = { id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", policy_id: "p" };
 * new TextDecoder().decode(signedBytes(intent)); // '{"id":"0190…","policy_id":"p"}'
 * new TextDecoder().decode(rejectionBytes(intent)); // 'intents:reject:{"id":…}'
 * ```
 * @module
 */

export * from "./jcs.ts";
export * from "./signed.ts";
export * from "./events.ts";
export * from "./bounds.ts";
export * from "./intent_id.ts";
export * from "./webhook_signature.ts";
export * from "./webhook_verify.ts";
export type * from "./types.ts";

/**
 * The parts of webhook delivery (docs/interface.md §11) that need no storage: each
 * is pure or does one attempt, and the caller (the endpoint store, the
 * lease holder's loop, the admin routes) decides what to keep.
 *
 * - `checkWebhookUrl(url, { allowHttp, allowPrivate })`: at `POST` and
 *   `PATCH /webhooks`; a string is the message of a 400 `invalid_webhook_url`.
 * - `newWebhookSecret()`: at creation and at `POST /webhooks/{id}/secret`.
 * - `deliveryHeaders({ secrets, id, timestampS, body })` then
 *   `deliverOnce({ url, headers, body, timeoutMs, allowPrivate, allowHttp })`: one attempt.
 *   Its `status` and `error` are the attempt's record; a 2xx acknowledges the
 *   event, a 410 disables the endpoint (`gone`), anything else is retried on
 *   the schedule of §11, with `retryAfterS` (when present) replacing the next
 *   delay.
 * - `judgeAddress` / `isGloballyReachable`: the registries' verdict on one
 *   address, for anything else that must not reach inside.
 *
 * The signature itself, and `verifyWebhook` for consumers, are the wire
 * protocol's (`@intents/protocol/webhook_signature`, `/webhook_verify`).
 * @module
 */

export {
  type AddressVerdict,
  describeVerdict,
  isGloballyReachable,
  judgeAddress,
} from "./addresses.ts";
export {
  type Connector,
  deliverOnce,
  type DeliverOptions,
  DELIVERY_ERRORS,
  type DeliveryError,
  type DeliveryResult,
  MAX_ANSWER_BYTES,
  MAX_ANSWER_READS,
  resolveHost,
  type Resolver,
  SocketRules,
} from "./deliver.ts";
export { type IpAddress, isIpLiteral, parseIpLiteral } from "../ip_address.ts";
export { MAX_RETRY_AFTER_S, parseRetryAfter } from "./retry_after.ts";
export {
  deliveryHeaders,
  type DeliveryHeadersOptions,
  newWebhookSecret,
  WEBHOOK_SECRET_BYTES,
} from "./signing.ts";
export { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH, type WebhookUrlOptions } from "./url.ts";

/**
 * Every endpoint of the service, each declared once (`endpoint.ts`): the
 * router, the token and budget checks, `http.route` and the OpenAPI
 * document all read this table. A path's methods are listed in the order
 * `Allow` names them.
 * @module
 */

import type { Endpoint } from "./endpoint.ts";
import { getIntent, listIntents, postIntent } from "./routes/intents.ts";
import { getEvents } from "./routes/events.ts";
import { getApprovals, postApproval, postRejection } from "./routes/approvals.ts";
import { getDocument, postDocument } from "./routes/documents.ts";
import { getConfig, putConfig } from "./routes/config.ts";
import { getPage, getStatic } from "./routes/static.ts";
import { healthz, metrics, readyz } from "./routes/operations.ts";
import {
  deleteWebhook,
  getWebhook,
  listWebhookAttempts,
  listWebhooks,
  patchWebhook,
  postWebhook,
  replayWebhook,
  rotateWebhookSecret,
} from "./routes/webhooks.ts";
import { openApiHandler } from "./openapi/handler.ts";

/** The endpoints of the service. */
export function endpoints(): Endpoint[] {
  const table: Endpoint[] = [
    // Submissions and their approvals (docs/interface.md §4, §10): the address's budget.
    { method: "POST", path: "/intents", access: "public", cost: "work", handler: postIntent },
    { method: "GET", path: "/intents", access: "admin", handler: listIntents },
    { method: "GET", path: "/intents/{id}", access: "admin", handler: getIntent },
    {
      method: "GET",
      path: "/intents/{id}/approvals",
      access: "public",
      cost: "one",
      handler: getApprovals,
    },
    {
      method: "POST",
      path: "/intents/{id}/approvals",
      access: "public",
      cost: "one",
      handler: postApproval,
    },
    {
      method: "POST",
      path: "/intents/{id}/rejections",
      access: "public",
      cost: "one",
      handler: postRejection,
    },
    // The feed (§9).
    { method: "GET", path: "/events", access: "admin_or_events", handler: getEvents },
    // Templates and policies (§5): written by the admin, read by anyone for a token (§12).
    { method: "POST", path: "/templates", access: "admin", handler: postDocument("template") },
    {
      method: "GET",
      path: "/templates/{id}",
      access: "public",
      cost: "one",
      handler: getDocument("template"),
    },
    { method: "POST", path: "/policies", access: "admin", handler: postDocument("policy") },
    {
      method: "GET",
      path: "/policies/{id}",
      access: "public",
      cost: "one",
      handler: getDocument("policy"),
    },
    // The runtime configuration (§6), operations and the passkey page (§7).
    { method: "GET", path: "/config", access: "admin", handler: getConfig },
    { method: "PUT", path: "/config", access: "admin", handler: putConfig },
    { method: "GET", path: "/healthz", access: "public", handler: healthz },
    { method: "GET", path: "/readyz", access: "public", handler: readyz },
    { method: "GET", path: "/", access: "public", handler: getPage },
    { method: "GET", path: "/static/{name}", access: "public", handler: getStatic },
    { method: "GET", path: "/metrics", access: "admin_or_metrics", handler: metrics },
    // Webhooks (§11): every operation the admin's.
    { method: "POST", path: "/webhooks", access: "admin", handler: postWebhook },
    { method: "GET", path: "/webhooks", access: "admin", handler: listWebhooks },
    { method: "GET", path: "/webhooks/{id}", access: "admin", handler: getWebhook },
    { method: "PATCH", path: "/webhooks/{id}", access: "admin", handler: patchWebhook },
    { method: "DELETE", path: "/webhooks/{id}", access: "admin", handler: deleteWebhook },
    {
      method: "POST",
      path: "/webhooks/{id}/secret",
      access: "admin",
      handler: rotateWebhookSecret,
    },
    { method: "POST", path: "/webhooks/{id}/replay", access: "admin", handler: replayWebhook },
    {
      method: "GET",
      path: "/webhooks/{id}/attempts",
      access: "admin",
      handler: listWebhookAttempts,
    },
  ];
  // The document describes the table it is served from.
  table.push({
    method: "GET",
    path: "/openapi.json",
    access: "public",
    handler: openApiHandler(table),
  });
  return table;
}

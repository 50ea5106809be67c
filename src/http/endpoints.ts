/**
 * Every endpoint of the service, each declared once with its handler and its
 * OpenAPI operation (`endpoint.ts`), beside its handler in `routes/`: the
 * router, the token and budget checks, `http.route` and the OpenAPI document
 * all read this table. A path's methods are listed in the order `Allow`
 * names them, and the document lists paths in the table's order.
 * @module
 */

import type { Endpoint } from "./endpoint.ts";
import { INTENT_ENDPOINTS } from "./routes/intents.ts";
import { APPROVAL_ENDPOINTS } from "./routes/approvals.ts";
import { EVENT_ENDPOINTS } from "./routes/events.ts";
import { DOCUMENT_ENDPOINTS } from "./routes/documents.ts";
import { CONFIG_ENDPOINTS } from "./routes/config.ts";
import { openApiEndpoint, OPERATION_ENDPOINTS } from "./routes/operations.ts";
import { PAGE_ENDPOINTS } from "./routes/static.ts";
import { WEBHOOK_ENDPOINTS } from "./routes/webhooks.ts";

/** The endpoints of the service. */
export function endpoints(): Endpoint[] {
  const table = [
    ...INTENT_ENDPOINTS,
    ...APPROVAL_ENDPOINTS,
    ...EVENT_ENDPOINTS,
    ...DOCUMENT_ENDPOINTS,
    ...CONFIG_ENDPOINTS,
    ...OPERATION_ENDPOINTS,
    ...PAGE_ENDPOINTS,
    ...WEBHOOK_ENDPOINTS,
  ];
  // The document describes the table it is served from.
  table.push(openApiEndpoint(table));
  return table;
}

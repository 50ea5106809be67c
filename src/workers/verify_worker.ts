/**
 * A worker thread of the verification pool: parses and verifies the bodies
 * it is sent (`verifySubmissionBody`), and answers what it settled in one
 * turn of its event loop with one message. It holds no store and no secret,
 * and caches of its own (its verify context); what it may answer is a
 * verified submission, a `ServiceError`'s code and message, or a fault,
 * which the pool reports.
 * @module
 */

/// <reference lib="deno.worker" />

import { setImmediate } from "node:timers";
import { ServiceError } from "../errors.ts";
import { type VerifyContext, verifyContext } from "../domain/authorship.ts";
import type { BatchMessage, InitMessage, Outcome } from "./verify_messages.ts";
import { type TraceParent, verifyInSpan } from "./verify_span.ts";
import { flushSpans } from "../telemetry/tracing.ts";

async function settle(
  ctx: VerifyContext,
  id: number,
  bytes: Uint8Array,
  parent: TraceParent | undefined,
): Promise<Outcome> {
  try {
    // A span of this thread, the child of the request's (when tracing).
    return { id, verified: await verifyInSpan(ctx, bytes, { parent, thread: "worker" }) };
  } catch (error) {
    if (error instanceof ServiceError) {
      return { id, refused: { code: error.code, message: error.message } };
    }
    return {
      id,
      fault: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}

/** This thread's verify context, from its init message; its outcomes not yet sent. */
const thread: { ctx?: VerifyContext; ready: Outcome[] } = { ready: [] };

/** Outcomes settled in one turn of the event loop go in one message. */
function send(outcome: Outcome): void {
  thread.ready.push(outcome);
  if (thread.ready.length > 1) return;
  setImmediate(() => {
    const outcomes = thread.ready;
    thread.ready = [];
    // Their spans go to the runtime first: a worker may be stopped once it has answered.
    flushSpans();
    self.postMessage(outcomes);
  });
}

self.onmessage = (event: MessageEvent<InitMessage | BatchMessage>) => {
  const message = event.data;
  if (message.type === "init") {
    thread.ctx = verifyContext(message.passkey);
    return;
  }
  const ctx = thread.ctx;
  if (ctx === undefined) throw new Error("verify worker: a batch before its settings");
  // Each answer goes as soon as it is ready: a slow passkey check holds back no Ed25519 one.
  for (const { id, bytes, parent } of message.jobs) settle(ctx, id, bytes, parent).then(send);
};

/**
 * A worker thread of the prepare pool: parses and verifies the bodies it is
 * sent (`prepareBody`), and answers what it settled in one turn of its event
 * loop with one message. It holds no store and no secret; what it may answer
 * is a prepared submission, a `ServiceError`'s code and message, or a
 * fault for the log.
 * @module
 */

/// <reference lib="deno.worker" />

import { setImmediate } from "node:timers";
import { ServiceError } from "../errors.ts";
import { prepareBody, type Prepared } from "../domain/prepare.ts";
import type { VerifyContext } from "../domain/authorship.ts";
import type { BatchMessage, InitMessage, Outcome } from "./prepare_messages.ts";

let context: VerifyContext | undefined;

async function settle(ctx: VerifyContext, id: number, bytes: Uint8Array): Promise<Outcome> {
  try {
    const prepared: Prepared = await prepareBody(ctx, bytes);
    return { id, prepared };
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

/** Outcomes not yet sent: those settled in one turn of the event loop go in one message. */
let ready: Outcome[] = [];

function send(outcome: Outcome): void {
  ready.push(outcome);
  if (ready.length > 1) return;
  setImmediate(() => {
    const outcomes = ready;
    ready = [];
    self.postMessage(outcomes);
  });
}

self.onmessage = (event: MessageEvent<InitMessage | BatchMessage>) => {
  const message = event.data;
  if (message.type === "init") {
    context = { passkey: message.passkey };
    return;
  }
  const ctx = context;
  if (ctx === undefined) throw new Error("prepare worker: a batch before its settings");
  // Each answer goes as soon as it is ready: a slow passkey check holds back no Ed25519 one.
  for (const { id, bytes } of message.jobs) settle(ctx, id, bytes).then(send);
};

/**
 * The wire protocol's shapes (`protocol/shapes.ts`, `webhook_shapes.ts`) are the OpenAPI
 * document's components as TypeScript, generated from the service's valibot
 * schemas: the committed file is what the generator writes now, and each
 * shape is identical to the type valibot itself infers from its schema
 * (checked when this file is type-checked; the one difference the document
 * states on purpose is named).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type * as v from "valibot";
import type * as shapes from "@intents/protocol/shapes";
import * as schemas from "../../src/domain/schemas.ts";
import type * as components from "../../src/http/openapi/components.ts";
import type * as webhookComponents from "../../src/http/openapi/webhook_components.ts";
import {
  MODULES,
  ROOT,
  ROOTS,
  shapesModule,
  WEBHOOK_ROOTS,
} from "../../tools/build/protocol_shapes.ts";

for (const module of MODULES) {
  Deno.test(`${module.output} is what the OpenAPI components give now (else run \`deno task shapes\`)`, async () => {
    const committed = await Deno.readTextFile(join(ROOT, module.output));
    assert.equal(
      committed,
      await shapesModule(module),
      `${module.output} is stale: run \`deno task shapes\``,
    );
  });

  Deno.test(`${module.output} declares every root component, documented`, async () => {
    const text = await Deno.readTextFile(join(ROOT, module.output));
    for (const name of module.roots) {
      assert.match(text, new RegExp(`\\*/\\nexport (interface|type) ${name}\\b`), name);
    }
    assert.doesNotMatch(text, /^import /m, "the shapes depend on nothing");
    const reexported = [...text.matchAll(/^export type \* from "([^"]+)";$/gm)].map((m) => m[1]);
    assert.deepEqual(reexported, module.reexports);
  });
}

Deno.test("no component is declared in two of the generated modules", async () => {
  const declared = new Map<string, string>();
  for (const { output } of MODULES) {
    const text = await Deno.readTextFile(join(ROOT, output));
    for (const [, name] of text.matchAll(/^export (?:interface|type) (\w+)/gm)) {
      assert.equal(declared.get(name), undefined, `${name} in ${output} and ${declared.get(name)}`);
      declared.set(name, output);
    }
  }
  for (const name of [...ROOTS, ...WEBHOOK_ROOTS]) assert.ok(declared.has(name), name);
});

/** True when the two types are identical (the compiler's own identity check). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;
type Out<S extends v.GenericSchema> = v.InferOutput<S>;

Deno.test("each shape is what valibot infers from its schema", () => {
  // A `false` here is a type error: the file does not type-check, so the test fails.
  const agree: Record<string, true> = {
    Attrs: true satisfies Same<shapes.Attrs, Out<typeof schemas.AttrsSchema>>,
    Ed25519: true satisfies Same<shapes.Ed25519, Out<typeof schemas.Ed25519Schema>>,
    Passkey: true satisfies Same<shapes.Passkey, Out<typeof schemas.PasskeySchema>>,
    Payload: true satisfies Same<shapes.Payload, Out<typeof schemas.PayloadSchema>>,
    Intent: true satisfies Same<shapes.Intent, Out<typeof schemas.IntentSchema>>,
    // The schema takes a multisig's entries as unknown values and decodes each one itself (to
    // report nesting precisely); the document states their shape.
    Multisig: true satisfies Same<
      Omit<shapes.Multisig, "signatures">,
      Omit<Out<typeof schemas.MultisigSchema>, "signatures">
    >,
    MultisigEntries: true satisfies Same<
      Out<typeof schemas.MultisigSchema>["signatures"],
      unknown[]
    >,
    Approval: true satisfies Same<shapes.Approval, Out<typeof components.ApprovalSchema>>,
    ApprovalView: true satisfies Same<
      shapes.ApprovalView,
      Out<typeof components.ApprovalViewSchema>
    >,
    IntentRecord: true satisfies Same<
      Omit<shapes.IntentRecord, "request">,
      Omit<Out<typeof components.IntentRecordSchema>, "request">
    >,
    Config: true satisfies Same<shapes.Config, Out<typeof components.ConfigSchema>>,
    Health: true satisfies Same<shapes.Health, Out<typeof components.HealthSchema>>,
    DocumentId: true satisfies Same<shapes.DocumentId, Out<typeof components.DocumentIdSchema>>,
    Webhook: true satisfies Same<shapes.Webhook, Out<typeof webhookComponents.WebhookSchema>>,
    WebhookCreated: true satisfies Same<
      shapes.WebhookCreated,
      Out<typeof webhookComponents.WebhookCreatedSchema>
    >,
    WebhookAttempt: true satisfies Same<
      shapes.WebhookAttempt,
      Out<typeof webhookComponents.WebhookAttemptSchema>
    >,
  };
  assert.equal(Object.values(agree).every((same) => same), true);
  assert.equal(Object.keys(agree).length, 16);
});

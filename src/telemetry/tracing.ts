/**
 * The service's spans (docs/interface.md §13), through `npm:@opentelemetry/api`:
 * the runtime provides the SDK when `OTEL_DENO=true` and makes each request's
 * server span (`Deno.serve`'s) the active span of its handler, across every
 * `await`. Without it the API does nothing, and neither does this module:
 * {@link TRACING} is false and every helper returns at once, allocating
 * nothing, so telemetry off costs a branch.
 *
 * Attributes say what happened (variant, kind, outcome, status, code), never
 * a secret, a signature, a token, a body or a URL (a webhook URL may carry a
 * credential in its query).
 * @module
 */

import {
  type Attributes,
  type Context,
  context,
  type Link,
  ProxyTracerProvider,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

export { SpanStatusCode };
export type { Span, SpanContext };

/** The service's tracer: the runtime's when telemetry is on, a no-op otherwise. */
export const tracer = trace.getTracer("intents");

/**
 * True when the runtime traces (`OTEL_DENO=true`): it registered its tracer
 * provider with the API before any module ran. Otherwise the API answers
 * with its own proxy, whose spans record nothing.
 */
export const TRACING: boolean = !(trace.getTracerProvider() instanceof ProxyTracerProvider);

/** The active span (a request's server span, or one of the service's), when tracing. */
export function activeSpan(): Span | undefined {
  return TRACING ? trace.getActiveSpan() : undefined;
}

/** Options of {@link startSpan}. */
export interface SpanOptions {
  attributes?: Attributes;
  /** Spans this one is linked to (a group commit's, to the waits it serves). */
  links?: Link[];
  /** A span of its own trace, whatever span is active (work for several requests). */
  root?: boolean;
  /** The parent, when not the active span (another thread's, from its message). */
  parent?: SpanContext;
  /** `client` for an outgoing request (a webhook delivery attempt); default internal. */
  kind?: "client" | "internal";
}

/**
 * Starts a span, the active span's child by default; undefined when not
 * tracing. The caller ends it; it does not become the active span.
 */
export function startSpan(name: string, options: SpanOptions = {}): Span | undefined {
  if (!TRACING) return undefined;
  return tracer.startSpan(name, {
    attributes: options.attributes,
    links: options.links,
    root: options.root,
    kind: options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
  }, parentContext(options.parent));
}

function parentContext(parent: SpanContext | undefined): Context | undefined {
  return parent === undefined ? undefined : trace.setSpanContext(context.active(), parent);
}

/**
 * Runs `fn` in a span that is active for it (spans started inside are its
 * children), and ends the span when `fn` settles. A thrown `ServiceError`'s
 * code becomes `error.type` (its message does not: it may describe the input).
 * Without tracing, runs `fn(undefined)`.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!TRACING) return fn(undefined);
  const { attributes, links, root } = options;
  const kind = options.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL;
  const parent = parentContext(options.parent) ?? context.active();
  return tracer.startActiveSpan(name, { attributes, links, root, kind }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Marks a span failed: `error.type` is the error's `code` when it has one
 * (a `ServiceError`), else its class name; the status is an error only for
 * what is not the client's (no `code`, or a storage failure).
 */
export function failed(span: Span | undefined, error: unknown): void {
  if (span === undefined) return;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string") {
    span.setAttribute("error.type", code);
    if (code === "internal" || code === "unavailable") {
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return;
  }
  span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The W3C ids of a span, for a log line. */
export function traceIds(span: Span): { trace_id: string; span_id: string } {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * Work that falls due later, kept in the store and done by whichever process
 * finds it due (docs/architecture.md: The scheduler). Each process looks at
 * start, at the earliest due time it knows of and at least every
 * {@link DEFAULT_POLL_MS}; the cron job runs {@link DueWorkScheduler.runDue}.
 * A handler per kind does its work in one atomic commit that also removes
 * the entry, and answers `"done"`, `"drop"` (the scheduler removes the entry)
 * or `"later"`.
 * @module
 */

import { errorLine } from "../telemetry/error_line.ts";
import { expireIntent } from "../domain/approve.ts";
import { type DueEntry, EXPIRY_WORK, type Store } from "../domain/store.ts";
import { Counter } from "../telemetry/instruments.ts";
import { inSpan } from "../telemetry/tracing.ts";

/** What a handler made of one entry of due work. */
export type DueVerdict = "done" | "drop" | "later";

/** Does one kind of due work. It may throw; the entry then stays for a later look. */
export type DueHandler = (work: DueEntry) => Promise<DueVerdict>;

/** How often a process looks at the index for work other processes made due. */
export const DEFAULT_POLL_MS = 2_000;

/** Entries read per look. */
const PAGE = 64;

/** Options of {@link DueWorkScheduler}. */
export interface DueWorkOptions {
  store: Pick<Store, "listDueWork" | "dropDueWork">;
  /** A handler per kind of work; work of other kinds is left alone. */
  handlers: Readonly<Record<string, DueHandler>>;
  now: () => Date;
  /** The longest wait between two looks; default {@link DEFAULT_POLL_MS}. */
  pollMs?: number;
  /** Where a handler's failure is reported (one line); default: standard error. */
  report?: (line: string) => void;
}

/** What one look at the index found. */
interface Look {
  /** Entries done or dropped. */
  done: number;
  /** The earliest entry not due yet, if any was seen (Unix ms). */
  next: number | undefined;
  /** True when the page was full of due work: look again at once. */
  more: boolean;
  /** True when an entry failed or asked to wait: do not look again at once. */
  failed: boolean;
}

/** Looks for due work and does it, on a timer, until stopped. */
export class DueWorkScheduler {
  readonly #options: DueWorkOptions;
  readonly #pollMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #looking: Promise<Look> | undefined;
  #started = false;
  #stopped = false;

  /** @param options the store, the handlers and the clock. */
  constructor(options: DueWorkOptions) {
    this.#options = options;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  /** Looks at once, then keeps looking until {@link stop}. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#arm(0);
  }

  /**
   * Looks at once, as at start, then keeps looking as before: for work just
   * made due (a webhook endpoint created or resumed, here or elsewhere).
   */
  lookSoon(): void {
    if (this.#started && !this.#stopped) this.#arm(0);
  }

  /**
   * Does all the work due now, page after page, and resolves when none is
   * left (or only work that failed or asked to wait): what the cron job runs.
   *
   * @returns how many entries were done or dropped.
   */
  async runDue(): Promise<number> {
    let done = 0;
    for (;;) {
      const look = await this.#look();
      done += look.done;
      if (!look.more || look.failed || this.#stopped) return done;
    }
  }

  /** Stops looking; resolves once a look under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#looking?.catch(() => {});
  }

  #arm(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), Math.max(0, delayMs));
  }

  async #tick(): Promise<void> {
    let wait = this.#pollMs;
    try {
      const look = await this.#look();
      if (look.more && !look.failed) wait = 0;
      else if (look.next !== undefined) {
        wait = Math.min(wait, look.next - this.#options.now().getTime());
      }
    } catch (error) {
      this.#report("cannot read due work", error);
    }
    this.#arm(wait);
  }

  /** One look: joins the one under way, so that the timer and the cron job do not overlap. */
  #look(): Promise<Look> {
    this.#looking ??= this.#lookOnce().finally(() => this.#looking = undefined);
    return this.#looking;
  }

  /** Looks at each kind of work in turn: a kind's backlog never holds up another. */
  async #lookOnce(): Promise<Look> {
    const look: Look = { done: 0, next: undefined, more: false, failed: false };
    for (const [kind, handler] of Object.entries(this.#options.handlers)) {
      if (this.#stopped) break;
      const part = await this.#lookAt(kind, handler);
      look.done += part.done;
      look.more ||= part.more;
      look.failed ||= part.failed;
      if (part.next !== undefined) look.next = Math.min(look.next ?? Infinity, part.next);
    }
    return look;
  }

  async #lookAt(kind: string, handler: DueHandler): Promise<Look> {
    const { store } = this.#options;
    const entries = await store.listDueWork({ kind, limit: PAGE });
    const look: Look = { done: 0, next: undefined, more: false, failed: false };
    for (const entry of entries) {
      if (this.#stopped) return look;
      if (entry.at > this.#options.now().getTime()) {
        look.next = entry.at;
        return look;
      }
      try {
        const verdict = await this.#do(entry, handler);
        if (verdict === "later") look.failed = true;
        else look.done++;
      } catch (error) {
        look.failed = true;
        this.#report(`due work ${entry.kind} ${entry.id} failed`, error);
      }
    }
    // A full page, all due: more may follow.
    look.more = entries.length === PAGE;
    return look;
  }

  /**
   * Does one entry in a span `intents.due_work` (docs/interface.md §13): its
   * kind, id and verdict. The span starts a trace of its own: a look runs
   * on from whatever context armed its timer (a request that made work due).
   */
  #do(entry: DueEntry, handler: DueHandler): Promise<DueVerdict> {
    const attributes = { "intents.work.kind": entry.kind, "intents.work.id": entry.id };
    return inSpan("intents.due_work", { root: true, attributes }, async (span) => {
      const verdict = await handler(entry);
      if (verdict === "drop") await this.#options.store.dropDueWork(entry);
      span?.setAttribute("intents.outcome", verdict);
      return verdict;
    });
  }

  #report(what: string, error: unknown): void {
    const reason = errorLine(error);
    (this.#options.report ?? ((line: string) => console.error(line)))(
      `intents: ${what}: ${reason}`,
    );
  }
}

/** What the handlers need. */
export interface HandlerDeps {
  store: Pick<Store, "changeIntent">;
  now: () => Date;
  /** Told of each intent this process expired (metrics). */
  expired?: () => void;
}

/**
 * The handlers by kind: a pending intent's expiry records its
 * `intent.expired` in the commit that removes the work.
 */
export function dueWorkHandlers(deps: HandlerDeps): Record<string, DueHandler> {
  return {
    [EXPIRY_WORK]: async (work) => {
      const outcome = await expireIntent(deps, work.id);
      if (outcome === "expired") {
        deps.expired?.();
        return "done";
      }
      // Accepted or expired meanwhile, the work is gone with that commit; else it is stale.
      return outcome === "unchanged" ? "drop" : "later";
    },
  };
}

/** The due work this process did. */
export class DueWorkMetrics {
  readonly #expired = new Counter({
    name: "intents_expired_total",
    otelName: "intents.expired",
    help: "Pending intents whose expiry this process recorded.",
    unit: "{intent}",
  });

  /** Counts a pending intent whose expiry this process recorded. */
  intentExpired(): void {
    this.#expired.inc([]);
  }

  /** The lines `GET /metrics` adds. */
  readonly render = (): string[] => this.#expired.render();
}

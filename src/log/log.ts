/**
 * The verifiable log of docs/interface.md §14, composed for one process: its
 * key (`identity.ts`), the background integrator that extends the tree and
 * signs checkpoints (`integrator.ts`), the witness submitter when witnesses
 * are set (`witnesses.ts`), and the reader the edge serves from
 * (`reader.ts`, behind the port `src/domain/log.ts`).
 * @module
 */

import type { LogReader } from "../domain/log.ts";
import type { Store } from "../domain/store.ts";
import type { LogSettings } from "./settings.ts";
import { CheckpointSigner } from "./checkpoints.ts";
import { type PreparedKey, prepareLogKey } from "./identity.ts";
import { Integrator } from "./integrator.ts";
import { KvLogReader } from "./reader.ts";
import type { LogMetrics } from "./metrics.ts";
import type { WitnessPost } from "./witness_call.ts";
import { WitnessSubmitter } from "./witnesses.ts";

/** What {@link VerifiableLog} works with. */
export interface VerifiableLogOptions {
  kv: Deno.Kv;
  /** The feed, read through the storage port. */
  store: Pick<Store, "readEvents" | "waitForEvents" | "isPosition" | "onOwnEvents">;
  settings: LogSettings;
  /** Where operators' lines go. */
  report: (line: string) => void;
  /** How witnesses are called (needed when `LOG_WITNESSES` is set). */
  witnessPost?: WitnessPost;
  metrics?: LogMetrics;
}

/** The log of one process. */
export class VerifiableLog {
  /** What the edge reads. */
  readonly reader: LogReader;
  readonly #options: VerifiableLogOptions;
  #prepared: Promise<PreparedKey> | undefined;
  #integrator: Integrator | undefined;
  #submitter: WitnessSubmitter | undefined;
  #stopped = false;

  constructor(options: VerifiableLogOptions) {
    this.#options = options;
    this.reader = new KvLogReader({
      kv: options.kv,
      store: options.store,
      verifierKey: async () => (await this.prepare()).signer.verifierKey,
      quorum: options.settings.witnesses.quorum,
    });
  }

  /**
   * The log's key, made or checked once (see `prepareLogKey`): `main.ts`
   * calls it before serving, so that a disagreeing start stops at boot.
   *
   * @throws {SettingsError} naming the variable that disagrees with the store.
   */
  prepare(): Promise<PreparedKey> {
    return this.#prepared ??= prepareLogKey(this.#options.kv, this.#options.settings);
  }

  /** Starts integrating in the background, once the key is known. */
  start(): void {
    this.prepare().then(({ signer }) => {
      if (this.#stopped || this.#integrator) return;
      const { kv, store, report, metrics, settings, witnessPost } = this.#options;
      this.#integrator = new Integrator({
        kv,
        store,
        signer: new CheckpointSigner({ kv, signer, report, metrics }),
        report,
        metrics,
      });
      this.#integrator.start();
      const { witnesses, quorum } = settings.witnesses;
      if (witnesses.length > 0 && witnessPost !== undefined) {
        this.#submitter = new WitnessSubmitter({
          kv,
          witnesses,
          quorum,
          logKey: signer.verifierKey,
          post: witnessPost,
          report,
          metrics,
        });
        this.#submitter.start();
      }
    }, (error) => {
      this.#options.report(`intents: the log cannot start: ${(error as Error).message}`);
    });
  }

  /** Stops integrating and submitting, and lets the leases go. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all([this.#integrator?.stop(), this.#submitter?.stop()]);
  }
}

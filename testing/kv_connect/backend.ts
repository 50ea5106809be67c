/**
 * denokv's SQLite backend, as shipped in npm `@deno/kv-linux-x64-gnu` (the
 * napi addon behind npm `@deno/kv`). Every call takes and returns the KV
 * Connect protocol's protobuf bytes, so the server around it only speaks
 * HTTP. The addon checks requests with denokv's own conversion code
 * (`proto/convert.rs`): observed with 0.14.0, an atomic write with 11 checks,
 * 1001 mutations, a 65,537-byte value, a 2,049-byte key or more than
 * 819,200 bytes of keys and values is refused, and so is a snapshot read of
 * 11 ranges or more than 1,000 entries. `startWatch` alone skips that code.
 * @module
 */

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** The addon's exports, as declared by `@deno/kv` (`esm/napi_based.d.ts`). */
interface NapiKv {
  open(path: string, inMemory: boolean | undefined | null, debug: boolean): number;
  close(db: number, debug: boolean): void;
  snapshotRead(db: number, snapshotRead: Uint8Array, debug: boolean): Promise<Uint8Array>;
  atomicWrite(db: number, atomicWrite: Uint8Array, debug: boolean): Promise<Uint8Array>;
  startWatch(db: number, watch: Uint8Array, debug: boolean): Promise<number>;
  dequeueNextWatchMessage(
    db: number,
    watchId: number,
    debug: boolean,
  ): Promise<Uint8Array | undefined>;
  endWatch(db: number, watchId: number, debug: boolean): void;
}

const NAPI_FUNCTIONS = [
  "open",
  "close",
  "snapshotRead",
  "atomicWrite",
  "startWatch",
  "dequeueNextWatchMessage",
  "endWatch",
] as const;

/** The one platform the addon's package is built for. */
export const BACKEND_PLATFORM = "linux-x64";

/** This machine, named as npm's platform packages name theirs (`linux-x64`, `darwin-arm64`). */
export function thisPlatform(): string {
  const arch = ({ x86_64: "x64", aarch64: "arm64" } as Record<string, string>)[Deno.build.arch];
  return `${Deno.build.os}-${arch ?? Deno.build.arch}`;
}

/** Where the addon is, or why it cannot be loaded here. */
export type BackendLocation = { file: string } | { missing: string };

/**
 * Finds the addon's file. The package exists for {@link BACKEND_PLATFORM}
 * only: elsewhere, and where it was not fetched, the answer says why. The
 * package is imported by a literal specifier, so `deno run`, `deno test` and
 * `deno cache` fetch it (pinned in testing/deno.json and deno.lock), but only
 * here, so it is never needed where it cannot exist.
 *
 * `require` of the bare package name resolves through the import map in Deno
 * 2.9 but not in 2.5 ("Cannot find module"), so the file is found by its path
 * in the npm cache, from the package's own `package.json`.
 */
export async function locateBackend(): Promise<BackendLocation> {
  const platform = thisPlatform();
  const what = "denokv's backend, npm @deno/kv-linux-x64-gnu,";
  if (platform !== BACKEND_PLATFORM) {
    return { missing: `${what} exists for ${BACKEND_PLATFORM} only; this is ${platform}` };
  }
  try {
    const { default: addonPackage } = await import("@deno/kv-linux-x64-gnu/package.json", {
      with: { type: "json" },
    });
    const packageJson = import.meta.resolve("@deno/kv-linux-x64-gnu/package.json");
    const file = fileURLToPath(new URL(addonPackage.main, packageJson));
    await Deno.stat(file);
    return { file };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { missing: `${what} cannot be found: ${reason.split("\n")[0]}` };
  }
}

const location = await locateBackend();
let loaded: NapiKv | undefined;

/**
 * Loads the addon once per process. Deno loads a `.node` file only through
 * `require()`, never through `import`.
 *
 * @throws {Error} if the package is missing (saying why) or its exports are
 * not the expected functions.
 */
function napi(): NapiKv {
  if (loaded) return loaded;
  if ("missing" in location) throw new Error(location.missing);
  const addon: unknown = createRequire(import.meta.url)(location.file);
  const record = addon as Record<string, unknown>;
  const missing = NAPI_FUNCTIONS.filter((name) => typeof record?.[name] !== "function");
  if (missing.length > 0) {
    throw new Error(`@deno/kv-linux-x64-gnu lacks ${missing.join(", ")}`);
  }
  loaded = addon as NapiKv;
  return loaded;
}

/**
 * An error the backend raised for a request. `message` is the addon's first
 * line: denokv's `ConvertError` variant name (`TooManyChecks`, ...), a SQLite
 * backend error's text, or prost's decode error.
 */
export class BackendError extends Error {
  override name = "BackendError";
}

function backendError(error: unknown): BackendError {
  // The addon appends a Rust backtrace when RUST_BACKTRACE is set; only the
  // first line says what went wrong.
  const text = error instanceof Error ? error.message : String(error);
  return new BackendError(text.split("\n")[0].trim(), { cause: error });
}

/** A running watch: the stream of encoded `WatchOutput` messages for its keys. */
export interface BackendWatch {
  /** The next `WatchOutput` message, or undefined once the watch has ended. */
  next(): Promise<Uint8Array | undefined>;
  /**
   * Ends the watch. A pending `next()` still waits for the keys' next change
   * (the addon cannot wake it), and until then it keeps the event loop alive.
   */
  end(): void;
}

/** One open database: a SQLite file behind denokv's backend. */
export interface KvBackend {
  /**
   * Runs a `SnapshotRead` and answers its `SnapshotReadOutput`.
   * @throws {BackendError} for a malformed or over-limit request.
   */
  snapshotRead(request: Uint8Array): Promise<Uint8Array>;
  /**
   * Runs an `AtomicWrite` and answers its `AtomicWriteOutput`.
   * @throws {BackendError} for a malformed or over-limit request.
   */
  atomicWrite(request: Uint8Array): Promise<Uint8Array>;
  /**
   * Starts watching the keys of a `Watch` request; the first message carries
   * every key's current entry.
   * @throws {BackendError} if the request does not decode.
   */
  watch(request: Uint8Array): Promise<BackendWatch>;
  /** Closes the database; running watches end. */
  close(): void;
}

/**
 * Opens (creating if needed) the SQLite file at `path`.
 *
 * @throws {BackendError} if the file cannot be opened as a KV database.
 */
export function openBackend(path: string): KvBackend {
  const kv = napi();
  let db: number;
  try {
    db = kv.open(path, false, false);
  } catch (error) {
    throw backendError(error);
  }
  let closed = false;
  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw backendError(error);
    }
  };
  return {
    snapshotRead: (request) => call(() => kv.snapshotRead(db, request, false)),
    atomicWrite: (request) => call(() => kv.atomicWrite(db, request, false)),
    async watch(request) {
      const id = await call(() => kv.startWatch(db, request, false));
      let ended = false;
      return {
        async next() {
          if (ended) return undefined;
          const message = await call(() => kv.dequeueNextWatchMessage(db, id, false));
          // The addon takes the stream out of its table while a dequeue is
          // pending, so an `endWatch` during that wait finds nothing; ending
          // again once the dequeue is back drops the stream for good.
          if (ended) kv.endWatch(db, id, false);
          return ended ? undefined : message;
        },
        end() {
          if (ended) return;
          ended = true;
          kv.endWatch(db, id, false);
        },
      };
    },
    close() {
      if (closed) return;
      closed = true;
      kv.close(db, false);
    },
  };
}

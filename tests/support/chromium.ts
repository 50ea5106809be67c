/**
 * Headless Chromium for browser tests: finds and launches Debian's `chromium`
 * with a fresh profile, and speaks the Chrome DevTools Protocol over Deno's
 * built-in WebSocket. Every wait is bounded by a timeout.
 * @module
 */

import { sleep, within } from "./time.ts";

/** Where Chromium is: `CHROMIUM_PATH`, else `/usr/bin/chromium`; `null` when absent. */
export function findChromium(): string | null {
  const candidates = [Deno.env.get("CHROMIUM_PATH"), "/usr/bin/chromium"];
  for (const path of candidates) {
    if (!path) continue;
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not there; try the next one.
    }
  }
  return null;
}

/** A CDP event as received. */
export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  method: string;
}

/** A minimal CDP client: commands with ids and timeouts, events to listeners. */
export class CdpConnection {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(event: CdpEvent) => void>();
  #nextId = 1;
  #closed = false;
  #socketClosed: Promise<void>;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (message) => this.#receive(String(message.data));
    this.#socketClosed = new Promise((resolve) => {
      socket.onclose = () => {
        this.#fail(new Error("CDP connection closed"));
        resolve();
      };
    });
  }

  /** Opens the browser's DevTools WebSocket. */
  static async connect(url: string, timeoutMs = 10_000): Promise<CdpConnection> {
    const socket = new WebSocket(url);
    await within(
      new Promise<void>((resolve, reject) => {
        socket.onopen = () => resolve();
        socket.onerror = () => reject(new Error(`cannot open ${url}`));
      }),
      timeoutMs,
      `opening the DevTools WebSocket`,
    );
    return new CdpConnection(socket);
  }

  #receive(text: string): void {
    const message = JSON.parse(text);
    if (typeof message.id === "number") {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.error) {
        pending.reject(
          new Error(`${pending.method}: ${message.error.message} (${message.error.code})`),
        );
      } else {
        pending.resolve(message.result ?? {});
      }
      return;
    }
    if (typeof message.method === "string") {
      const event: CdpEvent = {
        method: message.method,
        params: message.params ?? {},
        sessionId: message.sessionId,
      };
      for (const listener of this.#listeners) listener(event);
    }
  }

  #fail(error: Error): void {
    this.#closed = true;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`${pending.method}: ${error.message}`));
      this.#pending.delete(id);
    }
  }

  /** Sends a command (to a page when `sessionId` is given) and waits for its result. */
  send(
    method: string,
    params: Record<string, unknown> = {},
    options: { sessionId?: string; timeoutMs?: number } = {},
  ): Promise<Record<string, unknown>> {
    if (this.#closed) return Promise.reject(new Error(`${method}: CDP connection closed`));
    const id = this.#nextId++;
    const timeoutMs = options.timeoutMs ?? 15_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer, method });
      const message: Record<string, unknown> = { id, method, params };
      if (options.sessionId) message.sessionId = options.sessionId;
      this.#socket.send(JSON.stringify(message));
    });
  }

  /** Calls `listener` for every event until the returned function is called. */
  on(listener: (event: CdpEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The first event for which `match` is true, or a timeout error. */
  waitFor(match: (event: CdpEvent) => boolean, timeoutMs: number, what: string): Promise<CdpEvent> {
    let off = () => {};
    const found = new Promise<CdpEvent>((resolve) => {
      off = this.on((event) => {
        if (match(event)) resolve(event);
      });
    });
    return within(found, timeoutMs, what).finally(off);
  }

  /** Closes the socket and waits (bounded) until it is closed. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      this.#socket.close();
    } catch {
      // Already closed.
    }
    await within(this.#socketClosed, 3_000, "closing the CDP socket").catch(() => {});
  }
}

/** A page (target) of the browser, driven through a flat CDP session. */
export class Page {
  constructor(readonly cdp: CdpConnection, readonly sessionId: string) {}

  /** Sends a command to this page. */
  send(method: string, params: Record<string, unknown> = {}, timeoutMs?: number) {
    return this.cdp.send(method, params, { sessionId: this.sessionId, timeoutMs });
  }

  /** Events of this page only. */
  on(listener: (event: CdpEvent) => void): () => void {
    return this.cdp.on((event) => {
      if (event.sessionId === this.sessionId) listener(event);
    });
  }

  /** Navigates and waits for the load event. */
  async goto(url: string, timeoutMs = 15_000): Promise<void> {
    const loaded = this.cdp.waitFor(
      (e) => e.sessionId === this.sessionId && e.method === "Page.loadEventFired",
      timeoutMs,
      `loading ${url}`,
    );
    const result = await this.send("Page.navigate", { url });
    if (typeof result.errorText === "string") {
      loaded.catch(() => {});
      throw new Error(`navigating to ${url}: ${result.errorText}`);
    }
    await loaded;
  }

  /**
   * Evaluates an expression in the page (awaiting a promise, with a user
   * gesture) and returns its JSON value; a thrown exception becomes an error.
   */
  async evaluate<T = unknown>(expression: string, timeoutMs = 15_000): Promise<T> {
    const result = await this.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
      userGesture: true,
    }, timeoutMs);
    const thrown = result.exceptionDetails as
      | { text?: string; exception?: { description?: string } }
      | undefined;
    if (thrown) {
      throw new Error(`page threw: ${thrown.exception?.description ?? thrown.text}`);
    }
    return (result.result as { value?: T }).value as T;
  }

  /** Polls `expression` until it is truthy; returns that value or throws after `timeoutMs`. */
  async waitUntil<T>(expression: string, timeoutMs: number, what: string): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const value = await this.evaluate<T>(expression);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`${what}: timed out after ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** A PNG of the whole page. */
  async screenshot(): Promise<Uint8Array> {
    const metrics = await this.send("Page.getLayoutMetrics");
    const size = metrics.cssContentSize as { width: number; height: number };
    const result = await this.send("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, width: size.width, height: size.height, scale: 1 },
    }, 30_000);
    const binary = atob(result.data as string);
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }
}

/** A running headless Chromium. */
export interface Browser {
  cdp: CdpConnection;
  /** Opens a new tab and attaches to it. */
  newPage(): Promise<Page>;
  /** Closes the browser (gracefully, then by force) and removes its profile. */
  close(): Promise<void>;
}

/** Options of {@link launchChromium}. */
export interface LaunchOptions {
  /** Chromium's executable; default {@link findChromium}. */
  path?: string;
  /** Viewport width and height; default 1000×900. */
  width?: number;
  height?: number;
  timeoutMs?: number;
}

/**
 * Launches headless Chromium with a fresh profile and connects to its
 * DevTools endpoint (read from its stderr).
 */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const path = options.path ?? findChromium();
  if (!path) throw new Error("Chromium not found: set CHROMIUM_PATH or install chromium");
  const timeoutMs = options.timeoutMs ?? 20_000;
  const profile = await Deno.makeTempDir({ prefix: "intents-chromium-" });
  const child = new Deno.Command(path, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // Containers often have a small /dev/shm; Chromium crashes when it runs out.
      "--disable-dev-shm-usage",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      `--window-size=${options.width ?? 1000},${options.height ?? 900}`,
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();

  let stderr = "";
  const decoder = new TextDecoder();
  const reader = child.stderr.getReader();
  let wsUrl: string | undefined;
  // Drains stderr for the whole life of the process, so Chromium never blocks on a full pipe.
  const drained = (async () => {
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        if (stderr.length < 64_000) stderr += decoder.decode(value, { stream: true });
      }
    } catch {
      // The process is gone.
    }
  })();
  const exited = child.status;

  let cdp: CdpConnection | undefined;
  const close = async () => {
    try {
      if (cdp) {
        await cdp.send("Browser.close", {}, { timeoutMs: 3_000 }).catch(() => {});
        await cdp.close();
      }
      const gone = await within(exited, 5_000, "Chromium exit").then(() => true, () => false);
      if (!gone) {
        try {
          child.kill("SIGKILL");
        } catch {
          // Already gone.
        }
        await within(exited, 5_000, "Chromium exit after SIGKILL").catch(() => {});
      }
      await within(drained, 2_000, "Chromium stderr").catch(() => {});
    } finally {
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  };

  try {
    const deadline = Date.now() + timeoutMs;
    while (!wsUrl) {
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
      if (match) {
        wsUrl = match[1];
        break;
      }
      const status = await Promise.race([
        exited,
        sleep(50).then(() => null),
      ]);
      if (status) throw new Error(`Chromium exited with ${status.code}: ${stderr.trim()}`);
      if (Date.now() > deadline) {
        throw new Error(`Chromium did not announce DevTools within ${timeoutMs} ms: ${stderr}`);
      }
    }
    cdp = await CdpConnection.connect(wsUrl);
  } catch (error) {
    await close();
    throw error;
  }
  const connection = cdp;

  return {
    cdp: connection,
    async newPage() {
      const { targetId } = await connection.send("Target.createTarget", { url: "about:blank" });
      const { sessionId } = await connection.send("Target.attachToTarget", {
        targetId,
        flatten: true,
      });
      const page = new Page(connection, sessionId as string);
      await page.send("Page.enable");
      await page.send("Runtime.enable");
      await page.send("Log.enable");
      // Headless tabs may lack focus, and WebAuthn refuses documents without it.
      await page.send("Emulation.setFocusEmulationEnabled", { enabled: true });
      await page.send("Emulation.setDeviceMetricsOverride", {
        width: options.width ?? 1000,
        height: options.height ?? 900,
        deviceScaleFactor: 1,
        mobile: false,
      });
      return page;
    },
    close,
  };
}

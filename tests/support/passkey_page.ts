/**
 * The passkey page in headless Chromium: a real server on a known port, a
 * browser tab on `http://localhost:PORT/` with a CDP virtual authenticator,
 * and the steps the page's tests share (filling fields, registering passkeys,
 * submitting, screenshots).
 *
 * Without Chromium the page tests are ignored, unless `CI` is set (then they fail).
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import {
  type Browser,
  type CdpEvent,
  findChromium,
  launchChromium,
  type Page,
} from "./chromium.ts";
import { startServer, type TestServer } from "./server.ts";

const chromium = findChromium();
const inCi = Boolean(Deno.env.get("CI"));
/** True when the page tests cannot run here (no Chromium, and not in CI). */
export const ignore = chromium === null && !inCi;
if (ignore) {
  console.warn(
    "passkey page tests ignored: Chromium not found (set CHROMIUM_PATH or apt-get install chromium)",
  );
}

/** Where `UPDATE_SCREENSHOTS=1` writes the page's screenshots. */
export const SCREENSHOTS = join(
  dirname(fromFileUrl(import.meta.url)),
  "..",
  "..",
  "docs",
  "screenshots",
);
const updateScreenshots = Deno.env.get("UPDATE_SCREENSHOTS") === "1";

/** A port that was free a moment ago: the server's origin must be known before it starts. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** What a page test gets: the server, the browser, the page and its virtual authenticator. */
export interface Setup {
  server: TestServer;
  browser: Browser;
  page: Page;
  authenticatorId: string;
  /** `http://localhost:PORT`: WebAuthn's rp id is `localhost`, so not 127.0.0.1. */
  origin: string;
  /** Console errors, exceptions and log entries of the page, as text. */
  problems: string[];
}

interface RemoteValue {
  value?: unknown;
  description?: string;
}

/** A page event that reports an error or a warning (a CSP violation is one), as text. */
function problemOf(event: CdpEvent): string | null {
  if (event.method === "Log.entryAdded") {
    const { entry } = event.params as { entry: { level: string; text: string; url?: string } };
    const bad = entry.level === "error" || entry.level === "warning";
    return bad ? `log ${entry.level}: ${entry.text} ${entry.url ?? ""}` : null;
  }
  if (event.method === "Runtime.exceptionThrown") {
    const { exceptionDetails: details } = event.params as {
      exceptionDetails: { text: string; exception?: RemoteValue };
    };
    return `exception: ${details.exception?.description ?? details.text}`;
  }
  if (event.method === "Runtime.consoleAPICalled") {
    const { type, args } = event.params as { type: string; args: RemoteValue[] };
    if (type !== "error" && type !== "warning") return null;
    return `console ${type}: ${args.map((a) => a.description ?? String(a.value)).join(" ")}`;
  }
  return null;
}

/** Starts the server and Chromium with a virtual authenticator; always tears both down. */
export async function withPage(run: (setup: Setup) => Promise<void>): Promise<void> {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  try {
    // The port can be taken between probe and bind by another process: retry once.
    for (let attempt = 0; !server; attempt++) {
      const port = freePort();
      try {
        server = await startServer({
          env: {
            PORT: String(port),
            PASSKEY_ORIGINS: `http://localhost:${port}`,
            PASSKEY_RP_IDS: "localhost",
          },
        });
      } catch (error) {
        if (attempt >= 1) throw error;
      }
    }
    browser = await launchChromium({ path: chromium ?? undefined });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on((event) => {
      const problem = problemOf(event);
      if (problem) problems.push(problem);
    });
    await page.send("WebAuthn.enable", { enableUI: false });
    const { authenticatorId } = await page.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const origin = `http://localhost:${server.port}`;
    await page.goto(`${origin}/`);
    await page.waitUntil("document.documentElement.dataset.ready === 'true'", 10_000, "page ready");
    await run({
      server,
      browser,
      page,
      authenticatorId: authenticatorId as string,
      origin,
      problems,
    });
  } finally {
    await browser?.close();
    await server?.stop();
  }
}

/** Sets a form field's value as typing would. */
export async function fill(page: Page, id: string, value: string): Promise<void> {
  await page.evaluate(`(() => {
    const el = document.getElementById(${JSON.stringify(id)});
    el.value = ${JSON.stringify(value)};
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  })()`);
}

/** Clicks the element with this id. */
export async function click(page: Page, id: string): Promise<void> {
  await page.evaluate(`document.getElementById(${JSON.stringify(id)}).click()`);
}

/** The text content of the element with this id. */
export async function text(page: Page, id: string): Promise<string> {
  return await page.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`);
}

/** Registers a passkey through the page and waits until it is listed. */
export async function registerPasskey(page: Page, name: string): Promise<void> {
  const before = await page.evaluate<number>("document.querySelectorAll('#passkeys li').length");
  await fill(page, "passkey-name", name);
  await click(page, "register");
  await page.waitUntil(
    `document.querySelectorAll('#passkeys li').length > ${before} ||
      document.getElementById('passkey-status').classList.contains('bad')`,
    15_000,
    "passkey registration",
  );
  const status = await text(page, "passkey-status");
  assert.match(status, /^Registered/, status);
}

/** Clicks "Sign with passkey and submit" and waits for the outcome. */
export async function submit(
  page: Page,
): Promise<{ state: string; summary: string; body: string }> {
  await page.evaluate("document.getElementById('result').dataset.state = 'idle'");
  await click(page, "submit");
  const state = await page.waitUntil<string>(
    `(() => { const s = document.getElementById('result').dataset.state;
      return ['accepted', 'pending', 'rejected', 'failed'].includes(s) ? s : ''; })()`,
    20_000,
    "submission outcome",
  );
  return {
    state,
    summary: await text(page, "result-summary"),
    body: await text(page, "result-body"),
  };
}

/** A failure message: what the page showed and the server's log lines for 500s. */
export function explain(outcome: { summary: string; body: string }, server: TestServer): string {
  const errors = server.stdout().split("\n").filter((line) => line.includes('"error"'));
  return [outcome.summary, outcome.body, ...errors].join("\n");
}

/** Takes a screenshot of the whole page; writes it under `name` with `UPDATE_SCREENSHOTS=1`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot();
  // The PNG signature: Chromium really rendered something.
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
  if (updateScreenshots) await Deno.writeFile(join(SCREENSHOTS, name), png);
}

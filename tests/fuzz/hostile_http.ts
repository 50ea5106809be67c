/**
 * The HTTP side of the hostile-input runs: posting raw bytes, counting stored
 * intents, storing the documents, reading a server's memory.
 * @module
 */

import { readMemory } from "../../testing/proc_stats.ts";
import type { Answer } from "./answers.ts";

/** A fresh 1000-character random marker (letters and digits). */
export function makeMarker(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(1000));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

/** Resident memory of a process in bytes, from /proc (null where unavailable). */
export function rssBytes(pid: number): number | null {
  return readMemory(pid)?.current ?? null;
}

/** Posts raw bytes as `application/json` and collects the answer. */
export async function postBytes(url: string, bytes: Uint8Array): Promise<Answer> {
  const response = await fetch(`${url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

/** Counts stored intents through the admin API (every page). */
export async function countIntents(url: string, token: string): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const response = await fetch(`${url}/intents?limit=100${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) throw new Error(`listing intents: ${response.status}`);
    const page = await response.json() as { items: unknown[]; cursor: string | null };
    count += page.items.length;
    cursor = page.cursor;
  } while (cursor !== null);
  return count;
}

/** Stores a template and a policy through the admin API; returns their ids. */
export async function storeRefs(
  url: string,
  token: string,
): Promise<{ templateId: string; policyId: string }> {
  const post = async (path: string, doc: string) => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: doc,
    });
    if (response.status !== 201 && response.status !== 200) {
      throw new Error(`storing ${path}: ${response.status} ${await response.text()}`);
    }
    return ((await response.json()) as { id: string }).id;
  };
  return {
    templateId: await post("/templates", '{"template":"hostile"}'),
    policyId: await post("/policies", '{"policy":"hostile"}'),
  };
}

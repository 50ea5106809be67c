/**
 * The mover's lease as stored (`["feed_mover"]`, see `keys.ts`).
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The lease as stored: UTF-8 JSON `{"holder","until"}`. */
export function encodeLease(lease: { holder: string; until: number }): Uint8Array {
  return encoder.encode(JSON.stringify(lease));
}

export function decodeLease(value: unknown): { holder: string; until: number } | null {
  if (!(value instanceof Uint8Array)) return null;
  try {
    const lease = JSON.parse(decoder.decode(value));
    return typeof lease?.holder === "string" && typeof lease?.until === "number" ? lease : null;
  } catch {
    return null;
  }
}

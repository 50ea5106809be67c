/**
 * Byte offsets for the strict JSON reader's error messages: where in the
 * UTF-8 input a UTF-16 index falls, and where decoding failed.
 * @module
 */

/** UTF-8 byte length of `text` before UTF-16 index `index`. */
export function utf8Offset(text: string, index: number): number {
  let bytes = 0;
  for (let k = 0; k < index; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      // The text came from valid UTF-8, so a high surrogate is always paired.
      bytes += 4;
      k++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Offset of the first byte at which `bytes` stops being well-formed UTF-8
 * (Unicode Table 3-7). Only used to report where decoding failed.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f; // excludes encoded surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < lo || next > hi) return i;
      lo = 0x80;
      hi = 0xbf;
    }
    i += need + 1;
  }
  return bytes.length;
}

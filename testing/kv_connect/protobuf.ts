/**
 * The few pieces of the protobuf wire format that the KV Connect server and
 * its tests need: reading the fields of a message, and writing varint and
 * length-delimited fields. The backend parses and answers the data path
 * messages itself; the HTTP layer only looks inside a `Watch` request (which
 * the backend takes unchecked) and the tests build raw requests with it.
 * @module
 */

/** Wire type of a varint field. */
export const VARINT = 0;
/** Wire type of a length-delimited field (bytes, strings, messages). */
export const LENGTH_DELIMITED = 2;

/** One field of a message as read off the wire. */
export type Field =
  | { number: number; wireType: typeof VARINT; value: bigint }
  | { number: number; wireType: typeof LENGTH_DELIMITED; value: Uint8Array };

function readVarint(bytes: Uint8Array, start: number): { value: bigint; next: number } {
  let value = 0n;
  let shift = 0n;
  for (let i = start; i < bytes.length && shift < 70n; i++) {
    const byte = bytes[i];
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return { value, next: i + 1 };
    shift += 7n;
  }
  throw new RangeError("truncated or overlong varint");
}

/**
 * Reads the top-level fields of one message, in wire order.
 *
 * @throws {RangeError} if the bytes are not a well-formed message, or carry a
 * wire type other than varint, 64-bit, length-delimited or 32-bit.
 */
export function readFields(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < bytes.length) {
    const tag = readVarint(bytes, at);
    at = tag.next;
    const number = Number(tag.value >> 3n);
    const wireType = Number(tag.value & 7n);
    if (number === 0) throw new RangeError("field number 0");
    if (wireType === VARINT) {
      const { value, next } = readVarint(bytes, at);
      fields.push({ number, wireType, value });
      at = next;
    } else if (wireType === LENGTH_DELIMITED) {
      const length = readVarint(bytes, at);
      const end = length.next + Number(length.value);
      if (length.value > BigInt(bytes.length) || end > bytes.length) {
        throw new RangeError("length-delimited field runs past the end");
      }
      fields.push({ number, wireType, value: bytes.subarray(length.next, end) });
      at = end;
    } else if (wireType === 1 || wireType === 5) {
      // Fixed-width fields: none of the messages read here has one, skip it.
      at += wireType === 1 ? 8 : 4;
      if (at > bytes.length) throw new RangeError("fixed-width field runs past the end");
    } else {
      throw new RangeError(`unsupported wire type ${wireType}`);
    }
  }
  return fields;
}

function varint(value: bigint | number): number[] {
  let rest = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return out;
}

/** Builds a message field by field. */
export class MessageWriter {
  #parts: Uint8Array[] = [];

  /** Appends a varint field (int32, int64, uint32, bool, enum). */
  varint(number: number, value: bigint | number | boolean): this {
    const n = typeof value === "boolean" ? (value ? 1 : 0) : value;
    this.#parts.push(new Uint8Array([...varint((number << 3) | VARINT), ...varint(n)]));
    return this;
  }

  /** Appends a length-delimited field: raw bytes or an encoded message. */
  bytes(number: number, value: Uint8Array): this {
    const head = [...varint((number << 3) | LENGTH_DELIMITED), ...varint(value.length)];
    this.#parts.push(new Uint8Array(head), value);
    return this;
  }

  /** The encoded message. */
  finish(): Uint8Array {
    const total = this.#parts.reduce((sum, part) => sum + part.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of this.#parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

// Protobuf's wire format for the few messages nanolet writes or reads without a .proto: the gRPC
// health check a probe sends, containerd's event subscription and the container ID inside its
// task-exit events. Each is one or two fields deep; loading their protos for that would cost more
// memory than the messages are worth. Anything malformed reads as absent, never as a throw.

/** A varint (field keys and lengths). */
export function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/** One length-delimited field (a string, bytes or an embedded message). */
export function bytesField(field: number, value: Buffer | string): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  return Buffer.concat([varint(field * 8 + 2), varint(bytes.length), bytes]);
}

type FieldValue = { wireType: 0; value: number } | { wireType: 2; value: Buffer };

/** The first occurrence of field `wanted` as a varint or length-delimited value; undefined if absent or malformed. */
function findField(message: Buffer, wanted: number): FieldValue | undefined {
  let at = 0;
  const readVarint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 70 && at < message.length; shift += 7) {
      const byte = message[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    return undefined;
  };
  while (at < message.length) {
    const key = readVarint();
    if (key === undefined) return undefined;
    const field = Math.floor(key / 8);
    switch (key % 8) {
      case 0: {
        const value = readVarint();
        if (value === undefined) return undefined;
        if (field === wanted) return { wireType: 0, value };
        break;
      }
      case 1:
        at += 8;
        break;
      case 5:
        at += 4;
        break;
      case 2: {
        const length = readVarint();
        if (length === undefined || at + length > message.length) return undefined;
        if (field === wanted) return { wireType: 2, value: message.subarray(at, at + length) };
        at += length;
        break;
      }
      default:
        return undefined;
    }
  }
  return undefined;
}

/** The bytes of length-delimited field `wanted`. */
export function readBytesField(message: Buffer, wanted: number): Buffer | undefined {
  const found = findField(message, wanted);
  return found?.wireType === 2 ? found.value : undefined;
}

/** The number of varint field `wanted`. */
export function readVarintField(message: Buffer, wanted: number): number | undefined {
  const found = findField(message, wanted);
  return found?.wireType === 0 ? found.value : undefined;
}

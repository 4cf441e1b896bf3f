// The D-Bus wire format (little-endian), as much of it as talking to logind needs: every basic
// type, arrays, structs, dict entries and variants, and whole messages with their header fields.
// Reading is bounded: a message larger than the caller's limit, a signature nested too deep or
// a length that runs past the data is an error, never a large allocation.

/** A decoded value: numbers for 32-bit and smaller, bigint for 64-bit, arrays for arrays and structs. */
export type DBusValue = boolean | number | bigint | string | DBusValue[] | DBusVariant;

export interface DBusVariant {
  signature: string;
  value: DBusValue;
}

export const enum MessageType {
  MethodCall = 1,
  MethodReturn = 2,
  Error = 3,
  Signal = 4,
}

/** Header field codes of the D-Bus specification. */
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, sender: 7, signature: 8, unixFds: 9 } as const;

export interface DBusMessage {
  type: MessageType;
  /** NO_REPLY_EXPECTED and friends. */
  flags: number;
  serial: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  signature?: string;
  body: DBusValue[];
}

/** The spec's limit on nesting (32 arrays and 32 structs): deeper signatures are refused. */
const MAX_DEPTH = 64;

export class DBusWireError extends Error {}

/** Splits a signature into its complete types ("sa{sv}i" -> ["s", "a{sv}", "i"]). */
export function splitSignature(signature: string): string[] {
  const types: string[] = [];
  let at = 0;
  while (at < signature.length) {
    const end = completeTypeEnd(signature, at, 0);
    types.push(signature.slice(at, end));
    at = end;
  }
  return types;
}

function completeTypeEnd(signature: string, at: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new DBusWireError("signature nested too deep");
  const c = signature[at];
  if (c === undefined) throw new DBusWireError(`signature "${signature}" ends early`);
  if ("ybnqiuxtdsoghv".includes(c)) return at + 1;
  if (c === "a") return completeTypeEnd(signature, at + 1, depth + 1);
  if (c === "(" || c === "{") {
    const close = c === "(" ? ")" : "}";
    let next = at + 1;
    while (signature[next] !== close) {
      if (next >= signature.length) throw new DBusWireError(`signature "${signature}" ends early`);
      next = completeTypeEnd(signature, next, depth + 1);
    }
    return next + 1;
  }
  throw new DBusWireError(`unknown type code "${c}" in signature`);
}

function alignmentOf(code: string): number {
  switch (code) {
    case "y": case "g": case "v": return 1;
    case "n": case "q": return 2;
    case "x": case "t": case "d": case "(": case "{": return 8;
    default: return 4;
  }
}

/** Appends values to a growing buffer, aligned as the specification says (from the message start). */
class Writer {
  private chunks: Buffer[] = [];
  length = 0;

  private push(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }

  align(to: number): void {
    const pad = (to - (this.length % to)) % to;
    if (pad > 0) this.push(Buffer.alloc(pad));
  }

  write(type: string, value: DBusValue): void {
    const c = type[0];
    this.align(alignmentOf(c));
    const fixed = (size: number, fill: (b: Buffer) => void) => {
      const b = Buffer.alloc(size);
      fill(b);
      this.push(b);
    };
    switch (c) {
      case "y": return fixed(1, (b) => b.writeUInt8(Number(value)));
      case "b": return fixed(4, (b) => b.writeUInt32LE(value ? 1 : 0));
      case "n": return fixed(2, (b) => b.writeInt16LE(Number(value)));
      case "q": return fixed(2, (b) => b.writeUInt16LE(Number(value)));
      case "i": return fixed(4, (b) => b.writeInt32LE(Number(value)));
      case "u": case "h": return fixed(4, (b) => b.writeUInt32LE(Number(value)));
      case "x": return fixed(8, (b) => b.writeBigInt64LE(BigInt(value as bigint | number)));
      case "t": return fixed(8, (b) => b.writeBigUInt64LE(BigInt(value as bigint | number)));
      case "d": return fixed(8, (b) => b.writeDoubleLE(Number(value)));
      case "s": case "o": {
        const text = Buffer.from(String(value), "utf8");
        fixed(4, (b) => b.writeUInt32LE(text.length));
        this.push(Buffer.concat([text, Buffer.alloc(1)]));
        return;
      }
      case "g": {
        const text = Buffer.from(String(value), "ascii");
        this.push(Buffer.concat([Buffer.from([text.length]), text, Buffer.alloc(1)]));
        return;
      }
      case "v": {
        const variant = value as DBusVariant;
        this.write("g", variant.signature);
        this.write(variant.signature, variant.value);
        return;
      }
      case "a": {
        const element = type.slice(1);
        const lengthAt = this.length;
        fixed(4, () => undefined);
        this.align(alignmentOf(element[0]));
        const start = this.length;
        for (const item of value as DBusValue[]) this.write(element, item);
        const bytes = this.length - start;
        // Patch the length in place: find the chunk that holds it.
        this.patchU32(lengthAt, bytes);
        return;
      }
      case "(": case "{": {
        const members = splitSignature(type.slice(1, -1));
        const items = value as DBusValue[];
        members.forEach((member, i) => this.write(member, items[i]));
        return;
      }
    }
  }

  private patchU32(offset: number, value: number): void {
    let at = 0;
    for (const chunk of this.chunks) {
      if (offset < at + chunk.length) {
        chunk.writeUInt32LE(value, offset - at);
        return;
      }
      at += chunk.length;
    }
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

/** Reads values from a message, checking every length against what is there. */
class Reader {
  constructor(private data: Buffer, public at: number, private depth = 0) {}

  align(to: number): void {
    this.at += (to - (this.at % to)) % to;
    this.need(0);
  }

  private need(bytes: number): void {
    if (this.at + bytes > this.data.length) throw new DBusWireError("message ends early");
  }

  read(type: string): DBusValue {
    const c = type[0];
    this.align(alignmentOf(c));
    const take = (size: number) => {
      this.need(size);
      const at = this.at;
      this.at += size;
      return at;
    };
    switch (c) {
      case "y": return this.data.readUInt8(take(1));
      case "b": return this.data.readUInt32LE(take(4)) !== 0;
      case "n": return this.data.readInt16LE(take(2));
      case "q": return this.data.readUInt16LE(take(2));
      case "i": return this.data.readInt32LE(take(4));
      case "u": case "h": return this.data.readUInt32LE(take(4));
      case "x": return this.data.readBigInt64LE(take(8));
      case "t": return this.data.readBigUInt64LE(take(8));
      case "d": return this.data.readDoubleLE(take(8));
      case "s": case "o": {
        const length = this.data.readUInt32LE(take(4));
        const start = take(length + 1);
        return this.data.toString("utf8", start, start + length);
      }
      case "g": {
        const length = this.data.readUInt8(take(1));
        const start = take(length + 1);
        return this.data.toString("ascii", start, start + length);
      }
      case "v": {
        const signature = this.read("g") as string;
        const types = splitSignature(signature);
        if (types.length !== 1) throw new DBusWireError(`variant signature "${signature}" is not one type`);
        const inner = this.nested();
        inner.at = this.at;
        const value = inner.read(signature);
        this.at = inner.at;
        return { signature, value };
      }
      case "a": {
        const length = this.data.readUInt32LE(take(4));
        const element = type.slice(1);
        this.align(alignmentOf(element[0]));
        const end = this.at + length;
        if (end > this.data.length) throw new DBusWireError("array runs past the message");
        const items: DBusValue[] = [];
        const inner = this.nested();
        inner.at = this.at;
        while (inner.at < end) items.push(inner.read(element));
        this.at = end;
        return items;
      }
      case "(": case "{": {
        const inner = this.nested();
        inner.at = this.at;
        const items = splitSignature(type.slice(1, -1)).map((member) => inner.read(member));
        this.at = inner.at;
        return items;
      }
    }
    throw new DBusWireError(`cannot read type "${type}"`);
  }

  private nested(): Reader {
    if (this.depth >= MAX_DEPTH) throw new DBusWireError("value nested too deep");
    return new Reader(this.data, this.at, this.depth + 1);
  }
}

/** Encodes a message with its header fields and body. */
export function encodeMessage(message: DBusMessage): Buffer {
  const body = new Writer();
  const types = message.signature ? splitSignature(message.signature) : [];
  types.forEach((type, i) => body.write(type, message.body[i]));
  const bodyBytes = body.toBuffer();
  const fields: DBusValue[] = [];
  const field = (code: number, signature: string, value: DBusValue | undefined) => {
    if (value !== undefined && value !== "") fields.push([code, { signature, value }]);
  };
  field(FIELD.path, "o", message.path);
  field(FIELD.interface, "s", message.interface);
  field(FIELD.member, "s", message.member);
  field(FIELD.errorName, "s", message.errorName);
  field(FIELD.replySerial, "u", message.replySerial);
  field(FIELD.destination, "s", message.destination);
  field(FIELD.signature, "g", message.signature);
  const head = new Writer();
  head.write("y", "l".charCodeAt(0));
  head.write("y", message.type);
  head.write("y", message.flags);
  head.write("y", 1);
  head.write("u", bodyBytes.length);
  head.write("u", message.serial);
  head.write("a(yv)", fields);
  head.align(8);
  return Buffer.concat([head.toBuffer(), bodyBytes]);
}

/** How many bytes the message at the start of `data` takes, or undefined if its header is not all there yet. */
export function messageLength(data: Buffer): number | undefined {
  if (data.length < 16) return undefined;
  if (data[0] !== "l".charCodeAt(0) && data[0] !== "B".charCodeAt(0)) throw new DBusWireError("unknown byte order");
  const little = data[0] === "l".charCodeAt(0);
  const bodyLength = little ? data.readUInt32LE(4) : data.readUInt32BE(4);
  const fieldsLength = little ? data.readUInt32LE(12) : data.readUInt32BE(12);
  const headerEnd = 16 + fieldsLength;
  return headerEnd + ((8 - (headerEnd % 8)) % 8) + bodyLength;
}

/** Decodes one whole message (as long as messageLength said). Big-endian senders are refused. */
export function decodeMessage(data: Buffer): DBusMessage {
  if (data[0] !== "l".charCodeAt(0)) throw new DBusWireError("big-endian messages are not read");
  const reader = new Reader(data, 0);
  reader.read("y");
  const type = reader.read("y") as number;
  const flags = reader.read("y") as number;
  reader.read("y");
  reader.read("u");
  const serial = reader.read("u") as number;
  const fields = reader.read("a(yv)") as DBusValue[];
  reader.align(8);
  const message: DBusMessage = { type, flags, serial, body: [] };
  for (const entry of fields) {
    const [code, variant] = entry as [number, DBusVariant];
    const value = variant.value;
    if (code === FIELD.path) message.path = String(value);
    else if (code === FIELD.interface) message.interface = String(value);
    else if (code === FIELD.member) message.member = String(value);
    else if (code === FIELD.errorName) message.errorName = String(value);
    else if (code === FIELD.replySerial) message.replySerial = Number(value);
    else if (code === FIELD.destination) message.destination = String(value);
    else if (code === FIELD.sender) message.sender = String(value);
    else if (code === FIELD.signature) message.signature = String(value);
  }
  if (message.signature) message.body = splitSignature(message.signature).map((t) => reader.read(t));
  return message;
}

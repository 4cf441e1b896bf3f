// One connection to the system bus: EXTERNAL authentication as the process's user, Hello, method
// calls with their replies, and signals for match rules. File descriptors are not negotiated (Node
// cannot receive them), so a reply that carries one is refused by the bus; logind's lock is taken
// by systemd-inhibit instead (see logind.ts).
import net from "node:net";
import { DBusMessage, DBusValue, DBusWireError, MessageType, decodeMessage, encodeMessage, messageLength } from "./dbus-wire.js";

/** Where the system bus listens unless DBUS_SYSTEM_BUS_ADDRESS says otherwise (the spec's default). */
export const DEFAULT_SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket";

/** Largest message read from the bus; logind's replies and signals are a few hundred bytes. */
const MAX_MESSAGE_BYTES = 1 << 20;
/** A call the bus or its peer does not answer in this long fails. */
const CALL_TIMEOUT_MS = 25_000;
const BUS_NAME = "org.freedesktop.DBus";
const BUS_PATH = "/org/freedesktop/DBus";

export class DBusError extends Error {
  constructor(public errorName: string, message: string) {
    super(`${errorName}: ${message}`);
  }
}

/** The socket path of a bus address; only `unix:path=` and `unix:abstract=` are spoken. */
export function socketPathOf(address: string): string {
  for (const part of address.split(";")) {
    const m = /^unix:(path|abstract)=([^,]+)/.exec(part.trim());
    if (m) return m[1] === "abstract" ? `\0${decodeURIComponent(m[2])}` : decodeURIComponent(m[2]);
  }
  throw new Error(`D-Bus address "${address.slice(0, 200)}" has no unix:path`);
}

interface PendingCall {
  resolve: (body: DBusValue[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class DBusConnection {
  private serial = 1;
  private pending = new Map<number, PendingCall>();
  private buffered: Buffer = Buffer.alloc(0);
  private signalHandlers: ((message: DBusMessage) => void)[] = [];
  private closeHandlers: ((error?: Error) => void)[] = [];
  private closed = false;

  private constructor(private socket: net.Socket) {}

  /** Connects, authenticates and says Hello. */
  static async connect(address: string): Promise<DBusConnection> {
    const socket = net.createConnection(socketPathOf(address));
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    await authenticate(socket);
    const connection = new DBusConnection(socket);
    socket.on("data", (chunk) => connection.received(chunk));
    socket.on("error", (error) => connection.close(error));
    socket.on("close", () => connection.close());
    await connection.call({ destination: BUS_NAME, path: BUS_PATH, interface: BUS_NAME, member: "Hello" });
    return connection;
  }

  /** Calls a method; resolves with the reply's body, rejects with the peer's error. */
  call(message: { destination: string; path: string; interface: string; member: string; signature?: string; body?: DBusValue[] }): Promise<DBusValue[]> {
    if (this.closed) return Promise.reject(new Error("D-Bus connection is closed"));
    const serial = this.serial++;
    const bytes = encodeMessage({ type: MessageType.MethodCall, flags: 0, serial, ...message, body: message.body ?? [] });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(serial);
        reject(new Error(`D-Bus call ${message.interface}.${message.member} was not answered in ${CALL_TIMEOUT_MS / 1000}s`));
      }, CALL_TIMEOUT_MS);
      timer.unref();
      this.pending.set(serial, { resolve, reject, timer });
      this.socket.write(bytes);
    });
  }

  /** Reads a property through org.freedesktop.DBus.Properties.Get; resolves with its value. */
  async getProperty(destination: string, path: string, iface: string, name: string): Promise<DBusValue> {
    const [variant] = await this.call({ destination, path, interface: "org.freedesktop.DBus.Properties", member: "Get", signature: "ss", body: [iface, name] });
    return (variant as { value: DBusValue }).value;
  }

  /** Asks the bus for the signals a match rule selects. */
  async addMatch(rule: string): Promise<void> {
    await this.call({ destination: BUS_NAME, path: BUS_PATH, interface: BUS_NAME, member: "AddMatch", signature: "s", body: [rule] });
  }

  onSignal(handler: (message: DBusMessage) => void): void {
    this.signalHandlers.push(handler);
  }

  /** Called once when the connection ends (the bus went away, or close()). */
  onClose(handler: (error?: Error) => void): void {
    this.closeHandlers.push(handler);
  }

  close(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error ?? new Error("D-Bus connection closed"));
    }
    this.pending.clear();
    for (const handler of this.closeHandlers) handler(error);
  }

  private received(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    try {
      for (;;) {
        const length = messageLength(this.buffered);
        if (length === undefined) {
          if (this.buffered.length > MAX_MESSAGE_BYTES) throw new DBusWireError("header too large");
          return;
        }
        if (length > MAX_MESSAGE_BYTES) throw new DBusWireError(`message of ${length} bytes is over the ${MAX_MESSAGE_BYTES}-byte limit`);
        if (this.buffered.length < length) return;
        const message = decodeMessage(this.buffered.subarray(0, length));
        this.buffered = this.buffered.subarray(length);
        this.dispatch(message);
      }
    } catch (error) {
      // A stream we cannot frame cannot be resynchronised: drop the connection (the caller reconnects).
      this.close(error as Error);
    }
  }

  private dispatch(message: DBusMessage): void {
    if (message.type === MessageType.Signal) {
      for (const handler of this.signalHandlers) handler(message);
      return;
    }
    if (message.type !== MessageType.MethodReturn && message.type !== MessageType.Error) return;
    const call = message.replySerial !== undefined ? this.pending.get(message.replySerial) : undefined;
    if (!call) return;
    this.pending.delete(message.replySerial!);
    clearTimeout(call.timer);
    if (message.type === MessageType.Error) call.reject(new DBusError(message.errorName ?? "org.freedesktop.DBus.Error.Failed", String(message.body[0] ?? "")));
    else call.resolve(message.body);
  }
}

/** The SASL exchange: EXTERNAL with our uid, then BEGIN. Lines are bounded. */
async function authenticate(socket: net.Socket): Promise<void> {
  const uid = String(process.getuid?.() ?? 0);
  socket.write(Buffer.concat([Buffer.from([0]), Buffer.from(`AUTH EXTERNAL ${Buffer.from(uid).toString("hex")}\r\n`)]));
  const line = await new Promise<string>((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.length > 512) return finish(new Error("D-Bus authentication answer too long"));
      const end = text.indexOf("\r\n");
      if (end >= 0) finish(undefined, text.slice(0, end));
    };
    const onError = (error: Error) => finish(error);
    const finish = (error?: Error, value?: string) => {
      socket.off("data", onData);
      socket.off("error", onError);
      if (error) reject(error);
      else resolve(value!);
    };
    socket.on("data", onData);
    socket.on("error", onError);
  });
  if (!line.startsWith("OK ")) throw new Error(`D-Bus authentication refused: ${line.slice(0, 100)}`);
  socket.write("BEGIN\r\n");
}

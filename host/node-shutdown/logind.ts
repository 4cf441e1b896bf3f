// systemd-logind as the node shutdown manager uses it: its InhibitDelayMaxUSec, a drop-in that
// raises it (and a reload through systemd), a shutdown delay lock, and PrepareForShutdown.
//
// The lock is a file descriptor logind hands out over D-Bus; Node cannot receive one, so the lock
// is held by `systemd-inhibit --mode=delay` running `cat` on a pipe from us: it asks logind for
// the lock, then runs its command, and lets the lock go when the command ends. Ending the pipe
// (or nanolet dying, which closes it) releases the lock, so it never outlives the agent.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { DBusConnection } from "./dbus-connection.js";

export const LOGIND_SERVICE = "org.freedesktop.login1";
export const LOGIND_PATH = "/org/freedesktop/login1";
export const LOGIND_MANAGER = "org.freedesktop.login1.Manager";
/** Where logind reads drop-ins from (logind.conf(5)). */
export const LOGIND_CONF_DIR = "/etc/systemd/logind.conf.d";
export const DROP_IN_NAME = "99-nanolet.conf";

/** What the shutdown manager needs of logind; a fake (fake-logind.ts) stands in for unit tests. */
export interface Logind {
  /** logind's InhibitDelayMaxUSec, in milliseconds. */
  inhibitDelayMs(): Promise<number>;
  /** Writes the drop-in setting InhibitDelayMaxSec and has systemd reload logind. */
  raiseInhibitDelay(delayMs: number): Promise<void>;
  /** Takes a shutdown delay lock; resolves once logind holds it for us. */
  takeLock(): Promise<void>;
  /** Lets the lock go (nothing if none is held). */
  releaseLock(): Promise<void>;
  /** Follows logind's PrepareForShutdown: true before a shutdown, false when it was cancelled. */
  watchShutdown(handler: (active: boolean) => void): Promise<void>;
  /** Called once when the bus connection ends. */
  onClose(handler: (error?: Error) => void): void;
  close(): void;
}

export interface SystemdLogindOptions {
  /** The bus address (DBUS_SYSTEM_BUS_ADDRESS, else the system bus). */
  busAddress: string;
  /** Where the drop-in goes (logind's drop-in directory). */
  confDir: string;
  /** What logind shows as the lock's holder and reason. */
  who: string;
  why: string;
  /** A PrepareForShutdown that did not come from logind (its sender), ignored. */
  onForged?: (sender: string) => void;
}

/** Longest stderr kept from systemd-inhibit for an error message. */
const MAX_ERROR_BYTES = 2048;

export class SystemdLogind implements Logind {
  private lock: ChildProcess | undefined;

  private constructor(private bus: DBusConnection, private options: SystemdLogindOptions) {}

  static async connect(options: SystemdLogindOptions): Promise<SystemdLogind> {
    const bus = await DBusConnection.connect(options.busAddress);
    return new SystemdLogind(bus, options);
  }

  async inhibitDelayMs(): Promise<number> {
    const value = await this.bus.getProperty(LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER, "InhibitDelayMaxUSec");
    if (typeof value !== "bigint") throw new Error("InhibitDelayMaxUSec from logind is not a uint64 as expected");
    return Number(value / 1000n);
  }

  async raiseInhibitDelay(delayMs: number): Promise<void> {
    const dir = this.options.confDir;
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    const text = `# nanolet's logind override: time for pods to stop before a shutdown\n[Login]\nInhibitDelayMaxSec=${Math.round(delayMs / 1000)}\n`;
    // Written beside and renamed over, so logind never reads half a file.
    const file = path.join(dir, DROP_IN_NAME);
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, text, { mode: 0o644, flag: "w" });
    fs.renameSync(temporary, file);
    // systemd sends logind SIGHUP: it reads its configuration again.
    await this.bus.call({
      destination: "org.freedesktop.systemd1",
      path: "/org/freedesktop/systemd1",
      interface: "org.freedesktop.systemd1.Manager",
      member: "KillUnit",
      signature: "ssi",
      body: ["systemd-logind.service", "all", 1],
    });
  }

  takeLock(): Promise<void> {
    if (this.lock) return Promise.resolve();
    const child = spawn(
      "systemd-inhibit",
      ["--what=shutdown", `--who=${this.options.who}`, `--why=${this.options.why}`, "--mode=delay", "sh", "-c", "echo held; exec cat"],
      { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: this.options.busAddress } },
    );
    this.lock = child;
    return new Promise((resolve, reject) => {
      let stderr = "";
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      child.stdout!.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("held")) settle();
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        if (stderr.length < MAX_ERROR_BYTES) stderr += chunk.toString().slice(0, MAX_ERROR_BYTES - stderr.length);
      });
      child.on("error", (error) => {
        if (this.lock === child) this.lock = undefined;
        settle(new Error(`cannot run systemd-inhibit: ${error.message}`));
      });
      child.on("exit", (code) => {
        if (this.lock === child) this.lock = undefined;
        settle(new Error(`systemd-inhibit exited with status ${code}: ${stderr.trim() || "no message"}`));
      });
    });
  }

  releaseLock(): Promise<void> {
    const child = this.lock;
    this.lock = undefined;
    if (!child || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("exit", () => resolve());
      // End of input ends cat; systemd-inhibit then closes the lock and exits.
      child.stdin!.end();
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
  }

  async watchShutdown(handler: (active: boolean) => void): Promise<void> {
    this.bus.onSignal((message) => {
      if (message.interface !== LOGIND_MANAGER || message.member !== "PrepareForShutdown" || message.path !== LOGIND_PATH) return;
      if (typeof message.body[0] !== "boolean") return;
      const active = message.body[0];
      // Any client of the bus may send a signal, even straight to us: only logind's own counts,
      // or one local user could have every pod of the node stopped.
      void this.bus
        .call({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner", signature: "s", body: [LOGIND_SERVICE] })
        .then(([owner]) => {
          if (owner === message.sender) handler(active);
          else this.options.onForged?.(message.sender ?? "");
        })
        .catch(() => this.options.onForged?.(message.sender ?? ""));
    });
    await this.bus.addMatch(`type='signal',sender='${LOGIND_SERVICE}',interface='${LOGIND_MANAGER}',member='PrepareForShutdown',path='${LOGIND_PATH}'`);
  }

  onClose(handler: (error?: Error) => void): void {
    this.bus.onClose(handler);
  }

  close(): void {
    void this.releaseLock();
    this.bus.close();
  }
}

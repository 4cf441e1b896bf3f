// The plugin manager: watches `<root-dir>/plugins_registry` for plugins' sockets, asks each
// (GetInfo) what it is, hands device plugins to the device manager and CSI drivers to the CSI
// registry, answers NotifyRegistrationStatus, and unregisters a plugin whose socket goes.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../common/log.js";
import { printable } from "../common/log.js";
import { DEVICE_PLUGIN_VERSION, services } from "./plugin-api.js";

/** What a plugin said of itself. */
export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

/** A kind of plugin the watcher hands on: `register` answers "" or the refusal. */
export interface PluginHandler {
  register(info: PluginInfo, socket: string): Promise<string> | string;
  unregister(name: string): void;
}

export interface PluginWatcherOptions {
  /** `<root-dir>/plugins_registry`. */
  dir: string;
  log: Logger;
  /** By plugin type: `DevicePlugin`, `CSIPlugin`. */
  handlers: Record<string, PluginHandler>;
  /** How often the directory is read again besides the file watch. */
  rescanMs?: number;
}

/** Sockets followed at once: a local writer cannot grow the agent past this. */
const MAX_PLUGINS = 64;
const CALL_DEADLINE_MS = 10_000;

export class PluginWatcher {
  private known = new Map<string, { type: string; name: string } | "pending">();
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning = false;

  constructor(private options: PluginWatcherOptions) {}

  start(): void {
    fs.mkdirSync(this.options.dir, { recursive: true, mode: 0o750 });
    try {
      this.watcher = fs.watch(this.options.dir, () => void this.scan());
    } catch (error) {
      this.options.log.log("warn", "Cannot watch the plugin registry; reading it periodically only", { dir: this.options.dir, error: (error as Error).message });
    }
    this.timer = setInterval(() => void this.scan(), this.options.rescanMs ?? 5000);
    this.timer.unref();
    void this.scan();
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }

  /** One pass: new sockets are asked who they are; gone ones are unregistered. */
  async scan(): Promise<void> {
    if (this.scanning) return;
    this.scanning = true;
    try {
      let names: string[] = [];
      try {
        names = fs.readdirSync(this.options.dir).filter((n) => !n.startsWith("."));
      } catch {
        names = [];
      }
      const sockets = names.filter((n) => {
        try {
          return fs.lstatSync(path.join(this.options.dir, n)).isSocket();
        } catch {
          return false;
        }
      });
      for (const [socket, what] of this.known) {
        if (sockets.includes(socket)) continue;
        this.known.delete(socket);
        if (what !== "pending") {
          this.options.log.log("info", "Plugin socket removed: unregistering", { plugin: what.name, type: what.type });
          this.options.handlers[what.type]?.unregister(what.name);
        }
      }
      for (const socket of sockets) {
        if (this.known.has(socket) || this.known.size >= MAX_PLUGINS) continue;
        this.known.set(socket, "pending");
        await this.registerOne(socket);
      }
    } finally {
      this.scanning = false;
    }
  }

  private async registerOne(socketName: string): Promise<void> {
    const socket = path.join(this.options.dir, socketName);
    const Ctor = services().pluginRegistration;
    const client = new Ctor(`unix:${socket}`, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": 64 * 1024 }) as grpc.Client & Record<string, any>;
    const call = <T>(method: string, request: object) => new Promise<T>((resolve, reject) => {
      client[method](request, { deadline: Date.now() + CALL_DEADLINE_MS }, (error: grpc.ServiceError | null, answer: T) => (error ? reject(error) : resolve(answer)));
    });
    try {
      const info = await call<PluginInfo>("GetInfo", {});
      const handler = this.options.handlers[info.type];
      let problem = handler ? "" : `plugin type ${JSON.stringify(printable(String(info.type), 64))} is not supported`;
      if (!problem && info.type === "DevicePlugin" && !(info.supportedVersions ?? []).includes(DEVICE_PLUGIN_VERSION)) {
        problem = `none of the versions ${JSON.stringify((info.supportedVersions ?? []).slice(0, 8))} is supported; nanolet speaks ${DEVICE_PLUGIN_VERSION}`;
      }
      // A plugin names its own endpoint, or is served on the registration socket itself.
      const endpoint = info.endpoint ? info.endpoint : socket;
      if (!problem) problem = await handler!.register(info, endpoint);
      if (problem) this.options.log.log("warn", "Plugin refused", { socket, plugin: printable(String(info.name), 128), error: problem });
      else this.known.set(socketName, { type: info.type, name: info.name });
      await call("NotifyRegistrationStatus", { pluginRegistered: problem === "", error: problem }).catch(() => undefined);
    } catch (error) {
      // Not answering now: tried again at the next scan.
      this.known.delete(socketName);
      this.options.log.log("debug", "Plugin socket did not answer GetInfo", { socket, error: (error as Error).message });
    } finally {
      client.close();
    }
  }
}

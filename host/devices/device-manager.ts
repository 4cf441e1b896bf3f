// The device manager's I/O: serves Registration on `<root>/device-plugins/kubelet.sock`, keeps a
// ListAndWatch stream to each plugin, tells the core every plugin's devices, asks the plugin
// (Allocate, PreStartContainer) what a container the core gave devices needs, and keeps the
// checkpoint. The core decides which devices; this only talks.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../common/log.js";
import { printable } from "../common/log.js";
import { DeviceCheckpointFile, type PodDeviceEntry } from "./device-checkpoint.js";
import {
  DEVICE_PLUGIN_VERSION, HEALTHY, KUBELET_SOCKET, numaNodesOf, services, validResourceName,
  type ContainerAllocateResponse, type DeviceMessage, type RegisterRequest,
} from "./plugin-api.js";
import { Endpoint } from "./endpoint.js";
import type { DeviceAssignment } from "../core/types.js";

/** One device as the core is told of it. */
export interface DeviceState {
  id: string;
  healthy: boolean;
  numaNodes: number[];
}

/** What the core gave one container of one resource. */
export type { DeviceAssignment };

/** What a container gets from its devices' plugins, merged. */
export interface ContainerDeviceOptions {
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  mounts: { containerPath: string; hostPath: string; readonly: boolean }[];
  envs: Record<string, string>;
  annotations: Record<string, string>;
  cdiDevices: string[];
}

export interface DeviceManagerOptions {
  /** `<root-dir>/device-plugins`. */
  dir: string;
  log: Logger;
  /** A resource's devices changed, or its plugin went (empty list). */
  onDevices(resource: string, devices: DeviceState[]): void;
}

/** A plugin whose stream ended keeps its resource's capacity this long (upstream's grace). */
export const ENDPOINT_STOP_GRACE_MS = 5 * 60 * 1000;
/** Resources one node serves: a client cannot grow the agent past this many. */
export const MAX_RESOURCES = 64;
/** Devices one plugin may announce. */
export const MAX_DEVICES_PER_RESOURCE = 1024;

export class DeviceManager {
  private server: grpc.Server | undefined;
  private endpoints = new Map<string, Endpoint>();
  /** Each resource's devices as last announced. */
  private devices = new Map<string, DeviceMessage[]>();
  private removals = new Map<string, NodeJS.Timeout>();
  private entries: PodDeviceEntry[] = [];
  private checkpoint: DeviceCheckpointFile;

  constructor(private options: DeviceManagerOptions) {
    this.checkpoint = new DeviceCheckpointFile(options.dir);
  }

  get socketPath(): string {
    return path.join(this.options.dir, KUBELET_SOCKET);
  }

  /** Reads the checkpoint and serves Registration. Resources it names start with no devices. */
  async start(): Promise<void> {
    fs.mkdirSync(this.options.dir, { recursive: true, mode: 0o750 });
    // Only root reaches kubelet.sock: the directory is closed before the socket is made in it.
    fs.chmodSync(this.options.dir, 0o750);
    try {
      const kept = this.checkpoint.read();
      if (kept) {
        this.entries = kept.entries;
        for (const name of Object.keys(kept.registered).slice(0, MAX_RESOURCES)) this.devices.set(name, []);
      }
    } catch (error) {
      this.options.log.log("warn", "Continue after failing to read the device checkpoint; device allocations may not be up to date",
        { file: this.checkpoint.file, error: printable((error as Error).message, 256) });
    }
    fs.rmSync(this.socketPath, { force: true });
    const server = new grpc.Server({ "grpc.max_receive_message_length": 64 * 1024 });
    server.addService(services().registration.service, {
      Register: (call: grpc.ServerUnaryCall<RegisterRequest, object>, callback: grpc.sendUnaryData<object>) => {
        const problem = this.register(call.request);
        if (problem) callback({ code: grpc.status.INVALID_ARGUMENT, details: problem });
        else callback(null, {});
      },
    });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${this.socketPath}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
    fs.chmodSync(this.socketPath, 0o600);
    this.server = server;
  }

  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    for (const endpoint of this.endpoints.values()) endpoint.close();
    this.endpoints.clear();
    for (const timer of this.removals.values()) clearTimeout(timer);
    this.removals.clear();
  }

  /**
   * A plugin's registration (the Registration service; or the plugin watcher, which gives the
   * socket it found as `socketPath`); "" or the refusal.
   */
  register(request: RegisterRequest, socketPath?: string): string {
    const name = String(request.resourceName ?? "");
    if (request.version !== DEVICE_PLUGIN_VERSION) {
      return `requested API version ${JSON.stringify(printable(String(request.version), 64))} is not supported by kubelet. Supported versions are ["${DEVICE_PLUGIN_VERSION}"]`;
    }
    if (!validResourceName(name)) return `the ResourceName ${JSON.stringify(printable(name, 64))} is invalid`;
    const endpoint = String(request.endpoint ?? "");
    if (socketPath === undefined && (endpoint === "" || endpoint !== path.basename(endpoint) || endpoint === KUBELET_SOCKET || endpoint.length > 255)) {
      return `the Endpoint ${JSON.stringify(printable(endpoint, 64))} is invalid`;
    }
    if (!this.devices.has(name) && this.devices.size >= MAX_RESOURCES) return `more than ${MAX_RESOURCES} device plugin resources`;
    this.endpoints.get(name)?.close();
    clearTimeout(this.removals.get(name));
    this.removals.delete(name);
    if (!this.devices.has(name)) this.devices.set(name, []);
    const socket = socketPath ?? path.join(this.options.dir, endpoint);
    const next = new Endpoint(name, socket, request.options ?? {}, {
      devices: (list) => this.announced(name, next, list),
      ended: (why) => this.ended(name, next, why),
    });
    this.endpoints.set(name, next);
    this.options.log.log("info", "Registered device plugin", { resource: name, endpoint: socket });
    next.listAndWatch();
    return "";
  }

  /** A plugin the watcher saw go (its registration socket removed). */
  unregister(name: string): void {
    const endpoint = this.endpoints.get(name);
    if (endpoint) {
      endpoint.close();
      this.ended(name, endpoint, "plugin unregistered");
    }
  }

  private announced(name: string, endpoint: Endpoint, list: DeviceMessage[]): void {
    if (this.endpoints.get(name) !== endpoint) return;
    const unique = new Map<string, DeviceMessage>();
    for (const d of list.slice(0, MAX_DEVICES_PER_RESOURCE)) if (typeof d.ID === "string" && d.ID.length > 0 && d.ID.length <= 256) unique.set(d.ID, d);
    this.devices.set(name, [...unique.values()]);
    this.tellCore(name);
    this.writeCheckpoint();
  }

  /** The stream ended: every device is unhealthy now, and after the grace the resource is gone. */
  private ended(name: string, endpoint: Endpoint, why: string): void {
    if (this.endpoints.get(name) !== endpoint) return;
    this.endpoints.delete(name);
    this.options.log.log("warn", "Device plugin stream ended; its devices are unhealthy", { resource: name, error: printable(why, 256) });
    this.devices.set(name, (this.devices.get(name) ?? []).map((d) => ({ ...d, health: "Unhealthy" })));
    this.tellCore(name);
    const timer = setTimeout(() => {
      this.removals.delete(name);
      if (this.endpoints.has(name)) return;
      this.devices.set(name, []);
      this.tellCore(name);
    }, ENDPOINT_STOP_GRACE_MS);
    timer.unref();
    this.removals.set(name, timer);
  }

  private tellCore(name: string): void {
    this.options.onDevices(name, this.stateOf(name));
  }

  private stateOf(name: string): DeviceState[] {
    return (this.devices.get(name) ?? []).map((d) => ({ id: d.ID, healthy: d.health === HEALTHY, numaNodes: numaNodesOf(d) }));
  }

  /** Every resource's devices as the core is told of them (for a new core). */
  deviceStates(): [string, DeviceState[]][] {
    return this.knownResources().map((name) => [name, this.stateOf(name)]);
  }

  /** Every resource with its devices (for the node's capacity and allocatable). */
  counts(): { resource: string; capacity: number; allocatable: number }[] {
    return [...this.devices.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([resource, list]) => ({
      resource, capacity: list.length, allocatable: list.filter((d) => d.health === HEALTHY).length,
    }));
  }

  /** Resources whose devices are known, with their states: what the core is told at start. */
  knownResources(): string[] {
    return [...this.devices.keys()].sort();
  }

  /** The assignments the checkpoint kept, for the core after a restart. */
  keptAssignments(): DeviceAssignment[] {
    return this.entries.map((e) => ({ podUid: e.podUid, containerName: e.containerName, resource: e.resourceName, deviceIds: e.deviceIds }));
  }

  /** The core's assignments now: entries of containers that no longer hold devices go. */
  syncAssignments(current: DeviceAssignment[]): void {
    const key = (uid: string, name: string, resource: string, ids: string[]) => `${uid}\n${name}\n${resource}\n${ids.join(",")}`;
    const byKey = new Map(this.entries.map((e) => [key(e.podUid, e.containerName, e.resourceName, e.deviceIds), e]));
    this.entries = current.map((a) => byKey.get(key(a.podUid, a.containerName, a.resource, a.deviceIds)) ??
      { podUid: a.podUid, containerName: a.containerName, resourceName: a.resource, deviceIds: [...a.deviceIds], allocResp: Buffer.alloc(0) });
    this.writeCheckpoint();
  }

  /**
   * What a container the core gave `assignments` needs from the plugins: Allocate once per
   * resource (its answer kept in the checkpoint), PreStartContainer when the plugin asks for it.
   */
  async containerOptions(assignments: DeviceAssignment[]): Promise<ContainerDeviceOptions> {
    const out: ContainerDeviceOptions = { devices: [], mounts: [], envs: {}, annotations: {}, cdiDevices: [] };
    for (const a of assignments) {
      let entry = this.entries.find((e) => e.podUid === a.podUid && e.containerName === a.containerName && e.resourceName === a.resource);
      if (!entry) {
        entry = { podUid: a.podUid, containerName: a.containerName, resourceName: a.resource, deviceIds: [...a.deviceIds], allocResp: Buffer.alloc(0) };
        this.entries.push(entry);
      }
      const endpoint = this.endpoints.get(a.resource);
      let response: ContainerAllocateResponse;
      if (entry.allocResp.length > 0) {
        response = Endpoint.decodeContainerResponse(entry.allocResp);
      } else {
        if (!endpoint) throw new Error(`Unknown Device Plugin ${a.resource}`);
        const answer = await endpoint.allocate(a.deviceIds);
        entry.allocResp = answer.bytes;
        response = answer.response;
        this.writeCheckpoint();
      }
      if (endpoint?.preStartRequired) await endpoint.preStart(a.deviceIds);
      merge(out, response);
    }
    return out;
  }

  private writeCheckpoint(): void {
    const registered: Record<string, string[]> = {};
    for (const [name, list] of this.devices) registered[name] = list.filter((d) => d.health === HEALTHY).map((d) => d.ID).sort();
    try {
      this.checkpoint.write({ entries: this.entries, registered });
    } catch (error) {
      this.options.log.log("error", "Cannot write the device checkpoint", { file: this.checkpoint.file, error: (error as Error).message });
    }
  }
}

/** Upstream's merge of several plugins' answers: later environment wins, paths are not doubled. */
function merge(out: ContainerDeviceOptions, r: ContainerAllocateResponse): void {
  for (const [k, v] of Object.entries(r.envs ?? {})) out.envs[k] = v;
  for (const [k, v] of Object.entries(r.annotations ?? {})) out.annotations[k] = v;
  for (const m of r.mounts ?? []) {
    if (!out.mounts.some((x) => x.containerPath === m.containerPath)) out.mounts.push({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly });
  }
  for (const d of r.devices ?? []) {
    if (!out.devices.some((x) => x.containerPath === d.containerPath)) out.devices.push({ containerPath: d.containerPath, hostPath: d.hostPath, permissions: d.permissions || "rwm" });
  }
  for (const c of r.cdiDevices ?? []) if (!out.cdiDevices.includes(c.name)) out.cdiDevices.push(c.name);
}

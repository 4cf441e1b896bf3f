// `kubelet_internal_checkpoint`: which devices each container holds and what its plugin's Allocate
// answered, in upstream's layout (PodDeviceEntries with AllocResp as protobuf bytes,
// RegisteredDevices) and checksum, so that a restart keeps every assignment and what to give the
// container, and a node moved between nanolet and the kubelet keeps them too.
import path from "node:path";
import { StateFile, fnv32a } from "../hardware/durable-file.js";

export const DEVICE_CHECKPOINT_FILE = "kubelet_internal_checkpoint";

export interface PodDeviceEntry {
  podUid: string;
  containerName: string;
  resourceName: string;
  deviceIds: string[];
  /** The plugin's ContainerAllocateResponse, protobuf-encoded; empty until Allocate answered. */
  allocResp: Buffer;
}

export interface DeviceCheckpoint {
  entries: PodDeviceEntry[];
  registered: Record<string, string[]>;
}

/** The Data member as the file holds it. */
interface RawData {
  PodDeviceEntries: { PodUID: string; ContainerName: string; ResourceName: string; DeviceIDs: Record<string, string[]>; AllocResp: string }[] | null;
  RegisteredDevices: Record<string, string[]>;
}

/**
 * upstream's checksum: FNV-32a of the Data member as its hashing prints the Go struct (fields with
 * their types, nested values plain, map keys sorted, bytes as numbers; a nil list as `<nil>`).
 */
export function deviceChecksum(data: RawData): number {
  const list = (ids: unknown) => (Array.isArray(ids) ? ids.map(String).join(" ") : "");
  const entries = !Array.isArray(data.PodDeviceEntries) ? "<nil>" : `[${data.PodDeviceEntries.map((e) => {
    const numa = Object.keys(e.DeviceIDs ?? {}).map(Number).sort((a, b) => a - b).map((k) => `${k}:[${list(e.DeviceIDs[String(k)])}]`).join(" ");
    const bytes = [...Buffer.from(typeof e.AllocResp === "string" ? e.AllocResp : "", "base64")].join(" ");
    return `{PodUID:(string)${e.PodUID} ContainerName:(string)${e.ContainerName} ResourceName:(string)${e.ResourceName} ` +
      `DeviceIDs:(checkpoint.DevicesPerNUMA)map[${numa}] AllocResp:([]uint8)[${bytes}]}`;
  }).join(" ")}]`;
  const registered = `map[${Object.keys(data.RegisteredDevices ?? {}).sort().map((k) => `${k}:[${list(data.RegisteredDevices[k])}]`).join(" ")}]`;
  return fnv32a(`(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${entries} RegisteredDevices:(map[string][]string)${registered}}`);
}

export function formatDeviceCheckpoint(checkpoint: DeviceCheckpoint): string {
  const data = {
    PodDeviceEntries: checkpoint.entries.length === 0 ? null : checkpoint.entries.map((e) => ({
      PodUID: e.podUid, ContainerName: e.containerName, ResourceName: e.resourceName,
      // Devices by NUMA node; nanolet keeps them under -1 (no node), as upstream does without topology.
      DeviceIDs: { "-1": e.deviceIds }, AllocResp: e.allocResp.toString("base64"),
    })),
    RegisteredDevices: checkpoint.registered,
  };
  return JSON.stringify({ Data: data, Checksum: deviceChecksum(data) });
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

export function parseDeviceCheckpoint(text: string): DeviceCheckpoint {
  const raw = JSON.parse(text) as { Data?: any; Checksum?: unknown };
  if (raw === null || typeof raw !== "object" || typeof raw.Data !== "object" || raw.Data === null) throw new Error("no Data");
  const entriesRaw = raw.Data.PodDeviceEntries;
  if (entriesRaw !== null && entriesRaw !== undefined && (!Array.isArray(entriesRaw) || entriesRaw.some((e: unknown) => e === null || typeof e !== "object" || Array.isArray(e)))) {
    throw new Error("Data.PodDeviceEntries: not a list of entries");
  }
  const registeredRaw = raw.Data.RegisteredDevices;
  if (registeredRaw !== undefined && (registeredRaw === null || typeof registeredRaw !== "object" || Array.isArray(registeredRaw))) throw new Error("Data.RegisteredDevices: not a map");
  if (raw.Checksum !== deviceChecksum(raw.Data as RawData)) throw new Error("checkpoint is corrupted (checksum does not match)");
  const entries: PodDeviceEntry[] = [];
  for (const e of Array.isArray(raw.Data.PodDeviceEntries) ? raw.Data.PodDeviceEntries : []) {
    if (e === null || typeof e !== "object") continue;
    const ids: string[] = [];
    for (const list of Object.values((e.DeviceIDs ?? {}) as Record<string, unknown>)) for (const id of strings(list)) if (!ids.includes(id)) ids.push(id);
    if (typeof e.PodUID !== "string" || typeof e.ContainerName !== "string" || typeof e.ResourceName !== "string" || ids.length === 0) continue;
    entries.push({ podUid: e.PodUID, containerName: e.ContainerName, resourceName: e.ResourceName, deviceIds: ids.sort(),
      allocResp: Buffer.from(typeof e.AllocResp === "string" ? e.AllocResp : "", "base64") });
  }
  const registered: Record<string, string[]> = {};
  for (const [name, ids] of Object.entries((raw.Data.RegisteredDevices ?? {}) as Record<string, unknown>)) registered[name] = strings(ids);
  return { entries, registered };
}

export class DeviceCheckpointFile {
  private state: StateFile;

  constructor(dir: string) {
    this.state = new StateFile(path.join(dir, DEVICE_CHECKPOINT_FILE));
  }

  get file(): string {
    return this.state.file;
  }

  read(): DeviceCheckpoint | undefined {
    const text = this.state.read();
    return text === undefined ? undefined : parseDeviceCheckpoint(text);
  }

  write(checkpoint: DeviceCheckpoint): void {
    this.state.write(formatDeviceCheckpoint(checkpoint));
  }
}

// `kubelet_internal_checkpoint`: which devices each container holds and what its plugin's Allocate
// answered, in upstream's layout (PodDeviceEntries with AllocResp as protobuf bytes,
// RegisteredDevices), so that a restart keeps every assignment and what to give the container.
import path from "node:path";
import { fnv32a, readStateFile, writeDurably } from "../hardware/durable-file.js";

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

/** The checksum nanolet writes: FNV-32a of the Data member's JSON (upstream's differs; see README). */
function checksumOf(dataText: string): number {
  return fnv32a(dataText);
}

export function formatDeviceCheckpoint(checkpoint: DeviceCheckpoint): string {
  const data = {
    PodDeviceEntries: checkpoint.entries.map((e) => ({
      PodUID: e.podUid, ContainerName: e.containerName, ResourceName: e.resourceName,
      // Devices by NUMA node; nanolet keeps them under -1 (no node), as upstream does without topology.
      DeviceIDs: { "-1": e.deviceIds }, AllocResp: e.allocResp.toString("base64"),
    })),
    RegisteredDevices: checkpoint.registered,
  };
  const dataText = JSON.stringify(data);
  return `{"Data":${dataText},"Checksum":${checksumOf(dataText)}}`;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

export function parseDeviceCheckpoint(text: string): DeviceCheckpoint {
  const raw = JSON.parse(text) as { Data?: any; Checksum?: unknown };
  if (raw === null || typeof raw !== "object" || typeof raw.Data !== "object" || raw.Data === null) throw new Error("no Data");
  if (raw.Checksum !== checksumOf(JSON.stringify(raw.Data))) throw new Error("checkpoint is corrupted (checksum does not match)");
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
  readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, DEVICE_CHECKPOINT_FILE);
  }

  read(): DeviceCheckpoint | undefined {
    const text = readStateFile(this.file);
    return text === undefined ? undefined : parseDeviceCheckpoint(text);
  }

  write(checkpoint: DeviceCheckpoint): void {
    writeDurably(this.file, formatDeviceCheckpoint(checkpoint));
  }
}

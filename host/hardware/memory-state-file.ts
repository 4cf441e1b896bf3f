// `memory_manager_state` in upstream's layout: the policy, each container's memory blocks (NUMA
// nodes, type, size) and a checksum. nanolet writes no machine state (upstream's per-node
// accounting) and checks the checksum it wrote itself.
import path from "node:path";
import type { HardwareState } from "../core/core.js";
import { StateFile, fnv32a } from "./durable-file.js";

export const MEMORY_STATE_FILE = "memory_manager_state";

type MemoryEntries = HardwareState["memory"];

export class MemoryStateFile {
  private state: StateFile;

  constructor(rootDir: string) {
    this.state = new StateFile(path.join(rootDir, MEMORY_STATE_FILE));
  }

  get file(): string {
    return this.state.file;
  }

  write(policyName: string, memory: MemoryEntries): void {
    const entries: Record<string, Record<string, { numaAffinity: number[]; type: string; size: number }[]>> = {};
    for (const m of memory) (entries[m.podUid] ??= {})[m.containerName] = [{ numaAffinity: [...m.numaNodes], type: "memory", size: Number(m.bytes) }];
    const body = { policyName, machineState: {}, entries };
    this.state.write(JSON.stringify({ ...body, checksum: fnv32a(JSON.stringify(body)) }));
  }

  read(policyName: string): MemoryEntries {
    const text = this.state.read();
    if (text === undefined) return [];
    const raw = JSON.parse(text) as { policyName?: unknown; machineState?: unknown; entries?: unknown; checksum?: unknown };
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new Error(`${this.file}: not a JSON object`);
    const body = { policyName: raw.policyName, machineState: raw.machineState, entries: raw.entries };
    if (raw.checksum !== fnv32a(JSON.stringify(body))) throw new Error(`${this.file}: checkpoint is corrupted (checksum does not match)`);
    if (raw.policyName !== policyName) {
      throw new Error(`[memorymanager] could not restore state from checkpoint: configured policy "${policyName}" differs from state checkpoint policy "${String(raw.policyName).slice(0, 64)}", please drain this node and delete the memory manager checkpoint file "${this.file}" before restarting Kubelet`);
    }
    const out: MemoryEntries = [];
    const entries = raw.entries;
    if (entries === null || typeof entries !== "object" || Array.isArray(entries)) throw new Error(`${this.file}: entries: not a map`);
    for (const [podUid, containers] of Object.entries(entries as Record<string, Record<string, { numaAffinity?: unknown; size?: unknown }[]>>)) {
      if (containers === null || typeof containers !== "object") continue;
      for (const [containerName, blocks] of Object.entries(containers)) {
        const block = Array.isArray(blocks) && blocks[0] !== null && typeof blocks[0] === "object" ? blocks[0] : undefined;
        const nodes = Array.isArray(block?.numaAffinity) ? block!.numaAffinity.filter((n): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) < 64) : [];
        const size = Number(block?.size ?? 0);
        if (nodes.length > 0 && Number.isSafeInteger(size) && size > 0) out.push({ podUid, containerName, numaNodes: Uint32Array.from(nodes), bytes: BigInt(size) });
      }
    }
    return out;
  }
}

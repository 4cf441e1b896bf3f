// `cpu_manager_state` in upstream's (v2) format: the policy, the shared pool and each container's
// exclusive CPUs, with upstream's checksum, so that a node moved between nanolet and the kubelet
// keeps its assignments. A file of another policy stops the start, as upstream refuses it.
import path from "node:path";
import { StateFile, fnv32a, goMap } from "./durable-file.js";

export const CPU_STATE_FILE = "cpu_manager_state";

export interface CpuState {
  policyName: string;
  defaultCpuSet: string;
  /** Pod uid, then container name, to a cpuset. */
  entries: Record<string, Record<string, string>>;
}

/** Upstream's checksum: FNV-32a of the checkpoint as its hashing prints the struct. */
export function cpuStateChecksum(state: CpuState): number {
  const pods: Record<string, string> = {};
  for (const uid of Object.keys(state.entries)) pods[uid] = goMap(state.entries[uid]);
  const text = `(*state.CPUManagerCheckpoint){PolicyName:(string)${state.policyName} DefaultCPUSet:(string)${state.defaultCpuSet} ` +
    `Entries:(map[string]map[string]string)${goMap(pods)} Checksum:(checksum.Checksum)0}`;
  return fnv32a(text);
}

export function formatCpuState(state: CpuState): string {
  const out: Record<string, unknown> = { policyName: state.policyName, defaultCpuSet: state.defaultCpuSet };
  if (Object.keys(state.entries).length > 0) out.entries = state.entries;
  out.checksum = cpuStateChecksum(state);
  return JSON.stringify(out);
}

/** Parses the file's text; throws with what is wrong. */
export function parseCpuState(text: string): CpuState {
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new Error("not a JSON object");
  const policyName = typeof raw.policyName === "string" ? raw.policyName : "";
  const defaultCpuSet = typeof raw.defaultCpuSet === "string" ? raw.defaultCpuSet : "";
  const entries: Record<string, Record<string, string>> = {};
  const rawEntries = raw.entries ?? {};
  if (rawEntries === null || typeof rawEntries !== "object" || Array.isArray(rawEntries)) throw new Error("entries: not an object");
  for (const [uid, containers] of Object.entries(rawEntries as Record<string, unknown>)) {
    if (containers === null || typeof containers !== "object" || Array.isArray(containers)) throw new Error(`entries.${uid.slice(0, 64)}: not an object`);
    entries[uid] = {};
    for (const [name, cpus] of Object.entries(containers as Record<string, unknown>)) {
      if (typeof cpus !== "string") throw new Error(`entries.${uid.slice(0, 64)}.${name.slice(0, 64)}: not a cpuset`);
      entries[uid][name] = cpus;
    }
  }
  const state = { policyName, defaultCpuSet, entries };
  const checksum = raw.checksum;
  // Upstream accepts a file without a checksum (written by its old file backend).
  if (checksum !== undefined && checksum !== 0 && checksum !== cpuStateChecksum(state)) {
    throw new Error(`checkpoint is corrupted (checksum ${String(checksum).slice(0, 20)} does not match ${cpuStateChecksum(state)})`);
  }
  return state;
}

export class CpuStateFile {
  private state: StateFile;

  constructor(rootDir: string) {
    this.state = new StateFile(path.join(rootDir, CPU_STATE_FILE));
  }

  get file(): string {
    return this.state.file;
  }

  /** The kept state for `policyName`; throws upstream's refusal when another policy wrote it. */
  read(policyName: string): CpuState | undefined {
    const text = this.state.read();
    if (text === undefined) return undefined;
    const state = parseCpuState(text);
    if (state.policyName !== policyName) {
      throw new Error(`could not restore state from checkpoint: configured policy "${policyName}" differs from state checkpoint policy ` +
        `"${state.policyName.slice(0, 64)}", please drain this node and delete the CPU manager checkpoint file "${this.file}" before restarting Kubelet`);
    }
    return state;
  }

  write(state: CpuState): void {
    this.state.write(formatCpuState(state));
  }
}

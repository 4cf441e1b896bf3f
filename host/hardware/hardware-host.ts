// The host's side of the CPU, memory and device managers: carries out the core's cpuset rewrites
// (CRI UpdateContainerResources with only the cpusets) and writes the state files whenever an
// assignment changes; at start, reads them back for the core.
import path from "node:path";
import type { Core, HardwareState } from "../core/core.js";
import type { PlannedAction } from "../core/types.js";
import type { Runtime } from "../cri/runtime.js";
import type { Logger } from "../common/log.js";
import type { DeviceManager } from "../devices/device-manager.js";
import { CpuStateFile, type CpuState } from "./cpu-state-file.js";
import { MemoryStateFile } from "./memory-state-file.js";

export interface HardwareHostOptions {
  core: () => Core | undefined;
  runtime: Runtime;
  log: Logger;
  rootDir: string;
  /** `none` or `static`, as the state file names it. */
  cpuPolicy: string;
  /** `None` or `Static`. */
  memoryPolicy: string;
  devices?: DeviceManager;
}

export class HardwareHost {
  private cpuFile: CpuStateFile;
  private memoryFile: MemoryStateFile;

  constructor(private options: HardwareHostOptions) {
    this.cpuFile = new CpuStateFile(options.rootDir);
    this.memoryFile = new MemoryStateFile(options.rootDir);
  }

  /**
   * The kept state, for the core after a restart; throws upstream's refusal when the CPU state
   * file was written under another policy (the node must be drained first).
   */
  keptState(): HardwareState {
    const cpu = this.cpuFile.read(this.options.cpuPolicy);
    const cpus = [];
    for (const [podUid, containers] of Object.entries(cpu?.entries ?? {})) {
      for (const [containerName, set] of Object.entries(containers)) cpus.push({ podUid, containerName, cpus: set });
    }
    let memory: HardwareState["memory"] = [];
    try {
      memory = this.memoryFile.read(this.options.memoryPolicy);
    } catch (error) {
      if (this.options.memoryPolicy === "Static") throw error;
      this.options.log.log("warn", "Ignoring the memory manager's state file", { error: (error as Error).message });
    }
    const devices = this.options.devices?.keptAssignments() ?? [];
    return { defaultCpus: cpu?.defaultCpuSet ?? "", cpus, devices, memory };
  }

  get devices(): DeviceManager | undefined {
    return this.options.devices;
  }

  /** Gives a (new) core what the state files kept and every plugin's devices. */
  restoreInto(core: Core, nowMs: number): void {
    core.restoreHardware?.(this.keptState());
    for (const [resource, devices] of this.options.devices?.deviceStates() ?? []) core.handleDevices?.(nowMs, resource, devices);
  }

  /** Carries out `hardware-state-changed` or `update-container-cpuset`. */
  handle(action: PlannedAction): void {
    const kind = action.kind;
    if (kind.tag === "hardware-state-changed") {
      this.writeState();
      return;
    }
    if (kind.tag !== "update-container-cpuset") return;
    const { containerId, cpusetCpus, cpusetMems } = kind.val;
    // Zero values leave the container's other limits as they are (the runtime changes only what is set).
    void this.options.runtime.updateContainerResources(containerId, {
      cpuShares: 0, cpuQuotaUs: 0, cpuPeriodUs: 0, memoryLimitBytes: 0, oomScoreAdj: 0, cpusetCpus, ...(cpusetMems ? { cpusetMems } : {}),
    }).catch((error: Error) => this.options.log.log("warn", "Could not update a container's cpuset; the next reconcile tries again", {
      pod: `${action.podNamespace}/${action.podName}`, container: kind.val.containerName, cpus: cpusetCpus, error: error.message,
    }));
  }

  writeState(): void {
    const state = this.options.core()?.hardwareState?.();
    if (!state) return;
    const entries: CpuState["entries"] = {};
    for (const a of state.cpus) (entries[a.podUid] ??= {})[a.containerName] = a.cpus;
    try {
      this.cpuFile.write({ policyName: this.options.cpuPolicy, defaultCpuSet: this.options.cpuPolicy === "static" ? state.defaultCpus : "", entries });
      this.memoryFile.write(this.options.memoryPolicy, state.memory);
    } catch (error) {
      this.options.log.log("error", "Cannot write the CPU or memory manager's state file", { dir: path.resolve(this.options.rootDir), error: (error as Error).message });
    }
    this.options.devices?.syncAssignments(state.devices);
  }
}

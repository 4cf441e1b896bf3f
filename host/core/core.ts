// Loads the core component and is the only place that speaks its bindings. Converts host numbers
// to the bindings' bigints, and turns a trap into a CoreTrapError carrying the core's reason.
import fs from "node:fs/promises";
import path from "node:path";
import { instantiate } from "../../build/out/core-js/nanolet-core.js";
import type { ActionResult, AgentConfig, GcPlan, NodeConfig, NodeStats, PackedSnapshot, PlannedAction, PodRejection, PodSpec, ProbeResult, RuntimeSnapshot } from "./types.js";
import { packSnapshot } from "./snapshot-packing.js";
import { CORE_BINDINGS_DIR } from "../common/asset-paths.js";
import { packNodeStats } from "./stats-packing.js";
import type { HardwareConfig, HardwareState } from "../../build/out/core-js/interfaces/nanolet-core-hardware.js";
import type { DeviceState } from "../devices/device-manager.js";
export type { HardwareConfig, HardwareState } from "../../build/out/core-js/interfaces/nanolet-core-hardware.js";

/** The directory holding the component's jco bindings and core modules. */
export const BINDINGS_DIR = CORE_BINDINGS_DIR;

/** The core trapped: the instance is gone; its reason is what the core reported, if anything. */
export class CoreTrapError extends Error {
  constructor(
    readonly call: string,
    readonly reason: string,
    readonly cause: unknown,
  ) {
    super(`core trapped in ${call}: ${reason}`);
    this.name = "CoreTrapError";
  }
}

export interface CoreConfig {
  nodeName: string;
  relistPeriodMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  workerErrorBackoffMs: number;
  /** `--max-pods`: active pods beyond it are refused (OutOfpods); default 110, 0 for no limit. */
  maxPods?: number;
  /** The node's resources and eviction flags, given with configure-node; none: no eviction. */
  node?: NodeSettings;
  /** Graceful node shutdown's settings; none: off. */
  nodeShutdown?: NodeShutdownSettings;
  /** The topology, CPU and memory managers and the machine they place on. */
  hardware?: HardwareConfig;
}

/** WIT `node-config` in plain numbers (see wit/node.wit). */
export interface NodeSettings {
  memoryCapacityBytes: number;
  allocatableMemoryBytes: number;
  allocatableCpuMilli: number;
  evictionHard: string;
  evictionSoft: string;
  evictionSoftGracePeriod: string;
  evictionMinimumReclaim: string;
  evictionPressureTransitionPeriodMs: number;
  evictionMaxPodGracePeriodSeconds: number;
  evictionIntervalMs: number;
}

/** The kubelet's defaults on Linux (pkg/kubelet/apis/config/v1beta1/defaults_linux.go). */
export const DEFAULT_EVICTION_HARD = "memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%";

/** The eviction flags were refused by the core (upstream's words in `message`). */
export class NodeConfigError extends Error {
  constructor(message: string) {
    super(`invalid eviction settings: ${message}`);
    this.name = "NodeConfigError";
  }
}

/** The kubelet's `--max-pods` default. */
export const DEFAULT_MAX_PODS = 110;

export const DEFAULT_CORE_CONFIG: Omit<CoreConfig, "nodeName"> = {
  relistPeriodMs: 1000,
  backoffInitialMs: 10_000,
  backoffMaxMs: 300_000,
  workerErrorBackoffMs: 10_000,
};

let compiled: Map<string, WebAssembly.Module> | undefined;

/**
 * Gives the component's compiled core modules by file name, for hosts without the build
 * directory on a filesystem (the simulator report page, which carries them inline).
 */
export function useCoreModules(map: Map<string, WebAssembly.Module>): void {
  compiled = map;
}

/** Compiles the component's core modules once per process; instances are cheap after that. */
async function modules(): Promise<Map<string, WebAssembly.Module>> {
  if (compiled) return compiled;
  const names = (await fs.readdir(BINDINGS_DIR)).filter((n) => n.endsWith(".wasm"));
  const map = new Map<string, WebAssembly.Module>();
  for (const name of names) map.set(name, await WebAssembly.compile(new Uint8Array(await fs.readFile(path.join(BINDINGS_DIR, name)))));
  compiled = map;
  return map;
}

function checkU64(name: string, value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  return BigInt(value);
}

function checkU32(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${name} must be an integer in 0..4294967295, got ${value}`);
  return value;
}

type Bindings = Awaited<ReturnType<typeof instantiate>>;

/** Instantiates the whole component; `abiCheck` and the agent constructor come from it. */
export async function loadComponent(): Promise<{ bindings: Bindings; lastTrap: () => string }> {
  const mods = await modules();
  let trapReason = "";
  const diagnostics = {
    reportTrap(message: string, file: string, line: number, column: number) {
      trapReason = `${message} (${file}:${line}:${column})`;
    },
  };
  // jco looks the import up without its version; the typed ImportObject names it with one.
  const imports = { "nanolet:core/diagnostics": diagnostics, "nanolet:core/diagnostics@0.1.0": diagnostics };
  const bindings = await instantiate((name) => mods.get(name)!, imports);
  return { bindings, lastTrap: () => trapReason };
}

/**
 * What a host needs of a core: the calls of the WIT `agent` resource that the agent loop and
 * the simulator make. A CoreAgent is one; a recording wrapper (trace/recording-core.ts) is another.
 */
export interface Core {
  handlePods(nowMs: number, pods: PodSpec[]): PodRejection[];
  /** A relist's snapshot; `packed` is the same snapshot already packed, when the caller has it. */
  handleSnapshot(nowMs: number, snapshot: RuntimeSnapshot, packed?: PackedSnapshot): void;
  handleActionResults(nowMs: number, results: ActionResult[]): void;
  /** Outcomes of run-probe actions. */
  handleProbeResults(nowMs: number, results: ProbeResult[]): void;
  pollActions(nowMs: number): PlannedAction[];
  /** Next time (host ms) the core wants to be polled, or undefined. */
  pollDeadline(): number | undefined;
  /** One stats pass (eviction monitoring). */
  handleNodeStats(nowMs: number, stats: NodeStats): void;
  /** The crash-loop back-off in force at `nowMs`, for the host's checkpoint. */
  backOffs?(nowMs: number): BackOffEntry[];
  /** Checkpointed back-off given back to a new core, before its first relist. */
  restoreBackOffs?(nowMs: number, entries: BackOffEntry[]): void;
  /** The runtime pushed a container change: the core relists at its next poll. */
  handleRuntimeEvent?(nowMs: number): void;
  handleEventStream?(nowMs: number, streaming: boolean): void;
  /** The image collector's decision (WIT image-gc `plan`); throws ImageGcRefusal with the core's words. */
  planImageGc?(request: ImageGcRequest): GcPlan;
  /** Graceful node shutdown's settings; returns the delay the lock must hold (ms), 0 for off. */
  configureNodeShutdown?(settings: NodeShutdownSettings): number;
  /** logind announced a shutdown (true) or its cancellation (false). */
  handleNodeShutdown?(nowMs: number, shuttingDown: boolean): void;
  /** Whether the node is shutting down (its Ready condition says so). */
  nodeShuttingDown?(): boolean;
  /** A device plugin's devices (an empty list: the plugin went away). */
  handleDevices?(nowMs: number, resource: string, devices: DeviceState[]): void;
  /** What the state files kept, given back after a restart (before the first pods). */
  restoreHardware?(state: HardwareState): void;
  /** What the CPU, memory and device managers hold now (undefined from a core that cannot say). */
  hardwareState?(): HardwareState | undefined;
}

/** shutdownGracePeriod, shutdownGracePeriodCriticalPods and shutdownGracePeriodByPodPriority, in seconds. */
export interface NodeShutdownSettings {
  gracePeriodSeconds: number;
  criticalPodsSeconds: number;
  byPodPriority: { priority: number; gracePeriodSeconds: number }[];
}

/** What the image collector asks of the core, in host numbers (WIT image-gc `plan`'s arguments). */
export interface ImageGcRequest {
  images: { id: string; sizeBytes: number; inUse: boolean; pinned: boolean; firstDetectedMs: number; lastUsedMs: number }[];
  capacityBytes: number;
  availableBytes: number;
  policy: { highThresholdPercent: number; lowThresholdPercent: number; minimumAgeMs: number; maximumAgeMs: number };
  nowMs: number;
  beganMs: number;
  reclaimAll: boolean;
}

/** The core refused an image-gc request (upstream's words, e.g. `invalid capacity 0 on image filesystem`). */
export class ImageGcRefusal extends Error {}

/** One container's crash-loop back-off (WIT `back-off-checkpoint`), in host numbers. */
export interface BackOffEntry {
  key: string;
  durationMs: number;
  lastUpdateMs: number;
}

/** One core agent instance. After a CoreTrapError it is dead: make a new one. */
export class CoreAgent implements Core {
  private constructor(
    private agent: InstanceType<Bindings["agentApi"]["Agent"]>,
    private lastTrap: () => string,
    private imageGc: Bindings["imageGc"],
  ) {}

  static async create(config: CoreConfig): Promise<CoreAgent> {
    const { bindings, lastTrap } = await loadComponent();
    const agent = new bindings.agentApi.Agent({
      nodeName: config.nodeName,
      relistPeriodMs: checkU64("relistPeriodMs", config.relistPeriodMs),
      backoffInitialMs: checkU64("backoffInitialMs", config.backoffInitialMs),
      backoffMaxMs: checkU64("backoffMaxMs", config.backoffMaxMs),
      workerErrorBackoffMs: checkU64("workerErrorBackoffMs", config.workerErrorBackoffMs),
      maxPods: checkU32("maxPods", config.maxPods ?? DEFAULT_MAX_PODS),
    } satisfies AgentConfig);
    const core = new CoreAgent(agent, lastTrap, bindings.imageGc);
    if (config.node) core.configureNode(config.node);
    if (config.nodeShutdown) core.configureNodeShutdown(config.nodeShutdown);
    if (config.hardware) core.configureHardware(config.hardware);
    return core;
  }

  /** The topology, CPU and memory managers' settings; throws NodeConfigError with the core's words. */
  configureHardware(config: HardwareConfig): void {
    try {
      this.agent.configureHardware(config);
    } catch (error) {
      const payload = (error as { payload?: unknown }).payload;
      if (typeof payload === "string") throw new NodeConfigError(payload);
      throw new CoreTrapError("configure-hardware", this.lastTrap() || String(error), error);
    }
  }

  handleDevices(nowMs: number, resource: string, devices: DeviceState[]): void {
    const now = checkU64("nowMs", nowMs);
    const list = devices.map((d) => ({ id: d.id, healthy: d.healthy, numaNodes: Uint32Array.from(d.numaNodes) }));
    this.guard("handle-devices", () => this.agent.handleDevices(now, resource, list));
  }

  restoreHardware(state: HardwareState): void {
    this.guard("restore-hardware", () => this.agent.restoreHardware(state));
  }

  hardwareState(): HardwareState {
    return this.guard("hardware-state", () => this.agent.hardwareState());
  }

  /** Gives the node's settings; throws NodeConfigError with the core's words when refused. */
  configureNode(node: NodeSettings): void {
    const config: NodeConfig = {
      memoryCapacityBytes: checkU64("memoryCapacityBytes", node.memoryCapacityBytes),
      allocatableMemoryBytes: checkU64("allocatableMemoryBytes", node.allocatableMemoryBytes),
      allocatableCpuMilli: checkU64("allocatableCpuMilli", node.allocatableCpuMilli),
      evictionHard: node.evictionHard,
      evictionSoft: node.evictionSoft,
      evictionSoftGracePeriod: node.evictionSoftGracePeriod,
      evictionMinimumReclaim: node.evictionMinimumReclaim,
      evictionPressureTransitionPeriodMs: checkU64("evictionPressureTransitionPeriodMs", node.evictionPressureTransitionPeriodMs),
      evictionMaxPodGracePeriodSeconds: BigInt(Math.trunc(node.evictionMaxPodGracePeriodSeconds)),
      evictionIntervalMs: checkU64("evictionIntervalMs", node.evictionIntervalMs),
    };
    try {
      this.agent.configureNode(config);
    } catch (error) {
      // jco throws the `err` case as a ComponentError carrying the string as its payload.
      const payload = (error as { payload?: unknown }).payload;
      if (typeof payload === "string") throw new NodeConfigError(payload);
      if (error instanceof RangeError || error instanceof TypeError) throw error;
      throw new CoreTrapError("configure-node", this.lastTrap() || String(error), error);
    }
  }

  /** A stats pass the fast way: packed into typed arrays (see core/stats-packing.ts). */
  handleNodeStats(nowMs: number, stats: NodeStats): void {
    const now = checkU64("nowMs", nowMs);
    const packed = packNodeStats(stats);
    this.guard("handle-node-stats-packed", () => this.agent.handleNodeStatsPacked(now, packed));
  }

  /** The same stats as a record list (handle-node-stats): the slow path, for tests and benchmarks. */
  handleNodeStatsTyped(nowMs: number, stats: NodeStats): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-node-stats", () => this.agent.handleNodeStats(now, stats));
  }

  private guard<T>(call: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof RangeError || error instanceof TypeError) throw error; // host bug, not a trap
      throw new CoreTrapError(call, this.lastTrap() || String(error), error);
    }
  }

  handlePods(nowMs: number, pods: PodSpec[]): PodRejection[] {
    const now = checkU64("nowMs", nowMs);
    // A pod-spec made before `overhead` existed (a recording, a test) has none.
    const lowered = pods.map((p) => (p.overhead ? p : { ...p, overhead: [] }));
    return this.guard("handle-pods", () => this.agent.handlePods(now, lowered));
  }

  handleRelist(nowMs: number, snapshot: RuntimeSnapshot): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-relist", () => this.agent.handleRelist(now, snapshot));
  }

  /** The fast path: the same snapshot packed into typed arrays (see core/snapshot-packing.ts). */
  handleRelistPacked(nowMs: number, snapshot: PackedSnapshot): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-relist-packed", () => this.agent.handleRelistPacked(now, snapshot));
  }

  /** Sends a relist the fast way: packed into typed arrays unless already packed. */
  handleSnapshot(nowMs: number, snapshot: RuntimeSnapshot, packed?: PackedSnapshot): void {
    this.handleRelistPacked(nowMs, packed ?? packSnapshot(snapshot));
  }

  handleActionResults(nowMs: number, results: ActionResult[]): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-action-results", () => this.agent.handleActionResults(now, results));
  }

  handleProbeResults(nowMs: number, results: ProbeResult[]): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-probe-results", () => this.agent.handleProbeResults(now, results));
  }

  pollActions(nowMs: number): PlannedAction[] {
    const now = checkU64("nowMs", nowMs);
    return this.guard("poll-actions", () => this.agent.pollActions(now));
  }

  /** Next time (host ms) the core wants to be polled, or undefined. */
  pollDeadline(): number | undefined {
    const deadline = this.guard("poll-deadline", () => this.agent.pollDeadline());
    return deadline === undefined ? undefined : Number(deadline);
  }

  backOffs(nowMs: number): BackOffEntry[] {
    const now = checkU64("nowMs", nowMs);
    return this.guard("back-offs", () => this.agent.backOffs(now)).map((e) => ({ key: e.key, durationMs: Number(e.durationMs), lastUpdateMs: Number(e.lastUpdateMs) }));
  }

  handleRuntimeEvent(nowMs: number): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-runtime-event", () => this.agent.handleRuntimeEvent(now));
  }

  handleEventStream(nowMs: number, streaming: boolean): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-event-stream", () => this.agent.handleEventStream(now, streaming));
  }

  configureNodeShutdown(settings: NodeShutdownSettings): number {
    const groups = settings.byPodPriority.map((g) => ({ priority: g.priority | 0, gracePeriodSeconds: BigInt(Math.trunc(g.gracePeriodSeconds)) }));
    const grace = BigInt(Math.trunc(settings.gracePeriodSeconds));
    const critical = BigInt(Math.trunc(settings.criticalPodsSeconds));
    return Number(this.guard("configure-node-shutdown", () => this.agent.configureNodeShutdown(grace, critical, groups)));
  }

  handleNodeShutdown(nowMs: number, shuttingDown: boolean): void {
    const now = checkU64("nowMs", nowMs);
    this.guard("handle-node-shutdown", () => this.agent.handleNodeShutdown(now, shuttingDown));
  }

  nodeShuttingDown(): boolean {
    return this.guard("node-shutting-down", () => this.agent.nodeShuttingDown());
  }

  restoreBackOffs(nowMs: number, entries: BackOffEntry[]): void {
    const now = checkU64("nowMs", nowMs);
    const lowered = entries.map((e) => ({ key: e.key, durationMs: checkU64("durationMs", e.durationMs), lastUpdateMs: checkU64("lastUpdateMs", e.lastUpdateMs) }));
    this.guard("restore-back-offs", () => this.agent.restoreBackOffs(now, lowered));
  }

  planImageGc(request: ImageGcRequest): GcPlan {
    const images = request.images.map((i) => ({
      id: i.id, sizeBytes: checkU64("sizeBytes", i.sizeBytes), inUse: i.inUse, pinned: i.pinned,
      firstDetectedMs: checkU64("firstDetectedMs", i.firstDetectedMs), lastUsedMs: checkU64("lastUsedMs", i.lastUsedMs),
    }));
    const p = request.policy;
    const policy = { highThresholdPercent: p.highThresholdPercent, lowThresholdPercent: p.lowThresholdPercent, minimumAgeMs: checkU64("minimumAgeMs", p.minimumAgeMs), maximumAgeMs: checkU64("maximumAgeMs", p.maximumAgeMs) };
    const args = [checkU64("capacityBytes", request.capacityBytes), checkU64("availableBytes", request.availableBytes), policy, checkU64("nowMs", request.nowMs), checkU64("beganMs", request.beganMs)] as const;
    try {
      return this.imageGc.plan(images, args[0], args[1], args[2], args[3], args[4], request.reclaimAll);
    } catch (error) {
      const payload = (error as { payload?: unknown }).payload;
      if (typeof payload === "string") throw new ImageGcRefusal(payload);
      if (error instanceof RangeError || error instanceof TypeError) throw error;
      throw new CoreTrapError("image-gc-plan", this.lastTrap() || String(error), error);
    }
  }
}

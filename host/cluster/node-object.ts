// The Node object and its status, built from machine facts, the runtime's state and the PLEG's
// health. Pure: times come in as arguments. Condition reasons and messages are upstream's
// (pkg/kubelet/nodestatus/setters.go).
import type { ImageInfo } from "../cri/runtime.js";
import type { MachineInfo } from "../node/machine.js";
import { PLEG_UNHEALTHY_AFTER_MS } from "../common/pleg-policy.js";
import { nodeResources, type ReservationSettings } from "../node/allocatable.js";
import { DEFAULT_EVICTION_HARD_MAP } from "../config/kubelet-config.js";

/** Upstream's version it follows, with nanolet as build metadata (as K3s does): version checks see 1.36.2. */
export const KUBELET_VERSION = "v1.36.2+nanolet";
export const MAX_PODS = 110;

export interface NodeHealth {
  /** CRI Status answered with RuntimeReady; undefined when the runtime did not answer. */
  runtimeReady?: boolean;
  networkReady?: boolean;
  networkMessage?: string;
  runtimeVersion?: string;
  runtimeName?: string;
  /** When the last relist succeeded, host ms (0 if never). */
  lastRelistOkMs: number;
  /** How old that relist may be before the PLEG is unhealthy (PLEG_UNHEALTHY_AFTER_MS by default). */
  plegThresholdMs?: number;
  /** The kubelet API's port (--port), which the Node advertises. */
  kubeletPort?: number;
  /** logind announced a shutdown and the node is stopping its pods (the Ready condition says so). */
  shuttingDown?: boolean;
  /** The eviction manager's pressure conditions (all false when unknown). */
  pressure?: { memory: boolean; disk: boolean; pid: boolean };
  /** What allocatable keeps aside: reservations, hard eviction thresholds, `--max-pods`; upstream's defaults if unset. */
  reservations?: ReservationSettings;
  /** The runtime's images (CRI ListImages), for status.images; undefined before the first list. */
  images?: ImageInfo[];
  /** Device plugins' resources: capacity counts every device, allocatable the healthy ones. */
  extendedResources?: { resource: string; capacity: number; allocatable: number }[];
}

/** Upstream's nodeStatusMaxImages and MaxNamesPerImageInNodeStatus. */
const MAX_NODE_IMAGES = 50;
const MAX_NAMES_PER_IMAGE = 5;

/** status.images as the kubelet writes it: largest first, digests then tags, at most 50 and 5 names each. */
export function nodeImages(images: ImageInfo[]): { names: string[]; sizeBytes: number }[] {
  return [...images]
    .filter((i) => i.repoDigests.length + i.repoTags.length > 0)
    .sort((a, b) => b.sizeBytes - a.sizeBytes || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, MAX_NODE_IMAGES)
    .map((i) => ({ names: [...i.repoDigests, ...i.repoTags].slice(0, MAX_NAMES_PER_IMAGE), sizeBytes: i.sizeBytes }));
}

export interface NodeCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** What allocatable keeps aside when the caller gives nothing: upstream's default thresholds alone. */
const DEFAULT_RESERVATIONS: ReservationSettings = {
  systemReserved: {},
  kubeReserved: {},
  reservedSystemCPUs: "",
  evictionHard: DEFAULT_EVICTION_HARD_MAP,
  maxPods: MAX_PODS,
};

function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

/**
 * Why the PLEG is unhealthy (its last successful relist is older than 3 min, or 10 min while
 * runtime events drive the relists), in upstream's words, or undefined; before the first relist
 * it is not judged. The Ready condition and /healthz/syncloop both say it.
 */
export function plegProblem(lastRelistOkMs: number, nowMs: number, thresholdMs = PLEG_UNHEALTHY_AFTER_MS): string | undefined {
  const sinceMs = nowMs - lastRelistOkMs;
  if (lastRelistOkMs === 0 || sinceMs <= thresholdMs) return undefined;
  return `pleg was last seen active ${formatDuration(sinceMs)} ago; threshold is ${formatDuration(thresholdMs)}`;
}

/** The Ready condition's status, reason and message. */
export function readyCondition(health: NodeHealth, nowMs: number): NodeCondition {
  const problems: string[] = [];
  if (health.runtimeReady === undefined) problems.push("container runtime is down");
  else if (!health.runtimeReady) problems.push("container runtime status check may not have completed yet");
  if (health.runtimeReady !== undefined && health.networkReady === false) {
    problems.push(`container runtime network not ready: NetworkReady=false${health.networkMessage ? ` message:${health.networkMessage}` : ""}`);
  }
  const pleg = plegProblem(health.lastRelistOkMs, nowMs, health.plegThresholdMs);
  if (pleg !== undefined) problems.push(`PLEG is not healthy: ${pleg}`);
  // The node shutdown manager's error comes last, as upstream aggregates them.
  if (health.shuttingDown) problems.push("node is shutting down");
  if (problems.length > 0) return { type: "Ready", status: "False", reason: "KubeletNotReady", message: problems.join(", ") };
  return { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" };
}

/** Conditions in upstream's order, the pressure ones as the core's eviction manager decided. */
export function nodeConditions(health: NodeHealth, nowMs: number): NodeCondition[] {
  const p = health.pressure ?? { memory: false, disk: false, pid: false };
  return [
    p.memory
      ? { type: "MemoryPressure", status: "True", reason: "KubeletHasInsufficientMemory", message: "kubelet has insufficient memory available" }
      : { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available" },
    p.disk
      ? { type: "DiskPressure", status: "True", reason: "KubeletHasDiskPressure", message: "kubelet has disk pressure" }
      : { type: "DiskPressure", status: "False", reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure" },
    p.pid
      ? { type: "PIDPressure", status: "True", reason: "KubeletHasInsufficientPID", message: "kubelet has insufficient PID available" }
      : { type: "PIDPressure", status: "False", reason: "KubeletHasSufficientPID", message: "kubelet has sufficient PID available" },
    readyCondition(health, nowMs),
  ];
}

/** Carries heartbeat and transition times: a condition keeps its transition time while its status holds. */
export function stampConditions(next: NodeCondition[], previous: NodeCondition[] | undefined, nowIso: string): NodeCondition[] {
  return next.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    return { ...c, lastHeartbeatTime: nowIso, lastTransitionTime: before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : nowIso };
  });
}

/**
 * A runtime version as the kubelet reports it: the leading numeric components only (upstream's
 * ParseGeneric), so Debian's `1.6.20~ds1` is `1.6.20`.
 */
export function genericVersion(version: string): string {
  const m = /^v?(\d+(?:\.\d+)*)/.exec(version.trim());
  return m ? m[1] : version;
}

/** The Node's status without times: what is compared to decide whether to report. */
export function nodeStatus(nodeName: string, machine: MachineInfo, health: NodeHealth, nowMs: number): Record<string, any> {
  return {
    ...withExtendedResources(capacityAndAllocatable(machine, health.reservations ?? DEFAULT_RESERVATIONS), health.extendedResources ?? []),
    conditions: nodeConditions(health, nowMs),
    addresses: [
      ...(machine.internalIps ?? [machine.internalIp]).map((address) => ({ type: "InternalIP", address })),
      { type: "Hostname", address: nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: health.kubeletPort ?? 10250 } },
    ...(health.images ? { images: nodeImages(health.images) } : {}),
    nodeInfo: {
      machineID: machine.machineId,
      systemUUID: machine.systemUuid,
      bootID: machine.bootId,
      kernelVersion: machine.kernelVersion,
      osImage: machine.osImage,
      containerRuntimeVersion: health.runtimeName ? `${health.runtimeName}://${genericVersion(health.runtimeVersion ?? "")}` : "",
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: machine.architecture,
    },
  };
}

/** The labels the kubelet gives its Node: hostname, OS and architecture (and their beta names). */
export function defaultNodeLabels(nodeName: string, architecture: string): Record<string, string> {
  return {
    "kubernetes.io/hostname": nodeName,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": architecture,
    "beta.kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": architecture,
  };
}

/** The Node object to register. */
export function nodeObject(nodeName: string, machine: MachineInfo, status: Record<string, any>, providerId?: string): Record<string, any> {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: nodeName,
      labels: defaultNodeLabels(nodeName, machine.architecture),
      annotations: { "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
    spec: providerId ? { providerID: providerId } : {},
    status,
  };
}

function withExtendedResources(
  base: { capacity: Record<string, string>; allocatable: Record<string, string> },
  extended: { resource: string; capacity: number; allocatable: number }[],
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity = { ...base.capacity }, allocatable = { ...base.allocatable };
  for (const r of extended) {
    capacity[r.resource] = String(r.capacity);
    allocatable[r.resource] = String(r.allocatable);
  }
  return { capacity, allocatable };
}

function capacityAndAllocatable(machine: MachineInfo, reservations: ReservationSettings): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const { capacity, allocatable } = nodeResources(machine, reservations);
  return { capacity, allocatable };
}

// What a scenario file says, once read (scenario.ts reads and checks it): the simulated node, its
// pods and their behaviour, faults, the timeline and the expectations.
import type { ScenarioHardware } from "./sim-hardware.js";
import type { DurationRange } from "./duration.js";

/** CRI calls a fault can name; `*` names them all. */
export const CRI_CALLS = [
  "RunPodSandbox",
  "StopPodSandbox",
  "RemovePodSandbox",
  "CreateContainer",
  "StartContainer",
  "StopContainer",
  "RemoveContainer",
  "ImageStatus",
  "PullImage",
  "ListPodSandbox",
  "ListContainers",
  "ContainerStatus",
  "UpdateContainerResources",
] as const;
export type CriCall = (typeof CRI_CALLS)[number];

export const POD_PHASES = ["Pending", "Running", "Succeeded", "Failed", "Unknown"] as const;

/** How a simulated container's process behaves. */
export interface ContainerBehaviour {
  /** Exits on its own this long after it starts; undefined runs until stopped. */
  exitAfter?: DurationRange;
  /** Exit code when it exits on its own. */
  exitCode: number;
  /** How long it takes to exit after SIGTERM. */
  stopAfter: DurationRange;
  /** Ignores SIGTERM: only the kill at the end of the grace period stops it. */
  ignoreSigterm: boolean;
  /** Memory working set while it runs, bytes (a `memory` timeline entry changes it). */
  memoryBytes: number;
  /** Liveness and readiness probes fail once it has run this long (until it restarts). */
  healthyFor?: DurationRange;
  /** Its startup probe fails until it has run this long. */
  startupAfter?: DurationRange;
  /** The share of its probes that time out (a failure), 0 to 1. */
  probeTimeouts: number;
}

/** The node's memory and the kubelet's eviction flags; without it, no stats pass is made. */
export interface ScenarioMemory {
  capacityBytes: number;
  /** What the system outside pods uses. */
  systemBytes: number;
  evictionHard: string;
  evictionSoft: string;
  evictionSoftGracePeriod: string;
  evictionMinimumReclaim: string;
  /** The stats pass (and eviction) interval. */
  intervalMs: number;
  transitionPeriodMs: number;
  maxPodGracePeriodSeconds: number;
}

export interface ScenarioPod {
  /** The manifest's `metadata.name`, which the timeline and expectations use. */
  key: string;
  manifest: Record<string, unknown>;
  behaviour: Record<string, ContainerBehaviour>;
}

export interface CallFault {
  call: CriCall | "*";
  /** Probability that a call fails with an error. */
  error: number;
  /** Probability that a call times out (it may or may not have taken effect). */
  timeout: number;
  /** Probability that a call is slow (ten times its latency). */
  slow: number;
  forMs: number;
}

export type TimelineAction =
  | { type: "exit"; pod: string; container: string; code: number }
  /** The pod's sandbox dies (its pause process killed): its containers with it. */
  | { type: "sandboxDies"; pod: string }
  | { type: "fault"; fault: CallFault }
  | { type: "relistFault"; lose: number; duplicate: number; forMs: number }
  | { type: "runtimeRestart"; downMs: number }
  | { type: "agentRestart"; downMs: number }
  | { type: "add"; pod: ScenarioPod }
  | { type: "update"; pod: ScenarioPod }
  | { type: "delete"; pod: string; graceSeconds?: number }
  | { type: "suspend"; forMs: number }
  | { type: "memory"; pod: string; container: string; bytes: number }
  /** What the image filesystem holds besides images changes (a log, a download): bytes from now on. */
  | { type: "diskUsed"; bytes: number }
  | { type: "nodeShutdown"; active: boolean };

export interface TimelineEntry {
  atMs: number;
  action: TimelineAction;
}

export interface Expectation {
  /** Checked exactly at this time... */
  atMs?: number;
  /** ...or met at some moment up to this time. */
  byMs?: number;
  pod: string;
  phase?: string;
  /** Exact restart count per container, from the published status. */
  restarts?: Record<string, number>;
  minRestarts?: Record<string, number>;
  /** Waiting reason per container, from the published status ("" for none). */
  reason?: Record<string, string>;
  /** Containers that must be running in the runtime. */
  running?: string[];
  notRunning?: string[];
  /** No sandbox or container of the pod is left in the runtime. */
  gone?: boolean;
  /** The pod's own reason, from the published status (`Evicted`; "" for none). */
  podReason?: string;
  /** Images the runtime must hold, and must not. */
  imagesPresent?: string[];
  imagesGone?: string[];
  /** Line shown when it fails. */
  text: string;
}

/** The image filesystem and the kubelet's image GC settings; none: no image collection. */
export interface ScenarioImageGc {
  capacityBytes: number;
  /** Bytes it holds besides images (a `diskUsed` timeline entry changes it). */
  otherBytes: number;
  /** Size of each image by name; others `defaultSizeBytes`. */
  sizes: Record<string, number>;
  defaultSizeBytes: number;
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minimumAgeMs: number;
  maximumAgeMs: number;
  periodMs: number;
}

export interface Scenario {
  name: string;
  description: string;
  /** Where it came from, for error messages and reproduce commands. */
  file: string;
  durationMs: number;
  nodeName: string;
  relistPeriodMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  workerErrorBackoffMs: number;
  /** Latency of each CRI call; `default` for the ones not named. */
  latency: Record<string, DurationRange>;
  /** The host's deadline for one CRI call. */
  criTimeoutMs: number;
  /**
   * Where the pods come from. `file`: static pods; a delete removes the pod at once.
   * `apiserver`: a delete marks the pod (deletionGracePeriodSeconds) and the pod leaves only once
   * the core reports it finished, as the status manager then deletes it; a terminal phase the core
   * publishes comes back on the pod (reported-terminal-phase), as the watch shows it.
   */
  source: "file" | "apiserver";
  /** The node's memory and eviction settings; none: no stats, no eviction. */
  memory?: ScenarioMemory;
  /** Images the registry does not have. */
  missingImages: string[];
  /** Images present before the run; every other image is pulled on first use. */
  preloadedImages: string[] | "all";
  /** Graceful node shutdown's settings (shutdownGracePeriod... in seconds); none: off. */
  shutdown?: { gracePeriodSeconds: number; criticalPodsSeconds: number; byPodPriority: { priority: number; gracePeriodSeconds: number }[] };
  /** The machine's CPUs, the CPU and topology policies and device plugins; none: no placement. */
  hardware?: ScenarioHardware;
  /** The image filesystem and image GC; none: images are never collected. */
  imageGc?: ScenarioImageGc;
  pods: ScenarioPod[];
  timeline: TimelineEntry[];
  expect: Expectation[];
  /**
   * Run the host's executor as it was at dcdf406, where a StopContainer held one of the 8 slots
   * for its whole grace period: kept so that a test shows the deletion invariant catches it.
   */
  stopsHoldSlots: boolean;
  /** How the host's volume set-up behaves: how long it takes, how often it fails (0 to 1). */
  volumes: { latency: DurationRange; failure: number };
  /**
   * Changes the runtime pushes, as host/cri/runtime-events.ts hears them. `none`: relists only.
   * `exits`: containerd 1.6's task exits, each lost with probability `lose`; the relist period
   * stays. `stream`: CRI GetContainerEvents, every change, the relist slowed to five minutes
   * while the stream is up; a runtime restart breaks it (the fifth break gives it up, leaving
   * exits). A stream loses no event while up: a lost one would wait for the five-minute relist.
   * Any source may deliver an event twice (`duplicate`, a probability: a reconnecting stream
   * replays) or late (`late`, a probability: held up past the relist that saw the change, by a
   * delay from `lateLatency`).
   */
  runtimeEvents: { source: "none" | "exits" | "stream"; lose: number; latency: DurationRange; duplicate: number; late: number; lateLatency: DurationRange };
  /** The order the runtime lists in: the same every relist, or a new one each time (containerd's
   * CRI lists walk a Go map). */
  listOrder: "stable" | "shuffled";
}

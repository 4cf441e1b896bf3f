// What the agent loop is given (the runtime, the core's configuration, the node's managers) and
// what it says back about pods it refused: the loop's interface to `cli/run.ts` and the tests.
import type { HardwareHost } from "../hardware/hardware-host.js";
import type { NodePressure, PlannedAction } from "../core/types.js";
import type { Core, CoreConfig } from "../core/core.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { PodRuntimeSettings } from "../pod-runtime/runtime-settings.js";
import type { Logger } from "../common/log.js";
import type { PodTable } from "./pod-table.js";
import type { RelistCounts } from "../relist/relister.js";
import type { Runtime } from "../cri/runtime.js";
import type { CgroupManager } from "../node/cgroup-manager.js";
import type { StatsCollector } from "../node/stats.js";
import type { VolumeManager } from "../volumes/volume-manager.js";
import type { ObjectStore } from "../volumes/object-store.js";
import type { TokenManager } from "../volumes/token-manager.js";
import type { ContainerLogLinks } from "../logs/log-links.js";

import type { ImageManager } from "../images/image-manager.js";

export interface AgentLoopOptions {
  /** The CPU, memory and device managers' host (cpuset rewrites, state files); none: not placed. */
  hardware?: HardwareHost;
  runtime: Runtime;
  core: CoreConfig;
  log: Logger;
  podTable: PodTable;
  podLogsDir: string;
  /** Root of the cgroup file system; pod cgroups are removed under it. */
  cgroupRoot?: string;
  concurrency?: number;
  nowMs?: () => number;
  /** Called with every action the core emits (tests and recording). */
  onAction?: (action: PlannedAction) => void;
  /** A relist succeeded: when it started and ended (ms), and what it saw (PLEG metrics). */
  onRelist?: (startMs: number, endMs: number, counts: RelistCounts) => void;
  /** A trapped core was replaced: its successor numbers pod status versions from 1 again. */
  onCoreReplaced?: () => void;
  /**
   * The crash-loop back-off, checkpointed after each relist and given back to the core at start,
   * so that an agent restart does not restart every crash-looping container at once.
   */
  backOffCheckpoints?: CheckpointStore;
  /** Makes a core instance; tests wrap it to inject faults, `--record` to record its inputs. */
  createCore?: (config: CoreConfig) => Promise<Core>;
  /** Pod cgroups with the core's values (created before each sandbox, rewritten on resize). */
  cgroups?: CgroupManager;
  /** Node stats for the eviction manager, taken every `statsIntervalMs` (kubelet: 10 s). */
  stats?: StatsCollector;
  statsIntervalMs?: number;
  /** The core's pressure conditions changed (for the Node's status). */
  onPressure?: (pressure: NodePressure) => void;
  /** The node's IP: where probes of host-network pods connect (default 127.0.0.1). */
  nodeIp?: string;
  /** A dual-stack node's two addresses (status.hostIPs, the downward API's status.hostIPs). */
  nodeIps?: string[];
  /** `<root-dir>/pods`: per-pod files (termination messages, etc-hosts), removed with the pod. */
  podsDir?: string;
  /** DNS flags, seccomp root, the node's hosts file: how pods' runtime settings are made. */
  podRuntime?: PodRuntimeSettings;
  /**
   * The service environment variables of a pod (with an apiserver); undefined while the Services
   * are not known yet. Without the option (no apiserver) pods get none, as upstream.
   */
  serviceEnv?: (namespace: string, enableServiceLinks: boolean) => Record<string, string> | undefined;
  /** The Node's labels now, for pods' nodeSelector and node affinity (default: none match). */
  nodeLabels?: () => Record<string, string>;
  /** --allowed-unsafe-sysctls: sysctls beyond the safe ones that pods may set here. */
  allowedUnsafeSysctls?: string[];
  /** Sets up and tears down pods' volumes, and makes containers' mounts. */
  volumes?: VolumeManager;
  /** The ConfigMap and Secret managers: desired pods register the objects they use. */
  objects?: ObjectStore;
  /** Service-account tokens of projected volumes; tokens of pods gone are dropped. */
  tokens?: TokenManager;
  /** `/var/log/containers` links: made when a container starts, removed with it, swept when dangling. */
  logLinks?: ContainerLogLinks;
  /** Disk pressure: free node-level resources (unused images) before pods are evicted. */
  reclaimNodeResources?: (signal: string) => void;
  /** A RuntimeClass's handler for CRI (with an apiserver); rejects with upstream's words. */
  runtimeHandler?: (runtimeClassName: string) => Promise<string>;
  /** Whether any desired pod names a RuntimeClass (the RuntimeClass watch runs only then). */
  onRuntimeClassesInUse?: (inUse: boolean) => void;
  /** The core's word on logind's shutdown lock: let it go (false) or take it again (true). */
  onShutdownInhibitLock?: (hold: boolean) => void;
  /** Pulls (serialized or not) and who may use a pulled image; the node's defaults when not given. */
  images?: ImageManager;
}

export type { PodRefusal } from "../sources/static-pods.js";

// The host's event loop around the core: feeds it pods, relists and action results; carries out
// what it polls; arms one timer for its deadline. A core trap is logged loudly and the core is
// re-created, then rebuilt from the desired pods and the next relist (the runtime is the truth).
import { EVENTED_PLEG_UNHEALTHY_AFTER_MS, PLEG_UNHEALTHY_AFTER_MS } from "../relist/pleg-policy.js";
import { PodFeeder } from "./pod-feeder.js";
import { AcceptedPods } from "../sources/accepted-pods.js";
import type { ActionResult, HookRequest, NodePressure, PlannedAction, PodSpec, ProbeRequest, ProbeResult, RuntimeSnapshot } from "../core/types.js";
import { runProbe } from "../probes/prober.js";
import { runHook } from "../probes/hooks.js";
import type { PodFacts } from "../env/container-env.js";
import { DEFAULT_TERMINATION_MESSAGE_PATH } from "../logs/termination-message.js";
import { pathUnder, safeComponent } from "../common/safe-path.js";
import { Core, CoreAgent, CoreConfig, CoreTrapError, type BackOffEntry } from "../core/core.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";

/** The name of the crash-loop back-off checkpoint in its store. */
const BACK_OFF_CHECKPOINT = "crash-loop-back-off";

function isBackOffEntry(e: unknown): e is BackOffEntry {
  const entry = e as BackOffEntry;
  return typeof entry?.key === "string" && Number.isSafeInteger(entry.durationMs) && entry.durationMs >= 0 && Number.isSafeInteger(entry.lastUpdateMs) && entry.lastUpdateMs >= 0;
}
import { Executor } from "./executor.js";
import type { PodRuntimeSettings } from "../pod-runtime/runtime-settings.js";
import { sysctlRefusal } from "../pod-runtime/ports-and-sysctls.js";
import { NODE_AFFINITY_MESSAGE, matchesNode } from "../pod-runtime/node-affinity.js";
import type { Logger } from "../common/log.js";
import { PodTable } from "./pod-table.js";
import { Relister, type RelistCounts } from "../relist/relister.js";
import type { Runtime } from "../cri/runtime.js";
import type { TaskExit } from "../cri/runtime-events.js";
import { removePodCgroups } from "../node/cgroups.js";
import type { CgroupManager } from "../node/cgroup-manager.js";
import type { StatsCollector, StatsPod } from "../node/stats.js";
import { podLogDirectory } from "./executor.js";
import type { SourcePod, ScanResult } from "../sources/static-pods.js";
import type { VolumeManager } from "../volumes/volume-manager.js";
import { objectRefsOf } from "../volumes/object-refs.js";
import { removeUnmountedTree } from "../volumes/mounts.js";
import { cleanSubPaths } from "../volumes/subpath.js";
import type { ObjectStore } from "../volumes/object-store.js";
import type { TokenManager } from "../volumes/token-manager.js";

export interface AgentLoopOptions {
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
}

/** Pod directories are checked for orphans at most this often (upstream housekeeping: 2 s). */
const ORPHAN_CLEANUP_INTERVAL_MS = 30_000;
/** How often and how many times a pushed exit is checked until the CRI shows it (0.5 s in all). */
const EXIT_CHECK_MS = 20;
const EXIT_CHECKS = 25;

/** A pod the node refused: where it came from, the field, why (a reason when admission refused it). */
export interface PodRefusal {
  index: number;
  origin: string;
  field: string;
  message: string;
  reason?: string;
  /** A new version of a running pod was refused: the accepted version keeps running. */
  keptRunning?: boolean;
}

/** Each container's termination message path and policy, with the Pod API's defaults. */
function terminationMessagesOf(spec: Record<string, any>): Record<string, { path: string; policy: string }> {
  const out: Record<string, { path: string; policy: string }> = {};
  for (const c of [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) {
    if (!c || typeof c.name !== "string") continue;
    out[c.name] = { path: typeof c.terminationMessagePath === "string" && c.terminationMessagePath ? c.terminationMessagePath : DEFAULT_TERMINATION_MESSAGE_PATH, policy: c.terminationMessagePolicy === "FallbackToLogsOnError" ? "FallbackToLogsOnError" : "File" };
  }
  return out;
}

/** The container a runtime call is about, for its log line (none for a sandbox's). */
function containerOf(action: PlannedAction): { container?: string } {
  const kind = action.kind;
  switch (kind.tag) {
    case "create-container":
      return { container: kind.val.container.name };
    case "start-container":
    case "stop-container":
    case "remove-container":
    case "update-container-resources":
      return { container: kind.val.containerName };
    default:
      return {};
  }
}

export class AgentLoop {
  /** Undefined while a trapped core is being re-created. */
  private core: Core | undefined;
  private executor: Executor;
  private relister: Relister;
  private timer?: NodeJS.Timeout;
  private pendingResults: ActionResult[] = [];
  private pendingProbeResults: ProbeResult[] = [];
  private pumpScheduled = false;
  private stopped = false;
  private desired: SourcePod[] = [];
  /** Source problems already logged (origin, field, message), as of the last scan. */
  private loggedProblems = new Set<string>();
  private nowMs: () => number;
  /** Relists in flight; at most one, enforced by the core. */
  private relisting = false;
  /** Exits pushed by the runtime that the CRI does not show yet (container ids). */
  private exitsAwaited = new Set<string>();
  /** Containers containerd said the OOM killer hit, until their exit comes (oldest dropped past 256). */
  private oomKilled = new Set<string>();
  /** Runtime events drive the relists (one every five minutes otherwise): see `eventStream`. */
  private eventedRelist = false;
  trapCount = 0;
  /** When a relist last succeeded (host ms; 0 before the first): the PLEG's health. */
  lastRelistOkMs = 0;
  /** The newest relist: which containers each pod has, for the stats pass. */
  private lastSnapshot: RuntimeSnapshot | undefined;
  private feeder = new PodFeeder();
  /** The pods the core accepted at the last feed: what keeps running through a refused update. */
  readonly accepted = new AcceptedPods();
  /** Pods the host's admission (node affinity, sysctls) let in: not checked again while desired. */
  private hostAdmitted = new Set<string>();
  private statsTimer?: NodeJS.Timeout;
  /** The pressure conditions the core last announced. */
  pressure: NodePressure = { memory: false, disk: false, pid: false };
  /**
   * Upstream's sourcesReady: the core is not polled (so it neither relists nor acts) until every
   * pod source has said what it wants once. Otherwise, after an agent restart, a relist that comes
   * before the apiserver's pod list makes every running pod an orphan, and the core stops them.
   */
  private sourcesReady = true;
  private sourcesTimer?: NodeJS.Timeout;

  constructor(private options: AgentLoopOptions) {
    this.nowMs = options.nowMs ?? Date.now;
    this.executor = new Executor({
      runtime: options.runtime,
      podLogsDir: options.podLogsDir,
      log: options.log,
      concurrency: options.concurrency,
      // The host's own events (image checks) take the path of the core's events.
      onEvent: (action, event) => this.dispatch({ ...action, kind: { tag: "pod-event", val: event } }),
      podFacts: (uid) => this.podFacts(uid),
      podsDir: options.podsDir,
      podRuntime: options.podRuntime,
      sandboxIp: (id) => this.podIpOf(id),
      objects: options.objects,
      volumes: options.volumes,
    });
    this.relister = new Relister(options.runtime, this.nowMs);
  }

  /** Holds the core back until `markSourcesReady`, or `timeoutMs` (a source that never answers). */
  holdUntilSourcesReady(timeoutMs: number): void {
    this.sourcesReady = false;
    this.sourcesTimer = setTimeout(() => {
      this.options.log.log("warn", "Pod sources not ready in time; starting with what they said so far", { waitedMs: timeoutMs });
      this.markSourcesReady();
    }, timeoutMs);
    this.sourcesTimer.unref?.();
  }

  /**
   * The runtime pushed an exit (see cri/runtime-events.ts): the core relists at once. Events
   * in a burst cost one relist, plus one more if they came while a relist was running.
   */
  runtimeEvent(containerId = "", exit?: TaskExit): void {
    if (this.stopped || !this.core) return;
    if (!containerId) return this.relistNow();
    this.options.log.log("debug", "Relist asked by a runtime event", { containerId, exitCode: exit?.exitCode });
    if (this.exitsAwaited.has(containerId)) return;
    this.exitsAwaited.add(containerId);
    void this.relistWhenExited(containerId, exit);
  }

  /** containerd's OOM event for a container: its exit, when it comes, reads OOMKilled. */
  oomKill(containerId: string): void {
    if (!containerId) return;
    this.oomKilled.add(containerId);
    if (this.oomKilled.size > 256) this.oomKilled.delete(this.oomKilled.values().next().value!);
  }

  /** How old the last relist may be before the PLEG is unhealthy (longer while events drive it). */
  get plegThresholdMs(): number {
    return this.eventedRelist ? EVENTED_PLEG_UNHEALTHY_AFTER_MS : PLEG_UNHEALTHY_AFTER_MS;
  }

  /** A CRI container event: the CRI already shows the change, so the core relists at once. */
  runtimeChange(containerId: string, kind: string): void {
    if (this.stopped || !this.core) return;
    this.options.log.log("debug", "Relist asked by a runtime event", { containerId, event: kind });
    this.relistNow();
  }

  /**
   * The CRI event stream came up, or broke: the core slows its periodic relist to the evented
   * period while it streams, and returns to the configured one when not (relisting at once).
   */
  eventStream(streaming: boolean): void {
    if (this.stopped || !this.core) return;
    this.eventedRelist = streaming;
    this.options.log.log("info", streaming ? "Runtime events drive the relist" : "Runtime events stopped; relisting every period", { streaming });
    this.withCore((core) => core.handleEventStream?.(this.nowMs(), streaming));
    this.schedulePump();
  }

  /**
   * containerd announces a task's exit before its CRI plugin has taken it in (100-200 ms later,
   * once it has deleted the task): a relist at once would still list the container running.
   * The one container is asked about (ContainerStatus, a small call) every 20 ms until the
   * runtime says it is not running, for at most half a second, and then the core relists once;
   * that relist takes the runtime's own details from the last answer (one status call fewer per
   * exit). When the event says how the container exited (code and time) and the first answer
   * still says running, that exit is relisted at once (see Relister.pushExit): the replacement
   * need not wait for the CRI. An ID the runtime does not know as a container (a
   * sandbox's pause) is relisted at once.
   */
  private async relistWhenExited(containerId: string, exit?: TaskExit): Promise<void> {
    const oomKilled = this.oomKilled.delete(containerId);
    try {
      for (let check = 0; check < EXIT_CHECKS && !this.stopped; check++) {
        const detail = await this.options.runtime.containerStatus(containerId).catch(() => undefined);
        if (detail?.state === "running") {
          if (exit && check === 0) {
            this.relister.pushExit(detail, { ...exit, oomKilled });
            this.options.log.log("debug", "Exit taken from containerd's event, ahead of its CRI", { containerId, exitCode: exit.exitCode, oomKilled });
            this.relistNow();
          }
          await new Promise((resolve) => setTimeout(resolve, EXIT_CHECK_MS));
          continue;
        }
        // The relist that follows takes these details instead of asking for them again.
        if (detail) this.relister.remember(detail);
        break;
      }
    } finally {
      this.exitsAwaited.delete(containerId);
      this.relistNow();
    }
  }

  private relistNow(): void {
    if (this.stopped) return;
    this.withCore((core) => core.handleRuntimeEvent?.(this.nowMs()));
    this.schedulePump();
  }

  /** Every pod source has delivered its pods once: the core may relist and act. */
  markSourcesReady(): void {
    if (this.sourcesReady) return;
    this.sourcesReady = true;
    clearTimeout(this.sourcesTimer);
    this.schedulePump();
  }

  private createCore(): Promise<Core> {
    return (this.options.createCore ?? CoreAgent.create)(this.options.core);
  }

  async start(): Promise<void> {
    this.core = await this.createCore();
    const saved = this.options.backOffCheckpoints?.read(BACK_OFF_CHECKPOINT);
    if (Array.isArray(saved)) this.savedBackOffs = saved.filter(isBackOffEntry);
    this.restoreBackOffs();
    this.schedulePump();
    if (this.options.stats) {
      this.statsTimer = setInterval(() => this.takeStats(), this.options.statsIntervalMs ?? 10_000);
      this.statsTimer.unref?.();
    }
  }

  /** One stats pass into the core (upstream's eviction manager synchronize). */
  takeStats(): void {
    const stats = this.options.stats;
    const snapshot = this.lastSnapshot;
    if (!stats || !snapshot || this.stopped) return;
    const pods = new Map<string, StatsPod>();
    for (const s of snapshot.sandboxes) {
      if (s.state !== "ready" || pods.has(s.podUid)) continue;
      let logDir: string;
      try {
        logDir = podLogDirectory(this.options.podLogsDir, s);
      } catch {
        continue; // a sandbox whose names would lead outside the log directory: not ours to measure
      }
      pods.set(s.podUid, { uid: s.podUid, logDir, containers: [] });
    }
    for (const c of snapshot.containers) if (c.state === "running") pods.get(c.podUid)?.containers.push({ id: c.id, name: c.name });
    let result;
    try {
      result = stats.collect([...pods.values()]);
    } catch (error) {
      this.options.log.log("warn", "Node stats failed", { error: (error as Error).message });
      return;
    }
    // What emptyDirs with a sizeLimit hold: the core evicts a pod over its limit.
    if (this.options.volumes) result = { ...result, volumes: this.options.volumes.emptyDirUsage() };
    this.withCore((core) => core.handleNodeStats(this.nowMs(), result));
    this.schedulePump();
  }

  /** The pod's files under `<root-dir>/pods/<uid>`, once everything of it is gone. */
  private removePodDirectory(uid: string, pod: string | undefined): void {
    const podsDir = this.options.podsDir;
    if (!podsDir || !safeComponent(uid)) return;
    try {
      const dir = pathUnder(podsDir, uid);
      cleanSubPaths(dir);
      removeUnmountedTree(dir);
    } catch (error) {
      this.options.log.log("warn", "Could not remove the pod directory", { pod, error: (error as Error).message });
    }
  }

  /** What a container's env may read of pod `uid`: its object's metadata, the node, the pod's containers. */
  private podFacts(uid: string): PodFacts | undefined {
    const pod = this.desired.find((p) => p.spec.uid === uid);
    if (!pod) return undefined;
    const object = (pod.manifest ?? {}) as { metadata?: Record<string, any>; spec?: Record<string, any> };
    const metadata = object.metadata ?? {};
    const spec = object.spec ?? {};
    const node = this.options.core.node;
    const nodeIp = this.options.nodeIp ?? "127.0.0.1";
    return {
      name: pod.spec.name,
      namespace: pod.spec.namespace,
      uid,
      labels: metadata.labels ?? {},
      annotations: metadata.annotations ?? {},
      nodeName: spec.nodeName || this.options.core.nodeName,
      serviceAccountName: spec.serviceAccountName ?? spec.serviceAccount ?? "",
      hostIps: [nodeIp],
      podIps: [],
      containers: [...pod.spec.containers, ...pod.spec.initContainers],
      allocatable: {
        cpu: node ? `${node.allocatableCpuMilli}m` : "0",
        memory: node ? String(node.allocatableMemoryBytes) : "0",
        "ephemeral-storage": "0",
      },
      terminationMessages: terminationMessagesOf(spec),
      spec,
      ...this.serviceEnvOf(pod.spec.namespace, spec.enableServiceLinks !== false),
    };
  }

  private serviceEnvOf(namespace: string, enableServiceLinks: boolean): Pick<PodFacts, "serviceEnv" | "servicesUnknown"> {
    const serviceEnv = this.options.serviceEnv;
    if (!serviceEnv) return {};
    const env = serviceEnv(namespace, enableServiceLinks);
    return env ? { serviceEnv: env } : { servicesUnknown: true };
  }

  /** A new scan of the pod sources: the complete desired set. Returns the pods the core refused. */
  setPods(scan: ScanResult): PodRefusal[] {
    const { log, podTable } = this.options;
    // Each problem is logged when it appears, not again at every later scan (a directory with
    // many bad files would otherwise repeat all of them whenever one file changes).
    const before = this.desired;
    this.desired = [...scan.pods];
    this.registerObjects();
    const rejected = this.feedKeepingRunningPods();
    // A pod the core or the node refused is said to be refused (below), never "added".
    const refused = new Set(rejected.filter((r) => !r.keptRunning).map((r) => scan.pods[r.index]?.spec.uid));
    this.logSourceChanges(before, this.desired.filter((p) => !refused.has(p.spec.uid)));
    const seen = new Set<string>();
    for (const p of [...scan.problems, ...rejected]) {
      // A pod the core refused is logged once per pod and field, not again when only the words
      // change (OutOfpods says how many pods are used, which changes with every deletion).
      const uid = "index" in p && typeof p.index === "number" ? this.desired[p.index]?.spec.uid : undefined;
      const key = uid !== undefined ? `${p.origin}\u0000${uid}\u0000${p.field}` : `${p.origin}\u0000${p.field}\u0000${p.message}`;
      seen.add(key);
      if (this.loggedProblems.has(key)) continue;
      if ("keptRunning" in p && p.keptRunning) log.log("warn", "Pod update not applied; the pod keeps running as it was", { pod: p.origin, field: p.field, error: p.message });
      else log.log("error", "Refused pod manifest", { file: p.origin, field: p.field, error: p.message });
    }
    this.loggedProblems = seen;
    const refusedIndices = new Set(rejected.filter((r) => !r.keptRunning).map((r) => r.index));
    podTable.setDesired(
      this.desired
        .filter((_p, index) => !refusedIndices.has(index))
        .map((p) => ({ uid: p.spec.uid, namespace: p.spec.namespace, name: p.spec.name, origin: p.origin })),
      [...scan.problems, ...rejected].map(({ origin, field, message }) => ({ origin, field, message })),
    );
    this.schedulePump();
    return rejected;
  }

  /** The objects each desired pod uses, for the ConfigMap and Secret managers (upstream RegisterPod). */
  private registerObjects(): void {
    const { objects, tokens } = this.options;
    const uids = new Set(this.desired.map((p) => p.spec.uid));
    if (objects) {
      for (const p of this.desired) if (!p.spec.staticPod && p.manifest) objects.register(p.spec.uid, objectRefsOf(p.manifest as Record<string, any>));
      objects.retain(uids);
    }
    tokens?.retain(uids);
  }

  /** Upstream's SyncLoop ADD / UPDATE / REMOVE lines: what each source change means for a pod. */
  private logSourceChanges(before: SourcePod[], after: SourcePod[]): void {
    const { log } = this.options;
    const old = new Map(before.map((p) => [p.spec.uid, p]));
    const now = new Set(after.map((p) => p.spec.uid));
    const byName = new Map(before.map((p) => [`${p.spec.namespace}/${p.spec.name}`, p]));
    for (const p of after) {
      if (old.has(p.spec.uid)) continue;
      const pod = `${p.spec.namespace}/${p.spec.name}`;
      const replaced = byName.get(pod);
      log.log("info", replaced && !now.has(replaced.spec.uid) ? "Pod changed in its source; replacing it" : "Pod added by its source", { pod, uid: p.spec.uid, source: p.origin });
    }
    for (const p of before) {
      if (now.has(p.spec.uid)) continue;
      const pod = `${p.spec.namespace}/${p.spec.name}`;
      if (after.some((q) => `${q.spec.namespace}/${q.spec.name}` === pod)) continue; // told as a change above
      log.log("info", "Pod removed from its source; stopping it", { pod, uid: p.spec.uid, source: p.origin });
    }
  }

  /**
   * Feeds the desired pods; a refused new version of a pod the core runs (not an admission
   * refusal: that is for new pods) is replaced by the accepted version, fed again (the core kept
   * it meanwhile), and reported as `keptRunning`. Remembers what was accepted.
   */
  private feedKeepingRunningPods(): PodRefusal[] {
    let rejected = this.feedPods();
    const kept: PodRefusal[] = [];
    for (const r of rejected) {
      const update = this.desired[r.index];
      if (r.reason || !update) continue;
      const held = this.accepted.keep(update.spec.uid, update.spec.deletionGracePeriodSeconds);
      if (!held || held.spec === update.spec) continue;
      this.desired[r.index] = held;
      kept.push({ ...r, keptRunning: true });
    }
    if (kept.length > 0) {
      const keptIndices = new Set(kept.map((r) => r.index));
      rejected = [...this.feedPods().filter((r) => !keptIndices.has(r.index)), ...kept];
    }
    const refusedIndices = new Set(rejected.filter((r) => !r.keptRunning).map((r) => r.index));
    this.accepted.replace(this.desired.filter((_p, i) => !refusedIndices.has(i)));
    return rejected;
  }

  /** Gives the core the desired pods; returns the ones it refused (setPods logs them). */
  /**
   * The desired pods to the core, but for those the node's own admission refuses (upstream's
   * predicate and sysctl admit handlers: NodeAffinity, SysctlForbidden); returns every refusal,
   * the core's and the host's.
   */
  private feedPods(): PodRefusal[] {
    const refusals: PodRefusal[] = [];
    const admitted: number[] = [];
    const node = { name: this.options.core.nodeName, labels: this.options.nodeLabels?.() ?? {} };
    const stillDesired = new Set<string>();
    this.desired.forEach((p, index) => {
      const uid = p.spec.uid;
      stillDesired.add(uid);
      // Admission is for new pods: a node label removed later does not stop an admitted pod
      // (IgnoredDuringExecution), as upstream admits each pod once.
      if (this.hostAdmitted.has(uid)) {
        admitted.push(index);
        return;
      }
      const spec = (p.manifest as { spec?: Record<string, any> } | undefined)?.spec;
      if (spec && !matchesNode(spec, node)) {
        refusals.push({ index, origin: p.origin, field: "spec.nodeSelector", message: NODE_AFFINITY_MESSAGE, reason: "NodeAffinity" });
        return;
      }
      const refusal = spec ? sysctlRefusal(spec, this.options.allowedUnsafeSysctls ?? []) : undefined;
      if (refusal) refusals.push({ index, origin: p.origin, field: refusal.field, message: refusal.message, reason: "SysctlForbidden" });
      else {
        admitted.push(index);
        this.hostAdmitted.add(uid);
      }
    });
    for (const uid of this.hostAdmitted) if (!stillDesired.has(uid)) this.hostAdmitted.delete(uid);
    const specs: PodSpec[] = admitted.map((i) => this.desired[i].spec);
    const rejections = this.feeder.feed(specs, (step) => this.withCore((core) => core.handlePods(this.nowMs(), step)));
    for (const r of rejections) {
      const index = admitted[r.index];
      refusals.push({ index, origin: this.desired[index]?.origin ?? "?", field: r.field, message: r.message });
    }
    return refusals;
  }

  /** The last back-off checkpoint written (or read at start). */
  private savedBackOffs: BackOffEntry[] = [];

  /** Gives the checkpointed back-off to a new core (at start, or after a trap). */
  private restoreBackOffs(): void {
    if (this.savedBackOffs.length === 0) return;
    this.withCore((core) => core.restoreBackOffs?.(this.nowMs(), this.savedBackOffs));
  }

  /** Writes the core's back-off when it changed (the store skips an unchanged one). */
  private checkpointBackOffs(): void {
    const store = this.options.backOffCheckpoints;
    if (!store) return;
    const entries = this.withCore((core) => core.backOffs?.(this.nowMs()));
    if (!entries) return;
    this.savedBackOffs = entries;
    store.write(BACK_OFF_CHECKPOINT, entries);
  }

  private withCore<T>(fn: (core: Core) => T): T | undefined {
    if (!this.core) return undefined;
    try {
      return fn(this.core);
    } catch (error) {
      if (!(error instanceof CoreTrapError)) throw error;
      this.onTrap(error);
      return undefined;
    }
  }

  private onTrap(error: CoreTrapError): void {
    this.trapCount++;
    this.options.log.log("error", "CORE TRAPPED: re-creating the core and rebuilding its state from the runtime", {
      call: error.call,
      reason: error.reason,
    });
    this.pendingResults = []; // results of the dead instance's actions mean nothing to a new one
    this.pendingProbeResults = [];
    this.core = undefined;
    void this.createCore().then((core) => {
      this.core = core;
      this.feeder.reset();
      this.options.podTable.resetVersions();
      this.options.onCoreReplaced?.();
      this.restoreBackOffs();
      this.feedPods();
      this.schedulePump();
    });
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.stopped || !this.sourcesReady) return;
    const now = this.nowMs();
    if (this.pendingResults.length > 0) {
      const results = this.pendingResults;
      this.pendingResults = [];
      this.withCore((core) => core.handleActionResults(now, results));
    }
    if (this.pendingProbeResults.length > 0) {
      const results = this.pendingProbeResults;
      this.pendingProbeResults = [];
      this.withCore((core) => core.handleProbeResults(now, results));
    }
    const actions = this.withCore((core) => core.pollActions(now)) ?? [];
    for (const action of actions) this.dispatch(action);
    const deadline = this.withCore((core) => core.pollDeadline());
    clearTimeout(this.timer);
    if (deadline !== undefined) {
      const waitMs = Math.max(0, Math.min(deadline - this.nowMs(), 60_000));
      this.timer = setTimeout(() => this.pump(), waitMs);
    }
  }

  private dispatch(action: PlannedAction): void {
    this.options.onAction?.(action);
    const kind = action.kind;
    const pod = action.podName ? `${action.podNamespace}/${action.podName}` : undefined;
    switch (kind.tag) {
      case "relist":
        void this.relist(action);
        return;
      case "pod-status-changed":
        this.options.podTable.applyStatus(action.podUid, kind.val);
        return;
      case "pod-event":
        this.options.log.log(kind.val.eventType === "warning" ? "warn" : "info", kind.val.message, {
          pod,
          container: kind.val.containerName,
          reason: kind.val.reason,
        });
        return;
      case "node-pressure-changed": {
        const p = kind.val;
        this.pressure = p;
        this.options.log.log(p.memory || p.disk || p.pid ? "warn" : "info", "Node pressure changed", { memory: p.memory, disk: p.disk, pid: p.pid });
        this.options.onPressure?.(p);
        return;
      }
      case "update-pod-cgroup": {
        let result: ActionResult = { actionId: action.id, outcome: { tag: "ok", val: "" } };
        try {
          this.options.cgroups?.update(kind.val.cgroupParent, kind.val.resources);
        } catch (error) {
          const message = `could not write pod cgroup ${kind.val.cgroupParent}: ${(error as Error).message}`;
          this.options.log.log("warn", "Pod cgroup update failed", { pod, error: message });
          result = { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message } } };
        }
        this.pendingResults.push(result);
        this.schedulePump();
        return;
      }
      case "run-sandbox":
        try {
          // The pod's own cgroup, with its values, before the runtime puts the sandbox in it.
          this.options.cgroups?.ensurePod(kind.val.cgroupParent, kind.val.podResources);
        } catch (error) {
          this.options.log.log("warn", "Could not prepare pod cgroup", { pod, error: (error as Error).message });
        }
        this.execute(action, pod);
        return;
      case "run-probe":
        void this.probe(action, kind.val, pod);
        return;
      case "run-hook":
        void this.hook(action, kind.val, pod);
        return;
      case "set-up-volumes":
        void this.setUpVolumes(action, kind.val, pod);
        return;
      case "tear-down-volumes":
        this.tearDownVolumes(action, pod);
        return;
      case "remove-pod-cgroup": {
        const failures = removePodCgroups(kind.val, this.options.cgroupRoot);
        for (const f of failures) this.options.log.log("warn", "Could not remove pod cgroup", { pod, dir: f.dir, error: f.error });
        this.removePodDirectory(action.podUid, pod);
        return;
      }
      default:
        this.execute(action, pod);
    }
  }

  private execute(action: PlannedAction, pod: string | undefined): void {
    const tag = action.kind.tag;
    this.options.log.log("debug", "runtime call", { pod, action: tag, ...containerOf(action), id: Number(action.id) });
    void this.executor.execute(action).then((result) => {
      if (result.outcome.tag === "err") {
        this.options.log.log("warn", "Runtime call failed", { pod, action: tag, error: result.outcome.val.message });
      }
      this.pendingResults.push(result);
      this.schedulePump();
    });
  }

  /** Where a probe or hook without a host connects: the pod's IP, or the node's (host network). */
  private probeTargetIp(podUid: string): string {
    const sandbox = this.lastSnapshot?.sandboxes.find((s) => s.podUid === podUid && s.state === "ready");
    return (sandbox && this.relister.sandboxIp(sandbox.id)) || this.options.nodeIp || "127.0.0.1";
  }

  /** Runs one probe beside everything else; its outcome goes to the core at the next pump. */
  private async probe(action: PlannedAction, request: ProbeRequest, pod: string | undefined): Promise<void> {
    const podIp = this.probeTargetIp(action.podUid);
    const finding = await runProbe(request, { podIp, runtime: this.options.runtime });
    this.options.log.log("debug", "probe", { pod, container: request.containerName, probe: request.probeType, outcome: finding.outcome });
    this.pendingProbeResults.push({ actionId: action.id, outcome: finding.outcome, output: finding.output });
    this.schedulePump();
  }

  private volumeResult(action: PlannedAction, error: string | undefined): void {
    this.pendingResults.push(error === undefined ? { actionId: action.id, outcome: { tag: "ok", val: "" } } : { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: error } } });
    this.schedulePump();
  }

  /** Sets up (or refreshes) the pod's volumes; the core retries a failure with back-off. */
  private async setUpVolumes(action: PlannedAction, names: string[], pod: string | undefined): Promise<void> {
    const facts = this.podFacts(action.podUid);
    const volumes = this.options.volumes;
    let error: string | undefined;
    if (!facts || !volumes) error = !facts ? "the pod is no longer desired" : "this node has no pods directory to set up volumes in";
    else {
      try {
        await volumes.setUp(facts, names);
      } catch (e) {
        error = (e as Error).message;
      }
    }
    if (error !== undefined) this.options.log.log("warn", "Volume set-up failed", { pod, error });
    this.volumeResult(action, error);
  }

  /** Unmounts and removes the pod's volumes (all its containers have stopped). */
  private tearDownVolumes(action: PlannedAction, pod: string | undefined): void {
    let error: string | undefined;
    try {
      this.options.volumes?.tearDown(action.podUid);
    } catch (e) {
      error = `UnmountVolume.TearDown failed: ${(e as Error).message}`;
      this.options.log.log("warn", "Volume tear-down failed", { pod, error });
    }
    this.volumeResult(action, error);
  }

  private lastOrphanCleanupMs = 0;

  /**
   * Pod directories of pods neither desired nor in the runtime (upstream cleanupOrphanedPodDirs):
   * after an agent restart, a pod deleted meanwhile leaves its volumes mounted otherwise.
   */
  private cleanupOrphanedPodDirs(snapshot: RuntimeSnapshot): void {
    const volumes = this.options.volumes;
    const now = this.nowMs();
    if (!volumes || !this.sourcesReady || now - this.lastOrphanCleanupMs < ORPHAN_CLEANUP_INTERVAL_MS) return;
    this.lastOrphanCleanupMs = now;
    const keep = new Set<string>(this.desired.map((p) => p.spec.uid));
    for (const s of snapshot.sandboxes) keep.add(s.podUid);
    for (const c of snapshot.containers) keep.add(c.podUid);
    for (const uid of volumes.cleanupOrphans(keep)) this.options.log.log("info", "Cleaned up the directory of an orphaned pod", { uid });
  }

  /** Runs one lifecycle hook; its outcome is an action result (the pod waits for it). */
  private async hook(action: PlannedAction, request: HookRequest, pod: string | undefined): Promise<void> {
    const error = await runHook(request, { runtime: this.options.runtime, podIp: this.probeTargetIp(action.podUid), podLabel: `${pod ?? ""}(${action.podUid})` });
    this.options.log.log(error ? "warn" : "debug", error ? "Lifecycle hook failed" : "Lifecycle hook ran", { pod, container: request.containerName, hook: request.hookType, ...(error ? { error } : {}) });
    this.pendingResults.push(error ? { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: error } } } : { actionId: action.id, outcome: { tag: "ok", val: "" } });
    this.schedulePump();
  }

  private async relist(action: PlannedAction): Promise<void> {
    if (this.relisting) {
      // The core gave up waiting for the previous answer; this host is still on it. Say so, and
      // the core asks again one period later.
      this.pendingResults.push({ actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: "a relist is already in progress" } } });
      this.schedulePump();
      return;
    }
    this.relisting = true;
    try {
      const startMs = this.nowMs();
      const relist = await this.relister.relist();
      const snapshot = relist.snapshot;
      this.lastRelistOkMs = this.nowMs();
      this.options.onRelist?.(startMs, this.lastRelistOkMs, relist.counts);
      this.lastSnapshot = snapshot;
      if (!this.stopped) {
        // Packed as the runtime answered; the snapshot's lists are made only if a reader asks.
        this.withCore((core) => core.handleSnapshot(this.nowMs(), snapshot, relist.packed));
        this.checkpointBackOffs();
      }
      this.cleanupOrphanedPodDirs(snapshot);
    } catch (error) {
      this.options.log.log("warn", "Relist failed", { error: (error as Error).message });
      this.pendingResults.push({ actionId: action.id, outcome: { tag: "err", val: { kind: "runtime", grpcCode: 0, message: String((error as Error).message) } } });
    } finally {
      this.relisting = false;
      this.schedulePump();
    }
  }

  /** What the last successful relist saw (stats Summary, /metrics). */
  get snapshot(): RuntimeSnapshot | undefined {
    return this.lastSnapshot;
  }

  /** The image digest reference of a container, as the last relist saw it. */
  imageRefOf(containerId: string): string | undefined {
    return this.relister.imageRefOf(containerId);
  }

  /** The IP of a sandbox, as the runtime told it. */
  podIpOf(sandboxId: string): string | undefined {
    return this.relister.sandboxIp(sandboxId) || undefined;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.sourcesTimer);
    clearTimeout(this.timer);
    clearInterval(this.statsTimer);
  }
}

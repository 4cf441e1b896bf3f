// The node in a cluster: wires the apiserver's pods into the pod manager beside static pods, the
// core's statuses and events out to the apiserver, mirror pods, the Node and its Lease. The
// agent loop and the core know nothing of the apiserver; a lost apiserver leaves pods as they
// are (the last list stays desired) and everything unsent goes out when it is back.
import type { PlannedAction } from "../core/types.js";
import type { NodePressure } from "../core/types.js";
import type { AcceptedPods } from "../sources/accepted-pods.js";
import type { ImageInfo, Runtime } from "../cri/runtime.js";
import type { Logger } from "../common/log.js";
import { readMachineInfo, type MachineInfo } from "../node/machine.js";
import { ManifestError, podFromApiObject } from "../sources/manifest.js";
import type { PodRefusal, ScanResult, SourcePod, SourceProblem } from "../sources/static-pods.js";
import { ApiClient, ApiStatusError, CREDENTIALS_PENDING } from "./api-client.js";
import { type ContainerList, EventRecorder } from "./events.js";
import { PodRefusals } from "./pod-refusals.js";
import { MirrorPods, isMirrorPod, MIRROR_ANNOTATION } from "./mirror-pods.js";
import type { NodeHealth } from "./node-object.js";
import { NodeLease } from "./node-lease.js";
import { NodeReporter } from "./node-reporter.js";
import type { ReservationSettings } from "../node/allocatable.js";
import { PodReflector, Reflector, type PodObject } from "./pod-reflector.js";
import type { PodCheckpoints } from "./pod-checkpoints.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import { serviceEnvironment } from "../env/service-env.js";
import { StatusManager, type StatusTarget } from "./status-manager.js";

const API_ORIGIN = "apiserver:";
/** A runtime that does not answer CRI Status within this is reported down. */
const RUNTIME_STATUS_TIMEOUT_MS = 5_000;

/** What of an apiserver pod the core acts on: identity, spec, the deletion mark, a terminal phase. */
function desiredKey(object: PodObject): string {
  const m = object.metadata ?? {};
  const phase = object.status?.phase;
  const terminal = phase === "Succeeded" || phase === "Failed" ? phase : null;
  return JSON.stringify([m.name, m.namespace, m.deletionTimestamp ?? null, m.deletionGracePeriodSeconds ?? null, terminal, object.spec]);
}

/** What the cluster side needs of the node's agent loop (agent/agent-loop.ts is the one). */
export interface NodeAgent {
  /** The complete desired set of pods; returns the ones the node refused. */
  setPods(scan: ScanResult): PodRefusal[];
  markSourcesReady?(): void;
  /** The pods the core accepted: what keeps running through a refused update. */
  readonly accepted: AcceptedPods;
  readonly lastRelistOkMs: number;
  readonly plegThresholdMs: number;
  readonly pressure: NodePressure;
  /** The node is shutting down (logind announced it). */
  readonly shuttingDown?: boolean;
  imageRefOf(containerId: string): string | undefined;
  podIpOf(sandboxId: string): string | undefined;
  /** Whether a sandbox or container of the pod is being started (its status is between steps). */
  starting?(podUid: string): boolean;
}

export interface ClusterAgentOptions {
  client: ApiClient;
  nodeName: string;
  log: Logger;
  loop: NodeAgent;
  runtime: Runtime;
  rootDir: string;
  /** Overrides the node's InternalIP (kubelet --node-ip); a dual-stack pair gives both. */
  nodeIps?: string[];
  /** `--provider-id`: the Node's spec.providerID. */
  providerId?: string;
  /** What the Node's allocatable keeps aside (reservations, hard eviction thresholds, --max-pods). */
  reservations?: ReservationSettings;
  /** Device plugins' resources, counted (capacity: every device; allocatable: the healthy ones). */
  extendedResources?: () => { resource: string; capacity: number; allocatable: number }[];
  /** `--port`: the kubelet API the Node advertises (10250). */
  kubeletPort?: number;
  /** nodeStatusUpdateFrequency / nodeStatusReportFrequency (defaults 10 s / 5 min). */
  nodeStatusUpdateMs?: number;
  nodeStatusReportMs?: number;
  /** nodeLeaseDurationSeconds (default 40). */
  leaseDurationSeconds?: number;
  /**
   * The apiserver's pods checkpointed on disk: written as they change, and given to the core when
   * the agent starts and the apiserver does not answer (offline restart).
   */
  checkpoints?: PodCheckpoints;
  /** The Services (what their env variables need) checkpointed for a start without the apiserver. */
  serviceCheckpoints?: CheckpointStore;
  /** The apiserver listed its pods (uids): checkpoints of anything else may go. */
  onApiPodsListed?: (uids: ReadonlySet<string>) => void;
  /** How long a start waits for the apiserver's first list before it runs the checkpointed pods. */
  restoreAfterMs?: number;
}

/** A start without an answer from the apiserver within this runs the checkpointed pods. */
export const RESTORE_AFTER_MS = 5_000;

export class ClusterAgent {
  private staticScan: ScanResult = { pods: [], problems: [] };
  /** Whether the static files were scanned and the apiserver's pods listed at least once. */
  private staticScanned = false;
  private apiListed = false;
  /** The pods came from checkpoints, the apiserver not having answered yet. */
  private restored = false;
  private restoreTimer?: NodeJS.Timeout;
  /** Pods from the apiserver that the agent runs (mirror pods excluded), by uid. */
  private apiPods = new Map<string, PodObject>();
  private refusals: PodRefusals;
  /** Per apiserver pod: its resourceVersion and what of it the core acts on, as last given. */
  private desiredKeys = new Map<string, { resourceVersion: string; key: string }>();
  private machine: MachineInfo;
  private runtimeName = "containerd";
  private images: ImageInfo[] | undefined;
  readonly reflector: PodReflector;
  /** Every Service of the cluster, for the service environment variables (as the kubelet's informer). */
  readonly services: Reflector;
  private servicesListed = false;
  /** The checkpointed Services, until the apiserver lists them (a start offline). */
  private restoredServices?: PodObject[];
  readonly statuses: StatusManager;
  readonly events: EventRecorder;
  readonly mirrors: MirrorPods;
  readonly node: NodeReporter;
  readonly lease: NodeLease;
  private mirrorTimer?: NodeJS.Timeout;

  constructor(private options: ClusterAgentOptions) {
    const { client, nodeName, log } = options;
    this.machine = readMachineInfo(options.rootDir);
    const nodeIps = options.nodeIps ?? [];
    if (nodeIps.length > 0) this.machine.internalIp = nodeIps[0];
    if (nodeIps.length > 1) this.machine.internalIps = nodeIps;
    this.reflector = new PodReflector({
      client,
      nodeName,
      log,
      onPods: (pods) => this.onApiPods(pods),
      onError: (error) =>
        this.restoreFromCheckpoints(error instanceof ApiStatusError && error.reason === CREDENTIALS_PENDING ? "the node has no client certificate yet (TLS bootstrap under way)" : "the apiserver cannot be reached"),
      onConnected: (connected) => {
        log.log(connected ? "info" : "warn", connected ? "Connected to the apiserver" : "Lost the apiserver; pods keep running as they are", {});
        if (connected) this.statuses.requestFlush();
      },
    });
    this.services = new Reflector({
      client, log, path: "/api/v1/services", selector: "", what: "services",
      onObjects: (services) => {
        this.servicesListed = true;
        this.restoredServices = undefined;
        // What the service environment needs, kept for a start without the apiserver.
        options.serviceCheckpoints?.write("services", services.map((v) => ({
          metadata: { name: v.metadata?.name, namespace: v.metadata?.namespace },
          spec: { clusterIP: v.spec?.clusterIP, clusterIPs: v.spec?.clusterIPs, ports: v.spec?.ports },
        })));
      },
    });
    this.statuses = new StatusManager({
      client,
      log,
      targetOf: (uid) => this.targetOf(uid),
      starting: (uid) => options.loop.starting?.(uid) ?? false,
      context: () => ({ nodeIp: this.machine.internalIp, nodeIps: this.machine.internalIps, runtimeName: this.runtimeName, imageRefOf: (id) => options.loop.imageRefOf(id), podIpOf: (id) => options.loop.podIpOf(id) }),
    });
    this.events = new EventRecorder(client, nodeName, log);
    this.refusals = new PodRefusals(client, this.events, log);
    this.node = new NodeReporter({
      client,
      log,
      nodeName,
      machine: () => this.machine,
      health: () => this.health(),
      onEvent: (type, reason, message) => this.events.recordNode(type, reason, message),
      updateMs: options.nodeStatusUpdateMs,
      reportMs: options.nodeStatusReportMs,
      providerId: options.providerId,
    });
    this.lease = new NodeLease({ client, log, nodeName, nodeUid: () => this.node.nodeUid, durationSeconds: options.leaseDurationSeconds });
    this.mirrors = new MirrorPods(client, nodeName, log, () => this.node.nodeUid);
  }

  start(): void {
    // The lease names the Node as its owner: it starts once the Node is registered (or the
    // first attempt failed; then the owner is added at a later renewal).
    void this.node.start().finally(() => {
      this.lease.start();
      this.syncMirrors(); // mirror pods wait for their owner, the Node
    });
    this.statuses.start();
    // The certificate a TLS bootstrap brings is used at once: the Node registers and the pods are
    // listed now, not when their retries come round.
    this.options.client.onCredentials(() => {
      this.reflector.wake();
      this.services.wake();
      void this.node.tick();
      this.statuses.requestFlush();
    });
    this.reflector.start();
    if (this.options.checkpoints) {
      this.restoreTimer = setTimeout(() => this.restoreFromCheckpoints("the apiserver has not answered"), this.options.restoreAfterMs ?? RESTORE_AFTER_MS);
    }
    this.services.start();
    // Mirror pods are also re-checked on a timer: a failed create is retried.
    this.mirrorTimer = setInterval(() => this.syncMirrors(), 10_000);
  }

  /** Reports the node's status now (a shutdown began: the Ready condition says so at once). */
  syncNodeStatus(): void {
    void this.node.tick();
  }

  stop(): void {
    clearInterval(this.mirrorTimer);
    clearTimeout(this.restoreTimer);
    this.reflector.stop();
    this.services.stop();
    this.statuses.stop();
    this.node.stop();
    this.lease.stop();
    this.options.client.close();
  }

  /** A scan of the static pod files. */
  setStaticPods(scan: ScanResult): void {
    this.staticScan = scan;
    this.staticScanned = true;
    this.publish();
    this.syncMirrors();
    this.checkSourcesReady();
  }

  /** Both sources (the files, the apiserver's first list) have delivered: the core may act. */
  private checkSourcesReady(): void {
    if (this.staticScanned && (this.apiListed || this.restored)) this.options.loop.markSourcesReady?.();
  }

  /**
   * The apiserver did not give its first list: the pods it gave before (checkpointed) are desired
   * again, with their volumes, as they were. Its list replaces them once it answers.
   */
  private restoreFromCheckpoints(why: string): void {
    clearTimeout(this.restoreTimer);
    if (this.apiListed || this.restored || !this.options.checkpoints) return;
    this.restored = true;
    const pods = this.options.checkpoints.load().filter((p) => !isMirrorPod(p));
    // Their containers' service variables as they were (upstream will not make env without them).
    const services = this.options.serviceCheckpoints?.read("services");
    if (!this.servicesListed && Array.isArray(services)) this.restoredServices = services;
    this.apiPods = new Map(pods.map((p) => [p.metadata.uid, p]));
    this.desiredChanged();
    this.options.log.log("info", "Running the checkpointed pods until the apiserver answers", { why, pods: pods.length });
    this.publish();
    this.checkSourcesReady();
  }

  /** Every action the core emits passes here: statuses and events go to the apiserver. */
  onAction(action: PlannedAction): void {
    const kind = action.kind;
    if (kind.tag === "pod-status-changed") {
      // A pod gone from every source (the core may still be stopping it) has no object to report to.
      if (this.apiPods.has(action.podUid) || this.staticScan.pods.some((p) => p.spec.uid === action.podUid)) this.statuses.setStatus(action.podUid, kind.val);
    }
    else if (kind.tag === "pod-event") {
      this.events.record({
        namespace: action.podNamespace,
        podName: action.podName,
        podUid: action.podUid,
        // The pod's version when the event happened, as upstream's object reference carries it.
        resourceVersion: this.apiPods.get(action.podUid)?.metadata?.resourceVersion,
        containerName: kind.val.containerName,
        containerList: this.containerListOf(action.podUid, kind.val.containerName),
        type: kind.val.eventType === "warning" ? "Warning" : "Normal",
        reason: kind.val.reason,
        message: kind.val.message,
      });
    }
  }

  /** Which spec list of pod `uid` holds the container `name`, for an event's fieldPath. */
  private containerListOf(uid: string, name: string): ContainerList | undefined {
    if (!name) return undefined;
    const named = (list: unknown) => Array.isArray(list) && list.some((c) => c?.name === name);
    const spec = this.apiPods.get(uid)?.spec as Record<string, unknown> | undefined;
    if (spec) return named(spec.initContainers) ? "initContainers" : named(spec.ephemeralContainers) ? "ephemeralContainers" : "containers";
    const staticSpec = this.staticScan.pods.find((p) => p.spec.uid === uid)?.spec;
    return staticSpec?.initContainers.some((c) => c.name === name) ? "initContainers" : "containers";
  }

  private syncMirrors(): void {
    if (!this.reflector.connected) return;
    this.mirrors.reconcile(this.staticScan.pods, this.reflector.current.values());
  }

  private onApiPods(pods: PodObject[]): void {
    this.apiPods = new Map(pods.filter((p) => !isMirrorPod(p)).map((p) => [p.metadata.uid, p]));
    const firstList = !this.apiListed;
    this.apiListed = true;
    clearTimeout(this.restoreTimer);
    if (firstList && this.restored) this.options.log.log("info", "The apiserver answered; its pods replace the checkpointed ones", { pods: this.apiPods.size });
    this.options.checkpoints?.save(this.apiPods);
    // Most changes are status patches (the node's own, coming back through the watch): they
    // change nothing the core acts on, and the core is not given the pods again for them.
    const changed = this.desiredChanged();
    if (changed || this.refusals.retryWanted) this.publish();
    this.statuses.retainOnly(new Set([...this.apiPods.keys(), ...this.staticScan.pods.map((p) => p.spec.uid)]));
    this.refusals.retain(this.apiPods);
    this.syncMirrors();
    if (firstList) {
      if (!changed && !this.refusals.retryWanted) this.publish();
      this.checkSourcesReady();
    }
    this.statuses.requestFlush();
    if (firstList || changed) this.options.onApiPodsListed?.(new Set(this.apiPods.keys()));
  }

  /** Whether any pod's desired part changed since the last call (a new resourceVersion is looked at). */
  private desiredChanged(): boolean {
    let changed = this.desiredKeys.size !== this.apiPods.size;
    const next = new Map<string, { resourceVersion: string; key: string }>();
    for (const [uid, object] of this.apiPods) {
      const resourceVersion = object.metadata.resourceVersion ?? "";
      const before = this.desiredKeys.get(uid);
      const key = before && before.resourceVersion === resourceVersion ? before.key : desiredKey(object);
      if (!before || before.key !== key) changed = true;
      next.set(uid, { resourceVersion, key });
    }
    this.desiredKeys = next;
    return changed;
  }

  /** Static and apiserver pods, merged, to the core. Refused apiserver pods are failed. */
  private publish(): void {
    this.refusals.retryWanted = false;
    const pods: SourcePod[] = [...this.staticScan.pods];
    const problems: SourceProblem[] = [...this.staticScan.problems];
    const objectsByOrigin = new Map<string, PodObject>();
    for (const object of this.apiPods.values()) {
      const origin = `${API_ORIGIN}${object.metadata.namespace}/${object.metadata.name}`;
      objectsByOrigin.set(origin, object);
      if (this.refusals.has(object.metadata.uid)) continue;
      try {
        pods.push({ spec: podFromApiObject(object), origin, manifest: object as unknown as Record<string, unknown> });
      } catch (error) {
        if (!(error instanceof ManifestError)) {
          // A shape the converter did not foresee: this pod is left out, the others go on.
          this.options.log.log("error", "Pod from the apiserver not understood", { pod: origin, error: (error as Error).message });
          problems.push({ origin, field: "", message: `not understood: ${(error as Error).message}` });
          continue;
        }
        // A new version of a running pod that cannot be read: the accepted one keeps running.
        const deleting = object.metadata.deletionTimestamp ? BigInt(object.metadata.deletionGracePeriodSeconds ?? 0) : undefined;
        const held = this.options.loop.accepted.keep(object.metadata.uid, deleting);
        if (held) {
          pods.push(held);
          this.refusals.updateNotApplied(object, error.field, error.detail, true);
          continue;
        }
        problems.push({ origin, field: error.field, message: error.detail });
        this.refusals.refuse(object, error.field, error.detail);
      }
    }
    const rejected = this.options.loop.setPods({ pods, problems });
    const staticRefusals = [...this.staticScan.problems];
    for (const r of rejected) {
      const object = objectsByOrigin.get(r.origin);
      if (object && r.keptRunning) this.refusals.updateNotApplied(object, r.field, r.message);
      else if (object) this.refusals.refuse(object, r.field, r.message, r.reason);
      else staticRefusals.push(r);
    }
    this.refusals.reportStatic(staticRefusals);
  }

  /**
   * The service environment variables of a pod in `namespace`; undefined until the Services were
   * listed once (the kubelet refuses to make a container's env before, rather than leave them out).
   */
  serviceEnvironment(namespace: string, enableServiceLinks: boolean): Record<string, string> | undefined {
    if (this.servicesListed) return serviceEnvironment(this.services.current.values(), namespace, enableServiceLinks);
    if (this.restoredServices) return serviceEnvironment(this.restoredServices, namespace, enableServiceLinks);
    return undefined;
  }

  /** Where the status of the core's pod `uid` goes. */
  private targetOf(uid: string): StatusTarget | undefined {
    const object = this.apiPods.get(uid);
    if (object) {
      return {
        namespace: object.metadata.namespace,
        name: object.metadata.name,
        uid,
        current: object.status,
        deleting: !!object.metadata.deletionTimestamp,
        hostNetwork: !!object.spec?.hostNetwork,
        generation: object.metadata.generation,
        resourceVersion: object.metadata.resourceVersion,
        spec: object.spec,
      };
    }
    const staticPod = this.staticScan.pods.find((p) => p.spec.uid === uid);
    if (!staticPod) return undefined;
    for (const p of this.reflector.current.values()) {
      if (p.metadata.annotations?.[MIRROR_ANNOTATION] === uid && !p.metadata.deletionTimestamp) {
        return { namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid, current: p.status, deleting: false, hostNetwork: staticPod.spec.hostNetwork, generation: p.metadata.generation, resourceVersion: p.metadata.resourceVersion, spec: (staticPod.manifest as { spec?: Record<string, any> } | undefined)?.spec };
      }
    }
    return undefined;
  }

  private async health(): Promise<NodeHealth> {
    const health: NodeHealth = {
      lastRelistOkMs: this.options.loop.lastRelistOkMs,
      plegThresholdMs: this.options.loop.plegThresholdMs,
      pressure: this.options.loop.pressure,
      shuttingDown: this.options.loop.shuttingDown,
      reservations: this.options.reservations,
      kubeletPort: this.options.kubeletPort,
      extendedResources: this.options.extendedResources?.(),
    };
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), RUNTIME_STATUS_TIMEOUT_MS).unref());
    try {
      const [version, conditions] = await Promise.race([Promise.all([this.options.runtime.version(), this.options.runtime.status()]), timeout]);
      this.runtimeName = version.runtimeName;
      health.runtimeName = version.runtimeName;
      health.runtimeVersion = version.runtimeVersion;
      health.runtimeReady = conditions.find((c) => c.type === "RuntimeReady")?.status ?? false;
      const network = conditions.find((c) => c.type === "NetworkReady");
      health.networkReady = network?.status ?? false;
      health.networkMessage = network && !network.status ? `${network.reason}: ${network.message}` : undefined;
    } catch {
      health.runtimeReady = undefined;
    }
    if (health.runtimeReady !== undefined) {
      // The images the runtime holds; the last list stays when this one fails.
      this.images = await Promise.race([this.options.runtime.listImages(), timeout]).catch(() => this.images);
    }
    health.images = this.images;
    return health;
  }
}

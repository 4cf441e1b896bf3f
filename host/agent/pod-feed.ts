// The pods-and-sources feed: the desired pods from every source, through the node's own
// admission (node affinity, sysctls) into the core; what the core refused, logged once and shown
// in the pod table; a refused update of a running pod replaced by the version that runs; and what
// a container's environment and volumes may read of its pod.
import { PodFeeder } from "./pod-feeder.js";
import { AcceptedPods } from "../sources/accepted-pods.js";
import type { PodSpec } from "../core/types.js";
import type { Core } from "../core/core.js";
import type { PodFacts } from "../env/container-env.js";
import { DEFAULT_TERMINATION_MESSAGE_PATH } from "../logs/termination-message.js";
import { sysctlRefusal } from "../pod-runtime/ports-and-sysctls.js";
import { NODE_AFFINITY_MESSAGE, matchesNode } from "../pod-runtime/node-affinity.js";
import type { SourcePod, ScanResult } from "../sources/static-pods.js";
import { objectRefsOf } from "../volumes/object-refs.js";
import type { AgentLoopOptions, PodRefusal } from "./agent-options.js";

/** Calls the core, or does nothing while a trapped core is being re-created. */
export type WithCore = <T>(fn: (core: Core) => T) => T | undefined;

/** Each container's termination message path and policy, with the Pod API's defaults. */
function terminationMessagesOf(spec: Record<string, any>): Record<string, { path: string; policy: string }> {
  const out: Record<string, { path: string; policy: string }> = {};
  for (const c of [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]) {
    if (!c || typeof c.name !== "string") continue;
    out[c.name] = { path: typeof c.terminationMessagePath === "string" && c.terminationMessagePath ? c.terminationMessagePath : DEFAULT_TERMINATION_MESSAGE_PATH, policy: c.terminationMessagePolicy === "FallbackToLogsOnError" ? "FallbackToLogsOnError" : "File" };
  }
  return out;
}

export class PodFeed {
  /** The complete desired set, as the sources said it last. */
  desired: SourcePod[] = [];
  /** Source problems already logged (origin, field, message), as of the last scan. */
  private loggedProblems = new Set<string>();
  private feeder = new PodFeeder();
  /** The pods the core accepted at the last feed: what keeps running through a refused update. */
  readonly accepted = new AcceptedPods();
  /** Pods the host's admission (node affinity, sysctls) let in: not checked again while desired. */
  private hostAdmitted = new Set<string>();

  constructor(
    private options: AgentLoopOptions,
    private withCore: WithCore,
    private nowMs: () => number,
  ) {}

  /** A new scan of the pod sources: the complete desired set. Returns the pods the node refused. */
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
    return rejected;
  }

  /** A new core (after a trap) knows no pods: the whole desired set is fed to it again. */
  refeed(): void {
    this.feeder.reset();
    this.feedPods();
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

  /** What a container's env may read of pod `uid`: its object's metadata, the node, the pod's containers. */
  podFacts(uid: string): PodFacts | undefined {
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
      hostIps: this.options.nodeIps ?? [nodeIp],
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
}

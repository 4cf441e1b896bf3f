// The kubelet's own metrics, with upstream's names, labels and buckets (pkg/kubelet/metrics), fed
// by the host as things happen: relists, runtime calls, started containers, evictions. Served at
// /metrics; /metrics/resource (what metrics-server reads) is built from the stats Summary.
import fs from "node:fs";
import { KUBELET_VERSION } from "../cluster/node-object.js";
import { Counter, Gauge, Histogram, exponentialBuckets, renderAll, type AnyMetric } from "./registry.js";
import type { RelistCounts } from "../relist/relister.js";

/** Prometheus' DefBuckets, which the kubelet uses for PLEG histograms. */
const DEF_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

/** CRI method names as the kubelet's `operation_type` label spells them. */
const OPERATION_TYPES: Record<string, string> = {
  Version: "version",
  Status: "status",
  RunPodSandbox: "run_podsandbox",
  StopPodSandbox: "stop_podsandbox",
  RemovePodSandbox: "remove_podsandbox",
  ListPodSandbox: "list_podsandbox",
  PodSandboxStatus: "podsandbox_status",
  CreateContainer: "create_container",
  StartContainer: "start_container",
  StopContainer: "stop_container",
  RemoveContainer: "remove_container",
  ListContainers: "list_containers",
  ContainerStatus: "container_status",
  UpdateContainerResources: "update_container_resources",
  ReopenContainerLog: "reopen_container_log",
  Exec: "exec",
  Attach: "attach",
  PortForward: "port_forward",
  ImageStatus: "image_status",
  PullImage: "pull_image",
};

/** The version nanolet reports: the Node's kubeletVersion, split as kubernetes_build_info labels it. */
const [MAJOR, MINOR] = KUBELET_VERSION.replace(/^v/, "").split(".");
export const BUILD_INFO = { major: MAJOR, minor: MINOR, git_version: KUBELET_VERSION };

export class KubeletMetrics {
  readonly relistDuration = new Histogram("kubelet_pleg_relist_duration_seconds", "[ALPHA] Duration in seconds for relisting pods in PLEG.", DEF_BUCKETS);
  readonly relistInterval = new Histogram("kubelet_pleg_relist_interval_seconds", "[ALPHA] Interval in seconds between relisting in PLEG.", DEF_BUCKETS);
  readonly lastSeen = new Gauge("kubelet_pleg_last_seen_seconds", "[ALPHA] Timestamp in seconds when PLEG was last seen active.");
  readonly runningPods = new Gauge("kubelet_running_pods", "[ALPHA] Number of pods that have a running pod sandbox");
  readonly runningContainers = new Gauge("kubelet_running_containers", "[ALPHA] Number of containers currently running");
  readonly podStartDuration = new Histogram("kubelet_pod_start_duration_seconds", "[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run", POD_START_BUCKETS);
  readonly runtimeOperations = new Counter("kubelet_runtime_operations_total", "[ALPHA] Cumulative number of runtime operations by operation type.");
  readonly runtimeErrors = new Counter("kubelet_runtime_operations_errors_total", "[ALPHA] Cumulative number of runtime operation errors by operation type.");
  readonly runtimeDuration = new Histogram("kubelet_runtime_operations_duration_seconds", "[ALPHA] Duration in seconds of runtime operations. Broken down by operation type.", exponentialBuckets(0.005, 2.5, 14));
  readonly evictions = new Counter("kubelet_evictions", "[ALPHA] Cumulative number of pod evictions by eviction signal");
  readonly startedContainers = new Counter("kubelet_started_containers_total", "[ALPHA] Cumulative number of containers started");
  readonly startedContainerErrors = new Counter("kubelet_started_containers_errors_total", "[ALPHA] Cumulative number of errors when starting containers");
  readonly buildInfo = new Gauge("kubernetes_build_info", "[ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.");
  readonly processCpu = new Counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  readonly processRss = new Gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  readonly processStart = new Gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.");
  readonly processFds = new Gauge("process_open_fds", "Number of open file descriptors.");
  private lastRelistEndMs = 0;
  private processStartS = Math.round(Date.now() / 1000 - process.uptime());

  constructor() {
    this.buildInfo.set({ ...BUILD_INFO, git_commit: "", git_tree_state: "", build_date: "", go_version: "", compiler: "nanolet", platform: `linux/${process.arch === "x64" ? "amd64" : process.arch}` }, 1);
  }

  /** A relist that succeeded, started at `startMs` and ended at `endMs`. */
  relisted(startMs: number, endMs: number, counts: RelistCounts): void {
    this.relistDuration.observe({}, (endMs - startMs) / 1000);
    if (this.lastRelistEndMs > 0) this.relistInterval.observe({}, (endMs - this.lastRelistEndMs) / 1000);
    this.lastRelistEndMs = endMs;
    this.lastSeen.set({}, Math.floor(endMs / 1000));
    this.runningPods.set({}, counts.readySandboxes);
    for (const [state, n] of Object.entries(counts.containers)) this.runningContainers.set({ container_state: state }, n);
  }

  /** One CRI call, as the host's runtime client made it. */
  runtimeCall(method: string, durationMs: number, failed: boolean): void {
    const operation_type = OPERATION_TYPES[method] ?? method.toLowerCase();
    this.runtimeOperations.inc({ operation_type });
    this.runtimeDuration.observe({ operation_type }, durationMs / 1000);
    if (failed) this.runtimeErrors.inc({ operation_type });
    if (method === "StartContainer") {
      if (failed) this.startedContainerErrors.inc({ container_type: "container", code: "unknown" });
      else this.startedContainers.inc({ container_type: "container" });
    }
  }

  evicted(signal: string): void {
    this.evictions.inc({ eviction_signal: signal });
  }

  private processSample(): void {
    const usage = process.cpuUsage();
    this.processCpu.reset();
    this.processCpu.inc({}, (usage.user + usage.system) / 1e6);
    this.processRss.set({}, process.memoryUsage.rss());
    this.processStart.set({}, this.processStartS);
    try {
      this.processFds.set({}, fs.readdirSync("/proc/self/fd").length);
    } catch {
      // no /proc: left out
    }
  }

  render(): string {
    this.processSample();
    const all: AnyMetric[] = [
      this.relistDuration, this.relistInterval, this.lastSeen, this.runningPods, this.runningContainers, this.podStartDuration,
      this.runtimeOperations, this.runtimeErrors, this.runtimeDuration, this.evictions, this.startedContainers,
      this.startedContainerErrors, this.buildInfo, this.processCpu, this.processRss, this.processStart, this.processFds,
    ] as AnyMetric[];
    return renderAll(all);
  }
}

/** `/metrics/resource` from a stats Summary: what metrics-server reads (upstream's resource metrics). */
export function resourceMetrics(summary: any, scrapeFailed: boolean): string {
  const nodeCpu = new Counter("node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds");
  const nodeMem = new Gauge("node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes");
  const nodeSwap = new Gauge("node_swap_usage_bytes", "[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems");
  const cCpu = new Counter("container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds");
  const cMem = new Gauge("container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes");
  const cStart = new Gauge("container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds");
  const pCpu = new Counter("pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds");
  const pMem = new Gauge("pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes");
  const scrapeError = new Gauge("resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise");
  const node = summary?.node ?? {};
  if (node.cpu) nodeCpu.inc({}, node.cpu.usageCoreNanoSeconds / 1e9);
  if (node.memory) nodeMem.set({}, node.memory.workingSetBytes);
  for (const pod of summary?.pods ?? []) {
    const ref = { namespace: pod.podRef.namespace, pod: pod.podRef.name };
    if (pod.cpu) pCpu.inc(ref, pod.cpu.usageCoreNanoSeconds / 1e9);
    if (pod.memory) pMem.set(ref, pod.memory.workingSetBytes);
    for (const c of pod.containers ?? []) {
      const labels = { container: c.name, ...ref };
      if (c.cpu) cCpu.inc(labels, c.cpu.usageCoreNanoSeconds / 1e9);
      if (c.memory) cMem.set(labels, c.memory.workingSetBytes);
      cStart.set(labels, Date.parse(c.startTime) / 1000);
    }
  }
  scrapeError.set({}, scrapeFailed ? 1 : 0);
  return renderAll([cCpu, cMem, cStart, nodeCpu, nodeMem, nodeSwap, pCpu, pMem, scrapeError] as AnyMetric[]);
}

/** `/metrics/probes`: the prober's metrics; nanolet runs no probes yet, so no series. */
export function probeMetrics(): string {
  return renderAll([
    new Counter("prober_probe_total", "[ALPHA] Cumulative number of a liveness, readiness or startup probe for a container by result."),
    new Histogram("prober_probe_duration_seconds", "[ALPHA] Duration in seconds for a probe response.", exponentialBuckets(0.005, 2.5, 14)),
  ] as AnyMetric[]);
}

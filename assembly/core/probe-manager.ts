// The probe manager (upstream prober/prober_manager.go): a worker per container probe, each on its
// own schedule; it queues run-probe actions, counts their outcomes against the thresholds, and
// marks the pod for a sync when a result changes. What the results mean for `started`, `ready`
// and the liveness kill is read by the status manager and the sync step (see probe-status.ts).
import { WorkerContext } from "./context";
import { ContainerSpec, ContainerStatus, EventType, PodPhase, PodSpec } from "./model";
import { PodManager } from "./pod-manager";
import { PodRecord } from "./pod-record";
import { WorkerState } from "./pod-workers";
import { HandlerTag, HttpGetAction, ProbeHandler, ProbeOutcome, ProbeRequest, ProbeResult, ProbeType, TcpSocketAction } from "./probe-types";
import { ProbeWorker, TickDecision } from "./probe-worker";
import { RestartPolicy, restartPolicyOf } from "./restart";

const PROBE_TYPE_NAMES: string[] = ["Startup", "Liveness", "Readiness"];

class ProbeFlight {
  constructor(public rec: PodRecord, public worker: ProbeWorker, public containerId: string) {}
}

export class ProbeManager {
  private inFlight: Map<u64, ProbeFlight> = new Map();
  /// The first time the manager ran: workers made within a period of it start at a spread-out
  /// offset, so that an agent restart does not run every probe at once (upstream's jitter).
  private startMs: u64 = 0;
  private hasStarted: bool = false;
  /// Reused by every tick: whether the tick changed the result the status reads.
  private changed: bool[] = [false];
  runCount: u64 = 0;

  constructor(private ctx: WorkerContext, private pods: PodManager) {}

  /// Runs every probe worker that is due, and those a status asked for out of schedule.
  poll(nowMs: u64): void {
    if (!this.hasStarted) {
      this.hasStarted = true;
      this.startMs = nowMs;
    }
    const records = this.pods.list;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      const spec = rec.spec;
      if (spec !== null && rec.probesForSpec !== spec) this.syncWorkers(rec, spec, nowMs);
      const workers = rec.probeWorkers;
      for (let j = 0, m = workers.length; j < m; j++) {
        const worker = unchecked(workers[j]);
        if (worker.stopped || worker.inFlightId != 0) continue;
        const due = nowMs >= worker.nextTickMs;
        if (!due && !worker.triggered) continue;
        worker.triggered = false;
        if (due) worker.nextTickMs = nextTickAfter(worker.nextTickMs, worker.periodMs, nowMs);
        this.tick(rec, worker, nowMs);
      }
    }
  }

  /// The earliest tick of a worker that is not waiting for a result; u64.MAX_VALUE if none.
  deadline(nowMs: u64): u64 {
    let deadline = u64.MAX_VALUE;
    const records = this.pods.list;
    for (let i = 0, n = records.length; i < n; i++) {
      const rec = unchecked(records[i]);
      if (rec.spec !== null && rec.probesForSpec !== rec.spec) return nowMs;
      const workers = rec.probeWorkers;
      for (let j = 0, m = workers.length; j < m; j++) {
        const worker = unchecked(workers[j]);
        if (worker.stopped || worker.inFlightId != 0) continue;
        if (worker.triggered) return nowMs;
        if (worker.nextTickMs < deadline) deadline = worker.nextTickMs;
      }
    }
    return deadline;
  }

  handleResults(nowMs: u64, results: ProbeResult[]): void {
    for (let i = 0; i < results.length; i++) {
      const result = results[i];
      if (!this.inFlight.has(result.actionId)) continue;
      const flight = this.inFlight.get(result.actionId);
      this.inFlight.delete(result.actionId);
      const worker = flight.worker;
      worker.inFlightId = 0;
      if (flight.rec.state == WorkerState.Forgotten || worker.stopped) continue;
      this.recordEvent(flight.rec, worker, result);
      if (worker.record(flight.containerId, result.outcome)) flight.rec.dirty = true;
    }
  }

  private tick(rec: PodRecord, worker: ProbeWorker, nowMs: u64): void {
    const status = rec.status;
    const spec = rec.lastSpec!;
    const finished = status !== null && (status.phase == PodPhase.Succeeded || status.phase == PodPhase.Failed);
    const stopping = rec.state != WorkerState.SyncPod || rec.spec === null || spec.beingDeleted;
    const neverRestart = restartPolicyOf(spec) == RestartPolicy.Never;
    let containerStatus = status !== null ? statusOf(status.containerStatuses, worker.containerName) : null;
    if (containerStatus === null && status !== null) containerStatus = statusOf(status.initContainerStatuses, worker.containerName);
    const changed = this.changed;
    const decision = worker.tick(containerStatus, finished, stopping, neverRestart, nowMs, changed);
    if (changed[0]) rec.dirty = true;
    if (decision != TickDecision.Run) return;
    const container = containerOf(spec, worker.containerName);
    if (container === null) return;
    const request = new ProbeRequest();
    request.containerId = worker.containerId;
    request.containerName = worker.containerName;
    request.probeType = worker.type;
    request.handler = resolvePorts(worker.probe.handler, container);
    request.timeoutSeconds = worker.probe.timeoutSeconds;
    const id = this.ctx.runProbe(rec, request);
    worker.inFlightId = id;
    this.inFlight.set(id, new ProbeFlight(rec, worker, worker.containerId));
    this.runCount++;
  }

  /// The events the kubelet's prober records for one outcome.
  private recordEvent(rec: PodRecord, worker: ProbeWorker, result: ProbeResult): void {
    const kind = PROBE_TYPE_NAMES[worker.type];
    const outcome = result.outcome;
    if (outcome == ProbeOutcome.Failure) {
      this.ctx.event(rec, worker.containerName, EventType.Warning, "Unhealthy", kind + " probe failed: " + result.output);
    } else if (outcome == ProbeOutcome.Unknown) {
      this.ctx.event(rec, worker.containerName, EventType.Warning, "Unhealthy", kind + " probe errored: " + result.output);
    } else if (outcome == ProbeOutcome.Error) {
      this.ctx.event(rec, worker.containerName, EventType.Warning, "Unhealthy", kind + " probe errored and resulted in unknown state: " + result.output);
    } else if (outcome == ProbeOutcome.Warning) {
      this.ctx.event(rec, worker.containerName, EventType.Warning, "ProbeWarning", kind + " probe warning: " + result.output);
    }
  }

  /// Makes the pod's workers match its spec: one per probe; a worker whose container and type
  /// stay keeps its state (a spec update that leaves the probe alone restarts nothing).
  private syncWorkers(rec: PodRecord, spec: PodSpec, nowMs: u64): void {
    const kept: ProbeWorker[] = [];
    const count = spec.containers.length + spec.initContainers.length;
    for (let i = 0; i < count; i++) {
      // Regular containers, then sidecars (only sidecars among init containers have probes).
      const container = i < spec.containers.length ? spec.containers[i] : spec.initContainers[i - spec.containers.length];
      for (let type = 0; type < 3; type++) {
        const probe = container.probe(type);
        if (probe === null) continue;
        let worker = findWorker(rec.probeWorkers, container.name, type);
        if (worker === null || worker.stopped) {
          worker = new ProbeWorker(container.name, type, probe);
          worker.nextTickMs = this.firstTickMs(rec.uid, container.name, type, worker.periodMs, nowMs);
        } else {
          worker.probe = probe;
        }
        kept.push(worker);
      }
    }
    rec.probeWorkers = kept;
    rec.probesForSpec = spec;
  }

  /// Upstream probes at once when a worker starts, except in the first period after the agent
  /// started, when it waits a random part of the period. The core has no randomness: the part is
  /// a hash of the probe's identity, spread as evenly and reproducible from run to run.
  private firstTickMs(uid: string, name: string, type: i32, periodMs: u64, nowMs: u64): u64 {
    return firstTickAtMs(uid, name, type, periodMs, this.startMs, nowMs);
  }
}

/// A new worker's first tick: now, or within the first period after the agent started a part of
/// the period given by a hash of the probe's identity (upstream: a random part).
export function firstTickAtMs(uid: string, name: string, type: i32, periodMs: u64, agentStartMs: u64, nowMs: u64): u64 {
  if (nowMs < agentStartMs || nowMs - agentStartMs >= periodMs) return nowMs;
  const spread = <u64>(fnv1a(uid + "/" + name + "/" + type.toString()) % 1000);
  return nowMs + periodMs * spread / 1000;
}

/// The tick after the one at `tickMs`.
export function nextTickAfter(tickMs: u64, periodMs: u64, nowMs: u64): u64 {
  if (periodMs == 0) return nowMs + 1000;
  if (tickMs + periodMs > nowMs) return tickMs + periodMs;
  // Ticks missed while busy are dropped, as a Go ticker drops them.
  return nowMs + periodMs - (nowMs - tickMs) % periodMs;
}

function findWorker(workers: ProbeWorker[], name: string, type: i32): ProbeWorker | null {
  for (let i = 0; i < workers.length; i++) if (workers[i].containerName == name && workers[i].type == type) return workers[i];
  return null;
}

/// The pod's worker for container `name`'s probe of `type`, or null.
export function probeWorkerOf(rec: PodRecord, name: string, type: i32): ProbeWorker | null {
  return findWorker(rec.probeWorkers, name, type);
}

function statusOf(statuses: ContainerStatus[], name: string): ContainerStatus | null {
  for (let i = 0; i < statuses.length; i++) if (statuses[i].name == name) return statuses[i];
  return null;
}

function containerOf(spec: PodSpec, name: string): ContainerSpec | null {
  for (let i = 0; i < spec.containers.length; i++) if (spec.containers[i].name == name) return spec.containers[i];
  for (let i = 0; i < spec.initContainers.length; i++) if (spec.initContainers[i].name == name) return spec.initContainers[i];
  return null;
}

/// The port a probe names, as a number: a name is looked up in the container's ports (upstream
/// findPortByName); anything else is passed on for the host to refuse.
export function resolvePort(port: string, container: ContainerSpec): string {
  for (let i = 0; i < container.ports.length; i++) {
    if (container.ports[i].name.length > 0 && container.ports[i].name == port) return container.ports[i].containerPort.toString();
  }
  return port;
}

/// The handler with its named port replaced by the number (probes and hooks alike).
export function resolvePorts(handler: ProbeHandler, container: ContainerSpec): ProbeHandler {
  if (handler.tag == HandlerTag.HttpGet) {
    const get = handler.httpGet!;
    const resolved = new HttpGetAction();
    resolved.scheme = get.scheme;
    resolved.host = get.host;
    resolved.port = resolvePort(get.port, container);
    resolved.path = get.path;
    resolved.headers = get.headers;
    const out = new ProbeHandler();
    out.tag = HandlerTag.HttpGet;
    out.httpGet = resolved;
    return out;
  }
  if (handler.tag == HandlerTag.TcpSocket) {
    const tcp = handler.tcpSocket!;
    const out = new ProbeHandler();
    out.tag = HandlerTag.TcpSocket;
    out.tcpSocket = new TcpSocketAction(tcp.host, resolvePort(tcp.port, container));
    return out;
  }
  return handler;
}

function fnv1a(text: string): u32 {
  let hash: u32 = 2166136261;
  for (let i = 0; i < text.length; i++) {
    hash ^= <u32>text.charCodeAt(i);
    hash *= 16777619;
  }
  return hash;
}

// A Core that writes every call it passes on to a trace (see codec.ts): the inputs, the outputs,
// and a trap if the core traps. A relist whose snapshot is the same as the previous one apart
// from its time is written as `same`, so a steady node costs a few bytes a second.
import type { ActionResult, GcPlan, NodeStats, PackedSnapshot, PlannedAction, PodRejection, PodSpec, RuntimeSnapshot, ProbeResult } from "../core/types.js";
import { Core, CoreConfig, CoreTrapError, type BackOffEntry, type ImageGcRequest, type NodeShutdownSettings } from "../core/core.js";
import { TRACE_FORMAT, encodeHardwareState, encodeLine, encodeValue } from "./codec.js";
import type { HardwareState } from "../core/core.js";
import type { DeviceState } from "../devices/device-manager.js";

/** Where trace lines go, one string per line without its newline. */
export type TraceSink = (line: string) => void;

export class TraceWriter {
  private previousSnapshot = "";

  constructor(readonly sink: TraceSink) {}

  header(t: number, fields: Record<string, unknown>): void {
    this.sink(encodeLine({ t, op: "header", format: TRACE_FORMAT, ...fields }));
  }

  /** Marks the start of a new core instance (start, agent restart, trap recovery). */
  created(t: number, config: CoreConfig): void {
    this.previousSnapshot = "";
    this.sink(encodeLine({ t, op: "create", config }));
  }

  pods(t: number, pods: PodSpec[], out: PodRejection[] | null): void {
    this.sink(encodeLine({ t, op: "pods", pods, out }));
  }

  relist(t: number, snapshot: RuntimeSnapshot): void {
    const body = encodeValue({ ...snapshot, listedAtMs: 0 });
    if (body === this.previousSnapshot) {
      this.sink(encodeLine({ t, op: "relist", listedAtMs: snapshot.listedAtMs, same: true }));
      return;
    }
    this.previousSnapshot = body;
    this.sink(encodeLine({ t, op: "relist", snapshot }));
  }

  results(t: number, results: ActionResult[]): void {
    this.sink(encodeLine({ t, op: "results", results }));
  }

  probes(t: number, results: ProbeResult[]): void {
    this.sink(encodeLine({ t, op: "probes", results }));
  }

  stats(t: number, stats: NodeStats): void {
    this.sink(encodeLine({ t, op: "stats", stats }));
  }

  backOffs(t: number, entries: BackOffEntry[]): void {
    this.sink(encodeLine({ t, op: "backoffs", entries }));
  }

  runtimeEvent(t: number): void {
    this.sink(encodeLine({ t, op: "runtime-event" }));
  }

  eventStream(t: number, streaming: boolean): void {
    this.sink(encodeLine({ t, op: "event-stream", streaming }));
  }

  devices(t: number, resource: string, devices: DeviceState[]): void {
    this.sink(encodeLine({ t, op: "devices", resource, devices }));
  }

  hardwareRestore(t: number, state: HardwareState): void {
    this.sink(encodeLine({ t, op: "hardware-restore", state: encodeHardwareState(state) }));
  }

  nodeShutdown(t: number, active: boolean): void {
    this.sink(encodeLine({ t, op: "node-shutdown", active }));
  }

  poll(t: number, out: PlannedAction[] | null): void {
    this.sink(encodeLine({ t, op: "poll", out }));
  }

  trap(t: number, error: CoreTrapError): void {
    this.sink(encodeLine({ t, op: "trap", call: error.call, reason: error.reason }));
  }

  /** Something the simulator did to the world (an exit, a fault); replay skips these. */
  sim(t: number, event: string, fields: Record<string, unknown>): void {
    this.sink(encodeLine({ t, op: "sim", event, ...fields }));
  }
}

export class RecordingCore implements Core {
  constructor(
    private inner: Core,
    private trace: TraceWriter,
  ) {}

  /** Wraps a new core instance, writing its `create` line first. */
  static wrap(inner: Core, trace: TraceWriter, t: number, config: CoreConfig): RecordingCore {
    trace.created(t, config);
    return new RecordingCore(inner, trace);
  }

  /** Runs a call; when it traps, writes its input line (without outputs) and then the trap. */
  private guard<T>(t: number, fn: () => T, writeInput: () => void = () => {}): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof CoreTrapError) {
        writeInput();
        this.trace.trap(t, error);
      }
      throw error;
    }
  }

  handlePods(nowMs: number, pods: PodSpec[]): PodRejection[] {
    const out = this.guard(nowMs, () => this.inner.handlePods(nowMs, pods), () => this.trace.pods(nowMs, pods, null));
    this.trace.pods(nowMs, pods, out);
    return out;
  }

  handleSnapshot(nowMs: number, snapshot: RuntimeSnapshot, packed?: PackedSnapshot): void {
    this.trace.relist(nowMs, snapshot);
    this.guard(nowMs, () => this.inner.handleSnapshot(nowMs, snapshot, packed));
  }

  handleActionResults(nowMs: number, results: ActionResult[]): void {
    this.trace.results(nowMs, results);
    this.guard(nowMs, () => this.inner.handleActionResults(nowMs, results));
  }

  handleProbeResults(nowMs: number, results: ProbeResult[]): void {
    this.trace.probes(nowMs, results);
    this.guard(nowMs, () => this.inner.handleProbeResults(nowMs, results));
  }

  handleNodeStats(nowMs: number, stats: NodeStats): void {
    this.trace.stats(nowMs, stats);
    this.guard(nowMs, () => this.inner.handleNodeStats(nowMs, stats));
  }

  /** An output (the checkpoint): not an input of the core, so not recorded. */
  backOffs(nowMs: number): BackOffEntry[] {
    return this.inner.backOffs?.(nowMs) ?? [];
  }

  restoreBackOffs(nowMs: number, entries: BackOffEntry[]): void {
    this.trace.backOffs(nowMs, entries);
    this.guard(nowMs, () => this.inner.restoreBackOffs?.(nowMs, entries));
  }

  handleRuntimeEvent(nowMs: number): void {
    this.trace.runtimeEvent(nowMs);
    this.guard(nowMs, () => this.inner.handleRuntimeEvent?.(nowMs));
  }

  handleEventStream(nowMs: number, streaming: boolean): void {
    this.trace.eventStream(nowMs, streaming);
    this.guard(nowMs, () => this.inner.handleEventStream?.(nowMs, streaming));
  }

  handleNodeShutdown(nowMs: number, active: boolean): void {
    this.trace.nodeShutdown(nowMs, active);
    this.guard(nowMs, () => this.inner.handleNodeShutdown?.(nowMs, active));
  }

  handleDevices(nowMs: number, resource: string, devices: DeviceState[]): void {
    this.trace.devices(nowMs, resource, devices);
    this.guard(nowMs, () => this.inner.handleDevices?.(nowMs, resource, devices));
  }

  restoreHardware(state: HardwareState): void {
    this.trace.hardwareRestore(0, state);
    this.inner.restoreHardware?.(state);
  }

  /** A query of the agent's state: nothing to record. */
  hardwareState(): HardwareState | undefined {
    return this.inner.hardwareState?.();
  }

  /** A query of the agent's state: nothing to record. */
  nodeShuttingDown(): boolean {
    return this.inner.nodeShuttingDown?.() ?? false;
  }

  /** Given at creation (the `create` line's config): not recorded again. */
  configureNodeShutdown(settings: NodeShutdownSettings): number {
    return this.inner.configureNodeShutdown?.(settings) ?? 0;
  }

  pollActions(nowMs: number): PlannedAction[] {
    const out = this.guard(nowMs, () => this.inner.pollActions(nowMs), () => this.trace.poll(nowMs, null));
    this.trace.poll(nowMs, out);
    return out;
  }

  pollDeadline(): number | undefined {
    return this.inner.pollDeadline();
  }

  /** A pure function of its arguments, outside the agent's state: not recorded, nothing to replay. */
  planImageGc(request: ImageGcRequest): GcPlan {
    if (!this.inner.planImageGc) throw new Error("this core has no image-gc plan");
    return this.inner.planImageGc(request);
  }
}

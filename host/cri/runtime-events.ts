// Container changes pushed by the runtime, so that a change is relisted at once instead of at the
// next relist period. Sources, tried in order:
// - CRI's GetContainerEvents (KEP-3386; containerd 1.7+ and 2.x, CRI-O): every container and
//   sandbox created, started, stopped and deleted. While it streams, the core relists only every
//   five minutes (upstream's evented PLEG); a stream that breaks brings the configured period back
//   until it streams again, and after five breaks it is given up for good (upstream's
//   eventedPlegMaxStreamRetries), falling back to the next source.
// - containerd's own event service (task exits and OOM kills; containerd 1.6 has no CRI events):
//   an exit, with its status, is relisted at once; the periodic relist stays on.
// A source that says UNIMPLEMENTED is skipped; a broken stream is opened again after a back-off.
import * as grpc from "@grpc/grpc-js";
import { readBytesField, readVarintField } from "../common/proto-wire.js";
import { MAX_CRI_STREAM_FAILURES } from "../common/pleg-policy.js";

export type RuntimeEventSourceName = "cri" | "containerd" | "none";

/** The streams a runtime may offer (GrpcRuntime has both; a test may give its own). */
export interface RuntimeEventStreams {
  containerEvents(): grpc.ClientReadableStream<Record<string, any>>;
  containerdTaskExits(): grpc.ClientReadableStream<Buffer>;
  /** Whether the connection to the runtime is up (grpc's READY); taken as up when absent. */
  connected?(): boolean;
}

export interface RuntimeEventsOptions {
  /**
   * containerd says a task (a container or a sandbox's pause) exited; its CRI plugin may not
   * show it for a while yet. `containerId` is empty when the event does not parse; `exit` is
   * what the event says of the exit (absent from an event without it).
   */
  onExit: (containerId: string, exit?: TaskExit) => void;
  /** containerd says the kernel's OOM killer hit a task of this container. */
  onOomKill?: (containerId: string) => void;
  /** A CRI container event (`kind`: created, started, stopped, deleted): the CRI shows it already. */
  onChange: (containerId: string, kind: string) => void;
  /**
   * The CRI event stream is up (true): it brings every change, and relists may slow down; or it
   * broke or was given up (false): relist at the configured period again.
   */
  onEventStream: (streaming: boolean) => void;
  /** The first wait before a broken stream is opened again (doubling up to 30 s); 1 s by default. */
  firstRetryMs?: number;
  /** The source in use changed: which, and why. */
  onSource?: (source: RuntimeEventSourceName, reason: string) => void;
}

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/**
 * A stream says it is up by its first message or its headers, and containerd sends neither
 * before its first event: a stream still open this long on a connected channel is taken as up.
 */
const STREAM_SETTLE_MS = 500;

/** CRI ContainerEventType names, as grpc-js's loader gives them, to the words the log uses. */
const CRI_EVENT_KINDS: Record<string, string> = {
  CONTAINER_CREATED_EVENT: "created",
  CONTAINER_STARTED_EVENT: "started",
  CONTAINER_STOPPED_EVENT: "stopped",
  CONTAINER_DELETED_EVENT: "deleted",
};

export class RuntimeEvents {
  private stream?: grpc.ClientReadableStream<unknown>;
  private timer?: NodeJS.Timeout;
  private settleTimer?: NodeJS.Timeout;
  private retryMs: number;
  private stopped = false;
  /** Whether the CRI stream is up, as last told to `onEventStream`. */
  private criStreaming = false;
  /** CRI event streams that broke so far (never reset, as upstream). */
  criFailures = 0;
  /** The source being tried or used. */
  source: RuntimeEventSourceName = "cri";

  constructor(private streams: RuntimeEventStreams, private options: RuntimeEventsOptions) {
    this.retryMs = this.firstRetryMs;
  }

  private get firstRetryMs(): number {
    return this.options.firstRetryMs ?? FIRST_RETRY_MS;
  }

  start(): void {
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.settleTimer);
    this.stream?.cancel();
  }

  private open(): void {
    if (this.stopped || this.source === "none") return;
    const source = this.source;
    const stream: grpc.ClientReadableStream<any> = source === "cri" ? this.streams.containerEvents() : this.streams.containerdTaskExits();
    this.stream = stream;
    let announced = false;
    const announce = () => {
      if (announced) return;
      announced = true;
      this.retryMs = this.firstRetryMs;
      this.options.onSource?.(source, "streaming");
      if (source === "cri") this.setCriStreaming(true);
    };
    stream.on("metadata", announce);
    const settle = () => {
      if (this.stopped || stream !== this.stream || announced) return;
      if (this.streams.connected?.() ?? true) announce();
      else this.settleTimer = setTimeout(settle, STREAM_SETTLE_MS);
    };
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(settle, STREAM_SETTLE_MS);
    stream.on("data", (message: any) => {
      announce();
      if (source === "containerd") {
        const event = readTaskEvent(message);
        if (event.kind === "oom") this.options.onOomKill?.(event.containerId);
        else if (event.kind === "exit") this.options.onExit(event.containerId, event.exit);
      } else {
        this.options.onChange(String(message?.containerId ?? ""), CRI_EVENT_KINDS[message?.containerEventType] ?? String(message?.containerEventType));
      }
    });
    stream.on("error", (error: grpc.ServiceError) => {
      if (this.stopped || stream !== this.stream || error.code === grpc.status.CANCELLED) return;
      if (error.code === grpc.status.UNIMPLEMENTED) {
        this.fallBack(`${source === "cri" ? "GetContainerEvents" : "containerd events"}: ${error.details || error.message}`);
        return;
      }
      this.retry(`${error.details || error.message}`);
    });
    stream.on("end", () => {
      if (!this.stopped && stream === this.stream) this.retry("the event stream ended");
    });
  }

  private setCriStreaming(streaming: boolean): void {
    if (this.criStreaming === streaming) return;
    this.criStreaming = streaming;
    this.options.onEventStream(streaming);
  }

  /** This source is not to be had: the next one is tried at once. */
  private fallBack(reason: string): void {
    this.stream?.cancel();
    this.stream = undefined;
    this.setCriStreaming(false);
    this.source = this.source === "cri" ? "containerd" : "none";
    this.retryMs = this.firstRetryMs;
    this.options.onSource?.(this.source, reason);
    this.open();
  }

  /**
   * The stream broke (a runtime restart): opened again after a doubling wait. Meanwhile changes
   * come as no event, so a broken CRI stream brings the configured relist period back; its fifth
   * break gives it up.
   */
  private retry(reason: string): void {
    if (this.source === "cri") {
      this.setCriStreaming(false);
      if (++this.criFailures >= MAX_CRI_STREAM_FAILURES) {
        this.fallBack(`GetContainerEvents broke ${this.criFailures} times, given up: ${reason}`);
        return;
      }
    }
    this.stream = undefined;
    this.options.onSource?.(this.source, `retrying in ${this.retryMs} ms: ${reason}`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }
}

/** What a containerd task-exit event says of the exit of a container's main process. */
export interface TaskExit {
  exitCode: number;
  /** When the process exited (the event's exited_at), in ns since the epoch. */
  finishedAtNs: bigint;
}

export type TaskEvent =
  | { kind: "exit"; containerId: string; exit?: TaskExit }
  | { kind: "oom"; containerId: string }
  /** An exec'd process ended (a probe's ExecSync): not the container's exit. */
  | { kind: "exec-exit"; containerId: string };

const TOPIC_OOM = "/tasks/oom";

/**
 * Reads a containerd event envelope (topic: field 3; event: field 4, an Any whose value is field
 * 2). A TaskExit (events/task.proto) has container_id 1, id 2 (the process: the container's ID
 * for its main process, an exec ID otherwise), exit_status 4 and exited_at 5 (a Timestamp:
 * seconds 1, nanos 2); a TaskOOM has container_id 1. What does not parse reads as an exit of
 * container "" (the caller relists at once).
 */
export function readTaskEvent(envelope: Buffer): TaskEvent {
  const topic = readBytesField(envelope, 3)?.toString("utf8");
  const any = readBytesField(envelope, 4);
  const event = any && readBytesField(any, 2);
  const containerId = event && readBytesField(event, 1)?.toString("utf8");
  if (!event || !containerId) return { kind: "exit", containerId: "" };
  if (topic === TOPIC_OOM) return { kind: "oom", containerId };
  const processId = readBytesField(event, 2)?.toString("utf8");
  if (processId && processId !== containerId) return { kind: "exec-exit", containerId };
  const exitedAt = readBytesField(event, 5);
  const seconds = exitedAt && readVarintField(exitedAt, 1);
  // Without its process ID or time the event is an older or foreign shape: only "something exited".
  if (!processId || !seconds) return { kind: "exit", containerId };
  const nanos = readVarintField(exitedAt, 2) ?? 0;
  // exit_status is a uint32; a signal's exit is 128 + its number, as the CRI reports it.
  const exitCode = (readVarintField(event, 4) ?? 0) | 0;
  return { kind: "exit", containerId, exit: { exitCode, finishedAtNs: BigInt(seconds) * 1_000_000_000n + BigInt(nanos) } };
}

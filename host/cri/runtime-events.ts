// Exits pushed by the runtime, so that a container that died is relisted at once instead of at
// the next relist period (on average half a period later). Sources, tried in order: CRI's
// GetContainerEvents (KEP-3386; containerd 1.7+, CRI-O), then containerd's own event service
// (task exits; containerd 1.6 has no CRI events). A source that says UNIMPLEMENTED is skipped;
// a stream that breaks (the runtime restarted) is opened again after a back-off. Events only
// hasten relists: the periodic relist stays on, so a lost event costs at most one period.
import * as grpc from "@grpc/grpc-js";
import { readBytesField } from "../proto-wire.js";

export type RuntimeEventSourceName = "cri" | "containerd" | "none";

/** The streams a runtime may offer (GrpcRuntime has both; a test may give its own). */
export interface RuntimeEventStreams {
  containerEvents(): grpc.ClientReadableStream<Record<string, any>>;
  containerdTaskExits(): grpc.ClientReadableStream<Buffer>;
}

export interface RuntimeEventsOptions {
  /** A container (or a sandbox's pause) stopped; `containerId` is empty when the source does not say. */
  onExit: (containerId: string) => void;
  /** The source in use changed: which, and why. */
  onSource?: (source: RuntimeEventSourceName, reason: string) => void;
}

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export class RuntimeEvents {
  private stream?: grpc.ClientReadableStream<unknown>;
  private timer?: NodeJS.Timeout;
  private retryMs = FIRST_RETRY_MS;
  private stopped = false;
  /** The source being tried or used. */
  source: RuntimeEventSourceName = "cri";

  constructor(private streams: RuntimeEventStreams, private options: RuntimeEventsOptions) {}

  start(): void {
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
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
      this.retryMs = FIRST_RETRY_MS;
      this.options.onSource?.(source, "streaming");
    };
    // grpc-js says a server stream is up only by its first message or its metadata.
    stream.on("metadata", announce);
    stream.on("data", (message: any) => {
      announce();
      if (source === "containerd") {
        this.options.onExit(taskExitContainerId(message));
      } else if (message?.containerEventType === "CONTAINER_STOPPED_EVENT") {
        this.options.onExit(String(message.containerId ?? ""));
      }
    });
    stream.on("error", (error: grpc.ServiceError) => {
      if (this.stopped || stream !== this.stream || error.code === grpc.status.CANCELLED) return;
      if (error.code === grpc.status.UNIMPLEMENTED) {
        this.source = source === "cri" ? "containerd" : "none";
        this.options.onSource?.(this.source, `${source === "cri" ? "GetContainerEvents" : "containerd events"}: ${error.details || error.message}`);
        this.open();
        return;
      }
      this.retry(`${error.details || error.message}`);
    });
    stream.on("end", () => {
      if (!this.stopped && stream === this.stream) this.retry("the event stream ended");
    });
  }

  /** The stream broke (a runtime restart): opened again after a doubling wait. */
  private retry(reason: string): void {
    this.stream = undefined;
    this.options.onSource?.(this.source, `retrying in ${this.retryMs} ms: ${reason}`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }
}

/**
 * The container ID of a containerd task-exit envelope (Envelope.event, field 4, is an Any whose
 * value, field 2, is a TaskExit whose container_id is field 1); empty when it does not parse.
 */
export function taskExitContainerId(envelope: Buffer): string {
  const any = readBytesField(envelope, 4);
  const exit = any && readBytesField(any, 2);
  const id = exit && readBytesField(exit, 1);
  return id ? id.toString("utf8") : "";
}

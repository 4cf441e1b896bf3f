// AssemblyScript mirrors of the probe family of wit/pod-spec.wit and wit/actions.wit: container ports, probe handlers,
// probes, readiness gates, and the run-probe request and its result. Field order follows WIT.

export class ContainerPort {
  constructor(
    public name: string = "",
    public containerPort: i32 = 0,
    public hostPort: i32 = 0,
    public protocol: string = "TCP",
    public hostIp: string = "",
  ) {}
}

export class HttpHeader {
  constructor(public name: string = "", public value: string = "") {}
}

export class HttpGetAction {
  scheme: string = "HTTP";
  host: string = "";
  port: string = "";
  path: string = "";
  headers: HttpHeader[] = [];
}

export class TcpSocketAction {
  constructor(public host: string = "", public port: string = "") {}
}

export class GrpcAction {
  port: i32 = 0;
  /// null: no `service` given.
  service: string | null = null;
}

/// Case numbers of the WIT variant `probe-handler`.
export const enum HandlerTag {
  Exec = 0,
  HttpGet = 1,
  TcpSocket = 2,
  Grpc = 3,
  Sleep = 4,
}

/// The WIT variant `probe-handler`: `tag` picks which payload field is meaningful.
export class ProbeHandler {
  tag: i32 = HandlerTag.Exec;
  command: string[] = [];
  httpGet: HttpGetAction | null = null;
  tcpSocket: TcpSocketAction | null = null;
  grpc: GrpcAction | null = null;
  sleepSeconds: i64 = 0;
}

export class Probe {
  handler: ProbeHandler = new ProbeHandler();
  initialDelaySeconds: i32 = 0;
  timeoutSeconds: i32 = 1;
  periodSeconds: i32 = 10;
  successThreshold: i32 = 1;
  failureThreshold: i32 = 3;
  hasGracePeriod: bool = false;
  terminationGracePeriodSeconds: i64 = 0;
}

export class ReadinessGate {
  constructor(public conditionType: string = "", public status: string = "") {}
}

/// Case numbers of the WIT enum `probe-type`; also an index into a container's probes.
export const enum ProbeType {
  Startup = 0,
  Liveness = 1,
  Readiness = 2,
}

export class ProbeRequest {
  containerId: string = "";
  containerName: string = "";
  probeType: i32 = ProbeType.Readiness;
  handler: ProbeHandler = new ProbeHandler();
  timeoutSeconds: i32 = 1;
}

/// Case numbers of the WIT enum `probe-outcome`.
export const enum ProbeOutcome {
  Success = 0,
  Warning = 1,
  Failure = 2,
  Unknown = 3,
  Error = 4,
}

export class ProbeResult {
  constructor(public actionId: u64 = 0, public outcome: i32 = ProbeOutcome.Success, public output: string = "") {}
}

/// Case numbers of the WIT enum `hook-type`.
export const enum HookType {
  PostStart = 0,
  PreStop = 1,
}

export class HookRequest {
  containerId: string = "";
  containerName: string = "";
  hookType: i32 = HookType.PostStart;
  handler: ProbeHandler = new ProbeHandler();
  timeoutSeconds: i64 = 0;
}

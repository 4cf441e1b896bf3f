// The real runtime: CRI runtime.v1 over gRPC on a unix socket (containerd, CRI-O).
// Retries what a runtime that is (re)starting answers: UNAVAILABLE, and UNKNOWN "server is not
// initialized yet" (containerd's CRI plugin during start-up).
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  ContainerConfig,
  ContainerDetail,
  ContainerInfo,
  ContainerStateName,
  GrpcCode,
  Runtime,
  REQUEST_TIMEOUT_MS,
  RETRY_POLICY,
  RuntimeCondition,
  RuntimeError,
  RuntimeVersion,
  SandboxConfig,
  SandboxInfo,
  ContainerResources,
  StreamingRequest,
  type ContainerSecurity,
  type ImageFsUsage,
  type RegistryAuth,
  type ImageInfo,
  type ImageUser,
  type SecurityProfile,
} from "./runtime.js";
import { CRI_PROTO_PATH } from "../common/asset-paths.js";
import { bytesField } from "../common/proto-wire.js";
import { decodeContainerList, decodeSandboxList } from "./list-decoding.js";

const PROTO_PATH = CRI_PROTO_PATH;

type Message = Record<string, any>;
type Unary = (request: Message, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, response: Message) => void) => void;
/** A method's path and request encoder, for calls whose answer nanolet decodes itself. */
interface MethodWire {
  path: string;
  requestSerialize: (request: Message) => Buffer;
}

export interface GrpcRuntimeOptions {
  /** `unix:///run/containerd/containerd.sock` or a plain socket path. */
  endpoint: string;
  /** How long to keep retrying a runtime that is not (yet) answering. */
  retryBudgetMs?: number;
  onRetry?: (call: string, attempt: number, error: string) => void;
  /** The runtime answered again after calls had failed as unreachable (`downForMs` after the first failure). */
  onReconnected?: (downForMs: number) => void;
  /** Every call's outcome, retries included in its duration (the kubelet's runtime operation metrics). */
  onCall?: (method: string, durationMs: number, failed: boolean) => void;
}

function isRetryable(err: grpc.ServiceError): boolean {
  if (err.code === grpc.status.UNAVAILABLE) return true;
  return err.code === grpc.status.UNKNOWN && /server is not initialized yet/.test(err.details ?? err.message);
}

const CONTAINER_STATES: Record<string, ContainerStateName> = {
  CONTAINER_CREATED: "created",
  CONTAINER_RUNNING: "running",
  CONTAINER_EXITED: "exited",
  CONTAINER_UNKNOWN: "unknown",
};

/** CRI MountPropagation numbers. */
const MOUNT_PROPAGATION = { private: 0, "host-to-container": 1, bidirectional: 2 } as const;

export class GrpcRuntime implements Runtime {
  private runtimeClient: grpc.Client & Record<string, Unary>;
  private imageClient: grpc.Client & Record<string, Unary>;
  private retryBudgetMs: number;
  /** The relist's two list calls: their answers are decoded by list-decoding.ts, not proto-loader. */
  private listContainersWire: MethodWire;
  private listPodSandboxWire: MethodWire;
  /** When calls started failing as unreachable; undefined while the runtime answers. */
  private unreachableSinceMs: number | undefined;

  constructor(private options: GrpcRuntimeOptions) {
    const definition = protoLoader.loadSync(PROTO_PATH, {
      keepCase: false,
      longs: String,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as any;
    const runtimeService = definition["runtime.v1.RuntimeService"] as unknown as Record<string, MethodWire>;
    this.listContainersWire = runtimeService.ListContainers!;
    this.listPodSandboxWire = runtimeService.ListPodSandbox!;
    const address = options.endpoint.startsWith("unix:") ? options.endpoint : `unix://${options.endpoint}`;
    const credentials = grpc.credentials.createInsecure();
    // One channel each; containerd serves both services on the same socket.
    // grpc-js waits between reconnection attempts 1 s growing by 1.6x to 120 s: after a
    // two-minute outage it saw containerd back only ~26 s later. docs/behaviour.md promises 100 ms doubling
    // to 2 s, the retry policy's own steps.
    const channelOptions = {
      "grpc.max_receive_message_length": 16 * 1024 * 1024,
      "grpc.initial_reconnect_backoff_ms": RETRY_POLICY.firstDelayMs,
      "grpc.max_reconnect_backoff_ms": RETRY_POLICY.maxDelayMs,
    };
    this.runtimeClient = new pkg.runtime.v1.RuntimeService(address, credentials, channelOptions);
    this.imageClient = new pkg.runtime.v1.ImageService(address, credentials, channelOptions);
    this.retryBudgetMs = options.retryBudgetMs ?? RETRY_POLICY.budgetMs;
  }

  private call(client: Record<string, Unary>, method: string, request: Message, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Message> {
    return this.callWith(method, request, timeoutMs, (metadata, options, callback) => client[method]!.call(client, request, metadata, options, callback));
  }

  /** A call whose answer `decode` reads from the wire bytes (the relist's lists). */
  private callDecoding<T>(wire: MethodWire, method: string, request: Message, decode: (bytes: Buffer) => T): Promise<T> {
    return this.callWith(method, request, REQUEST_TIMEOUT_MS, (metadata, options, callback) =>
      this.runtimeClient.makeUnaryRequest(wire.path, wire.requestSerialize, decode, request, metadata, options, callback as grpc.requestCallback<T>),
    );
  }

  private async callWith<T>(
    method: string,
    request: Message,
    timeoutMs: number,
    invoke: (metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, response?: T) => void) => void,
  ): Promise<T> {
    const started = Date.now();
    let delayMs: number = RETRY_POLICY.firstDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await new Promise<T>((resolve, reject) => {
          invoke(new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, response) => (err ? reject(err) : resolve(response as T)));
        });
        if (this.unreachableSinceMs !== undefined) {
          const downForMs = Date.now() - this.unreachableSinceMs;
          this.unreachableSinceMs = undefined;
          this.options.onReconnected?.(downForMs);
        }
        this.options.onCall?.(method, Date.now() - started, false);
        return response;
      } catch (error) {
        const err = error as grpc.ServiceError;
        if (err.code === grpc.status.UNAVAILABLE) this.unreachableSinceMs ??= Date.now();
        if (isRetryable(err) && Date.now() - started + delayMs < this.retryBudgetMs) {
          this.options.onRetry?.(method, attempt, err.details ?? err.message);
          await new Promise((r) => setTimeout(r, delayMs));
          delayMs = Math.min(delayMs * 2, RETRY_POLICY.maxDelayMs);
          continue;
        }
        this.options.onCall?.(method, Date.now() - started, true);
        throw new RuntimeError(`${method}: ${err.details || err.message}`, err.code ?? GrpcCode.UNKNOWN, method);
      }
    }
  }

  async version(): Promise<RuntimeVersion> {
    const r = await this.call(this.runtimeClient, "Version", { version: "v1" });
    return { runtimeName: r.runtimeName, runtimeVersion: r.runtimeVersion, runtimeApiVersion: r.runtimeApiVersion };
  }

  async podSandboxIp(id: string): Promise<string> {
    const r = await this.call(this.runtimeClient, "PodSandboxStatus", { podSandboxId: id });
    return r.status?.network?.ip ?? "";
  }

  async status(): Promise<RuntimeCondition[]> {
    const r = await this.call(this.runtimeClient, "Status", {});
    return ((r.status?.conditions ?? []) as Message[]).map((c) => ({ type: c.type, status: !!c.status, reason: c.reason ?? "", message: c.message ?? "" }));
  }

  async sandboxImage(): Promise<string | undefined> {
    const r = await this.call(this.runtimeClient, "Status", { verbose: true });
    return sandboxImageOf(r.info?.config);
  }

  async runPodSandbox(config: SandboxConfig): Promise<string> {
    const r = await this.call(this.runtimeClient, "RunPodSandbox", { config: sandboxConfigMessage(config), runtimeHandler: config.runtimeHandler ?? "" });
    return r.podSandboxId;
  }

  async stopPodSandbox(id: string): Promise<void> {
    await this.call(this.runtimeClient, "StopPodSandbox", { podSandboxId: id });
  }

  async removePodSandbox(id: string): Promise<void> {
    await this.call(this.runtimeClient, "RemovePodSandbox", { podSandboxId: id });
  }

  async listPodSandboxes(labelSelector: Record<string, string>): Promise<SandboxInfo[]> {
    return this.callDecoding(this.listPodSandboxWire, "ListPodSandbox", { filter: { labelSelector } }, decodeSandboxList);
  }

  async listPodSandboxBytes(labelSelector: Record<string, string>): Promise<Buffer> {
    return this.callDecoding(this.listPodSandboxWire, "ListPodSandbox", { filter: { labelSelector } }, (bytes) => bytes);
  }

  async createContainer(sandboxId: string, config: ContainerConfig, sandbox: SandboxConfig): Promise<string> {
    const r = await this.call(this.runtimeClient, "CreateContainer", {
      podSandboxId: sandboxId,
      config: {
        metadata: { name: config.name, attempt: config.attempt },
        image: { image: config.image },
        command: config.command,
        args: config.args,
        workingDir: config.workingDir ?? "",
        envs: config.env.map((e) => ({ key: e.name, value: e.value })),
        labels: config.labels,
        annotations: config.annotations,
        logPath: config.logPath,
        mounts: (config.mounts ?? []).map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readonly, propagation: MOUNT_PROPAGATION[m.propagation ?? "private"] })),
        devices: (config.devices ?? []).map((d) => ({ containerPath: d.containerPath, hostPath: d.hostPath, permissions: d.permissions })),
        CDIDevices: (config.cdiDevices ?? []).map((name) => ({ name })),
        stdin: config.stdin ?? false,
        stdinOnce: config.stdinOnce ?? false,
        tty: config.tty ?? false,
        linux: {
          resources: config.resources ? linuxResources(config.resources) : {},
          securityContext: containerSecurityMessage(config.security, sandbox, config.targetContainerId),
        },
      },
      sandboxConfig: sandboxConfigMessage(sandbox),
    });
    return r.containerId;
  }

  async updateContainerResources(id: string, resources: ContainerResources): Promise<void> {
    await this.call(this.runtimeClient, "UpdateContainerResources", { containerId: id, linux: linuxResources(resources) });
  }

  async startContainer(id: string): Promise<void> {
    await this.call(this.runtimeClient, "StartContainer", { containerId: id });
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    // The call blocks for up to the grace period: give it that on top of the usual timeout.
    await this.call(this.runtimeClient, "StopContainer", { containerId: id, timeout: String(timeoutSeconds) }, REQUEST_TIMEOUT_MS + timeoutSeconds * 1000);
  }

  async removeContainer(id: string): Promise<void> {
    await this.call(this.runtimeClient, "RemoveContainer", { containerId: id });
  }

  async listContainers(labelSelector: Record<string, string>): Promise<ContainerInfo[]> {
    return this.callDecoding(this.listContainersWire, "ListContainers", { filter: { labelSelector } }, decodeContainerList);
  }

  async listContainersBytes(labelSelector: Record<string, string>): Promise<Buffer> {
    return this.callDecoding(this.listContainersWire, "ListContainers", { filter: { labelSelector } }, (bytes) => bytes);
  }

  async containerStatus(id: string): Promise<ContainerDetail> {
    const r = await this.call(this.runtimeClient, "ContainerStatus", { containerId: id });
    const s = r.status as Message | null;
    if (!s) throw new RuntimeError(`ContainerStatus: no status for ${id}`, GrpcCode.NOT_FOUND, "ContainerStatus");
    return {
      id: s.id,
      logPath: s.logPath || undefined,
      sandboxId: "",
      name: s.metadata?.name ?? "",
      attempt: s.metadata?.attempt ?? 0,
      image: s.image?.image ?? "",
      state: CONTAINER_STATES[s.state] ?? "unknown",
      createdAtNs: BigInt(s.createdAt ?? "0"),
      startedAtNs: BigInt(s.startedAt ?? "0"),
      finishedAtNs: BigInt(s.finishedAt ?? "0"),
      exitCode: s.exitCode ?? 0,
      reason: s.reason ?? "",
      message: s.message ?? "",
      labels: s.labels ?? {},
      annotations: s.annotations ?? {},
    };
  }

  async imageStatus(image: string): Promise<ImageUser | undefined> {
    const r = await this.call(this.imageClient, "ImageStatus", { image: { image } });
    if (r.image == null || r.image.id === "") return undefined;
    const uid = r.image.uid?.value;
    if (uid !== undefined && uid !== null) return { uid: Number(uid) };
    return r.image.username ? { username: r.image.username } : {};
  }

  async imageInfo(image: string): Promise<(ImageInfo & { user: ImageUser }) | undefined> {
    const r = await this.call(this.imageClient, "ImageStatus", { image: { image } });
    if (r.image == null || r.image.id === "") return undefined;
    const uid = r.image.uid?.value;
    const user: ImageUser = uid !== undefined && uid !== null ? { uid: Number(uid) } : r.image.username ? { username: r.image.username } : {};
    return { ...imageOf(r.image), user };
  }

  async removeImage(imageId: string): Promise<void> {
    await this.call(this.imageClient, "RemoveImage", { image: { image: imageId } });
  }

  async imageFsInfo(): Promise<ImageFsUsage[]> {
    const r = await this.call(this.imageClient, "ImageFsInfo", {});
    return ((r.imageFilesystems ?? []) as Message[]).map((f) => ({
      mountpoint: f.fsId?.mountpoint ?? "",
      usedBytes: Number(f.usedBytes?.value ?? 0),
      inodesUsed: Number(f.inodesUsed?.value ?? 0),
    }));
  }

  async pullImage(image: string, auth?: RegistryAuth): Promise<string> {
    const r = await this.call(this.imageClient, "PullImage", auth ? { image: { image }, auth } : { image: { image } });
    return r.imageRef;
  }

  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    // The command's timeout is the runtime's to enforce, from when the command started; the call
    // itself gets the usual request timeout on top, as upstream's CRI client does. (A deadline of
    // the timeout plus 5 s failed most exec probes of a loaded node: starting a runc exec there
    // takes seconds, which the upstream kubelet waits for.)
    const deadlineMs = REQUEST_TIMEOUT_MS + Math.max(0, timeoutSeconds) * 1000;
    const r = await this.call(this.runtimeClient, "ExecSync", { containerId: id, cmd, timeout: String(timeoutSeconds) }, deadlineMs);
    return { stdout: Buffer.from(r.stdout ?? []), stderr: Buffer.from(r.stderr ?? []), exitCode: r.exitCode ?? 0 };
  }

  async streamingUrl(request: StreamingRequest): Promise<string> {
    let r: Message;
    if (request.kind === "exec") {
      const { containerId, cmd, tty, stdin, stdout, stderr } = request;
      r = await this.call(this.runtimeClient, "Exec", { containerId, cmd, tty, stdin, stdout, stderr });
    } else if (request.kind === "attach") {
      const { containerId, tty, stdin, stdout, stderr } = request;
      r = await this.call(this.runtimeClient, "Attach", { containerId, tty, stdin, stdout, stderr });
    } else {
      r = await this.call(this.runtimeClient, "PortForward", { podSandboxId: request.sandboxId, port: request.ports });
    }
    if (typeof r.url !== "string" || r.url === "") throw new RuntimeError(`${request.kind}: the runtime returned no streaming URL`, GrpcCode.UNKNOWN, request.kind);
    return r.url;
  }

  async listImages(): Promise<ImageInfo[]> {
    const r = await this.call(this.imageClient, "ListImages", {});
    return ((r.images ?? []) as Message[]).map(imageOf);
  }

  async reopenContainerLog(id: string): Promise<void> {
    await this.call(this.runtimeClient, "ReopenContainerLog", { containerId: id });
  }

  /**
   * CRI's container event stream (GetContainerEvents, KEP-3386): each change as
   * `{ containerId, containerEventType }` (the type's enum name). A runtime without it ends the
   * stream with UNIMPLEMENTED.
   */
  containerEvents(): grpc.ClientReadableStream<Message> {
    return (this.runtimeClient as any).GetContainerEvents({}) as grpc.ClientReadableStream<Message>;
  }

  /**
   * containerd's own event service (not CRI), subscribed to task exits and OOM kills in the
   * CRI's namespace (`k8s.io`): what containerd 1.6, which has no CRI events, can say about
   * exits. The request is written by hand (a repeated string, field 1: the filters, any of which
   * may match) and the envelopes are read by readTaskEvent.
   */
  containerdTaskExits(): grpc.ClientReadableStream<Buffer> {
    const request = Buffer.concat([
      bytesField(1, 'topic=="/tasks/exit",namespace=="k8s.io"'),
      bytesField(1, 'topic=="/tasks/oom",namespace=="k8s.io"'),
    ]);
    return this.runtimeClient.makeServerStreamRequest(
      "/containerd.services.events.v1.Events/Subscribe",
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      request,
    );
  }

  /** Whether the runtime's connection is up (an event stream opened now reaches it). */
  connected(): boolean {
    return this.runtimeClient.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
  }

  close(): void {
    this.runtimeClient.close();
    this.imageClient.close();
  }
}

/** CRI LinuxContainerResources; int64 fields go as strings, as proto-loader expects for longs. */
function linuxResources(r: ContainerResources): Message {
  return {
    cpuPeriod: String(r.cpuPeriodUs),
    cpuQuota: String(r.cpuQuotaUs),
    cpuShares: String(r.cpuShares),
    memoryLimitInBytes: String(r.memoryLimitBytes),
    oomScoreAdj: String(r.oomScoreAdj),
    cpusetCpus: r.cpusetCpus ?? "",
    cpusetMems: r.cpusetMems ?? "",
  };
}

/**
 * The pod's namespaces: the node's network, PID or IPC when asked; one PID namespace per container
 * unless shared. An ephemeral container with a target joins the target's PID namespace where it
 * would otherwise have its own (as upstream: a shared or the node's stays as it is).
 */
function namespaceOptions(config: SandboxConfig, targetContainerId = ""): Message {
  const ns = config.namespaces;
  const pid = ns?.hostPid ? "NODE" : ns?.sharedPid ? "POD" : targetContainerId ? "TARGET" : "CONTAINER";
  return { network: config.hostNetwork ? "NODE" : "POD", pid, ipc: ns?.hostIpc ? "NODE" : "POD", targetId: pid === "TARGET" ? targetContainerId : "" };
}

function profileMessage(profile: SecurityProfile | undefined): Message | null {
  return profile ? { profileType: profile.type, localhostRef: profile.localhostRef ?? "" } : null;
}

function int64Value(value: number | undefined): Message | null {
  return value === undefined ? null : { value: String(value) };
}

function containerSecurityMessage(security: ContainerSecurity | undefined, sandbox: SandboxConfig, targetContainerId = ""): Message {
  if (!security) return { namespaceOptions: namespaceOptions(sandbox, targetContainerId) };
  return {
    capabilities: { addCapabilities: security.capabilities.add, dropCapabilities: security.capabilities.drop },
    privileged: security.privileged,
    namespaceOptions: namespaceOptions(sandbox, targetContainerId),
    runAsUser: int64Value(security.runAsUser),
    runAsUsername: security.runAsUsername ?? "",
    runAsGroup: int64Value(security.runAsGroup),
    readonlyRootfs: security.readonlyRootfs,
    supplementalGroups: security.supplementalGroups.map(String),
    noNewPrivs: security.noNewPrivs,
    maskedPaths: security.maskedPaths,
    readonlyPaths: security.readonlyPaths,
    seccomp: profileMessage(security.seccomp),
    apparmor: profileMessage(security.apparmor),
  };
}

function sandboxConfigMessage(config: SandboxConfig): Message {
  const security = config.security;
  return {
    metadata: { name: config.podName, uid: config.podUid, namespace: config.podNamespace, attempt: config.attempt },
    // A host-network sandbox shares the node's UTS namespace: the runtime refuses a hostname.
    hostname: config.hostNetwork ? "" : config.hostname ?? config.podName,
    logDirectory: config.logDirectory,
    dnsConfig: config.dns ?? null,
    portMappings: (config.portMappings ?? []).map((p) => ({ protocol: p.protocol, containerPort: p.containerPort, hostPort: p.hostPort, hostIp: p.hostIp })),
    labels: config.labels,
    annotations: config.annotations,
    linux: {
      cgroupParent: config.cgroupParent,
      securityContext: {
        namespaceOptions: namespaceOptions(config),
        runAsUser: int64Value(security?.runAsUser),
        runAsGroup: int64Value(security?.runAsGroup),
        supplementalGroups: (security?.supplementalGroups ?? []).map(String),
        privileged: security?.privileged ?? false,
        seccomp: profileMessage(security?.seccomp),
      },
      sysctls: security?.sysctls ?? {},
    },
  };
}

/** A CRI Image message as nanolet keeps it. */
function imageOf(i: Message): ImageInfo {
  return { id: i.id ?? "", repoTags: i.repoTags ?? [], repoDigests: i.repoDigests ?? [], sizeBytes: Number(i.size ?? 0), pinned: i.pinned === true };
}

/**
 * The sandbox image in the verbose CRI Status' `config` (containerd: `sandboxImage` in 1.x,
 * `pinnedImages.sandbox` in 2.x); undefined when it says neither or is not JSON.
 */
export function sandboxImageOf(config: unknown): string | undefined {
  if (typeof config !== "string" || config.length > 1024 * 1024) return undefined;
  try {
    const parsed = JSON.parse(config);
    const image = parsed?.sandboxImage ?? parsed?.pinnedImages?.sandbox;
    return typeof image === "string" && image !== "" ? image : undefined;
  } catch {
    return undefined;
  }
}

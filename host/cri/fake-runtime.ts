// An in-memory CRI runtime with the real lifecycle and state names, for host unit tests (and
// later the simulator). Time comes from an injected clock; faults are injected per call name.
import * as protoLoader from "@grpc/proto-loader";
import { CRI_PROTO_PATH } from "../common/asset-paths.js";
import {
  type ImageFsUsage,
  type RegistryAuth,
  ContainerConfig,
  ContainerResources,
  ImageUser,
  ContainerDetail,
  ContainerInfo,
  GrpcCode,
  Runtime,
  RuntimeCondition,
  RuntimeError,
  RuntimeVersion,
  SandboxConfig,
  SandboxInfo,
  type StreamingRequest,
  type ImageInfo,
} from "./runtime.js";

interface FakeSandbox extends SandboxInfo {
  config: SandboxConfig;
}

interface FakeContainer extends ContainerDetail {
  /** The cgroup values given at create or by the last update. */
  resources?: ContainerResources;
  /** The config it was created with (tests read security, mounts, tty). */
  config?: ContainerConfig;
  /** Exited, but not shown yet (exitUnseen): the exit a later stop or showExit makes seen. */
  unseenExit?: { exitCode: number; reason: string };
}

type Serialize = (message: object) => Buffer;
let listSerializers: { sandboxes: Serialize; containers: Serialize } | undefined;

/**
 * The list answers as a real runtime would send them, encoded by protobufjs from the CRI proto
 * (an encoder independent of nanolet's own scanner), loaded on first use.
 */
function serializers(): { sandboxes: Serialize; containers: Serialize } {
  if (!listSerializers) {
    const service = protoLoader.loadSync(CRI_PROTO_PATH, { keepCase: false, longs: String, enums: String, defaults: true })["runtime.v1.RuntimeService"] as unknown as Record<string, { responseSerialize: Serialize }>;
    listSerializers = { sandboxes: service.ListPodSandbox!.responseSerialize, containers: service.ListContainers!.responseSerialize };
  }
  return listSerializers;
}

const CRI_CONTAINER_STATES = { created: "CONTAINER_CREATED", running: "CONTAINER_RUNNING", exited: "CONTAINER_EXITED", unknown: "CONTAINER_UNKNOWN" };

function matches(labels: Record<string, string>, selector: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

export class FakeRuntime implements Runtime {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Set<string>();
  /** Images PullImage can fetch. */
  readonly pullable = new Set<string>();
  /** Who an image runs as (ImageStatus uid / username); unset: the image says nothing. */
  readonly imageUsers = new Map<string, ImageUser>();
  /** Every call made, in order, as "Method id". */
  readonly calls: string[] = [];
  /** Next failure per method: the error is thrown once, then removed. */
  readonly failNext = new Map<string, RuntimeError>();
  private nextId = 1;

  constructor(private nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n) {}

  private record(method: string, detail = ""): void {
    this.calls.push(detail ? `${method} ${detail}` : method);
    const failure = this.failNext.get(method);
    if (failure) {
      this.failNext.delete(method);
      throw failure;
    }
  }

  private newId(prefix: string): string {
    return `${prefix}${(this.nextId++).toString(16).padStart(8, "0")}`;
  }

  async version(): Promise<RuntimeVersion> {
    this.record("Version");
    return { runtimeName: "fake", runtimeVersion: "0.0.0", runtimeApiVersion: "v1" };
  }

  async podSandboxIp(id: string): Promise<string> {
    this.record("PodSandboxStatus", id);
    return "";
  }

  async status(): Promise<RuntimeCondition[]> {
    this.record("Status");
    return [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      { type: "NetworkReady", status: true, reason: "", message: "" },
    ];
  }

  async runPodSandbox(config: SandboxConfig): Promise<string> {
    this.record("RunPodSandbox", config.podName);
    const id = this.newId("sb");
    this.sandboxes.set(id, {
      id,
      podUid: config.podUid,
      podName: config.podName,
      podNamespace: config.podNamespace,
      attempt: config.attempt,
      state: "ready",
      createdAtNs: this.nowNs(),
      labels: { ...config.labels },
      annotations: { ...config.annotations },
      config,
    });
    return id;
  }

  async stopPodSandbox(id: string): Promise<void> {
    this.record("StopPodSandbox", id);
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return; // idempotent, as CRI requires
    for (const c of this.containers.values()) if (c.sandboxId === id && c.state === "running") this.stopped(c);
    sandbox.state = "not-ready";
  }

  async removePodSandbox(id: string): Promise<void> {
    this.record("RemovePodSandbox", id);
    for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
    this.sandboxes.delete(id);
  }

  async listPodSandboxes(selector: Record<string, string>): Promise<SandboxInfo[]> {
    this.record("ListPodSandbox");
    return [...this.sandboxes.values()].filter((s) => matches(s.labels, selector)).map(({ config, ...info }) => ({ ...info }));
  }

  async listPodSandboxBytes(selector: Record<string, string>): Promise<Buffer> {
    const items = (await this.listPodSandboxes(selector)).map((s) => ({
      id: s.id, metadata: { name: s.podName, uid: s.podUid, namespace: s.podNamespace, attempt: s.attempt },
      state: s.state === "ready" ? "SANDBOX_READY" : "SANDBOX_NOTREADY", createdAt: String(s.createdAtNs), labels: s.labels, annotations: s.annotations,
    }));
    return serializers().sandboxes({ items });
  }

  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    this.record("CreateContainer", config.name);
    const sandbox = this.sandboxes.get(sandboxId);
    if (!sandbox || sandbox.state !== "ready") {
      throw new RuntimeError(`CreateContainer: sandbox ${sandboxId} is not ready`, GrpcCode.UNKNOWN, "CreateContainer");
    }
    if (!this.images.has(config.image)) {
      throw new RuntimeError(`CreateContainer: image "${config.image}" not found`, GrpcCode.NOT_FOUND, "CreateContainer");
    }
    const id = this.newId("c");
    this.containers.set(id, {
      id,
      sandboxId,
      name: config.name,
      attempt: config.attempt,
      image: config.image,
      state: "created",
      createdAtNs: this.nowNs(),
      startedAtNs: 0n,
      finishedAtNs: 0n,
      exitCode: 0,
      reason: "",
      message: "",
      labels: { ...config.labels },
      annotations: { ...config.annotations },
      resources: config.resources ? { ...config.resources } : undefined,
      config,
    });
    return id;
  }

  async startContainer(id: string): Promise<void> {
    this.record("StartContainer", id);
    const c = this.mustGet(id, "StartContainer");
    if (c.state !== "created") throw new RuntimeError(`StartContainer: container ${id} is ${c.state}`, GrpcCode.UNKNOWN, "StartContainer");
    c.state = "running";
    c.startedAtNs = this.nowNs();
  }

  async updateContainerResources(id: string, resources: ContainerResources): Promise<void> {
    this.record("UpdateContainerResources", id);
    const c = this.mustGet(id, "UpdateContainerResources");
    if (c.state !== "running" && c.state !== "created") {
      throw new RuntimeError(`UpdateContainerResources: container ${id} is ${c.state}`, GrpcCode.UNKNOWN, "UpdateContainerResources");
    }
    c.resources = { ...resources };
  }

  /** The cgroup values a container holds now (tests). */
  resourcesOf(id: string): ContainerResources | undefined {
    return this.containers.get(id)?.resources;
  }

  async stopContainer(id: string, _timeoutSeconds: number): Promise<void> {
    this.record("StopContainer", id);
    const c = this.mustGet(id, "StopContainer");
    if (c.state === "running") this.stopped(c);
  }

  /** A stop kills a running process (137); one that exited already keeps its own exit. */
  private stopped(c: FakeContainer): void {
    if (c.unseenExit) this.showExit(c.id);
    else this.exit(c.id, 137, "Error");
  }

  async removeContainer(id: string): Promise<void> {
    this.record("RemoveContainer", id);
    this.containers.delete(id);
  }

  async listContainers(selector: Record<string, string>): Promise<ContainerInfo[]> {
    this.record("ListContainers");
    return [...this.containers.values()]
      .filter((c) => matches(c.labels, selector))
      .map(({ id, sandboxId, name, attempt, image, imageRef, state, createdAtNs, labels, annotations }) => ({
        id, sandboxId, name, attempt, image, imageRef, state, createdAtNs, labels, annotations,
      }));
  }

  async listContainersBytes(selector: Record<string, string>): Promise<Buffer> {
    const containers = (await this.listContainers(selector)).map((c) => ({
      id: c.id, podSandboxId: c.sandboxId, metadata: { name: c.name, attempt: c.attempt }, image: { image: c.image }, imageRef: c.imageRef ?? "",
      state: CRI_CONTAINER_STATES[c.state], createdAt: String(c.createdAtNs), labels: c.labels, annotations: c.annotations,
    }));
    return serializers().containers({ containers });
  }

  async containerStatus(id: string): Promise<ContainerDetail> {
    this.record("ContainerStatus", id);
    const { unseenExit: _unseen, ...detail } = this.mustGet(id, "ContainerStatus");
    return detail;
  }

  async imageStatus(image: string): Promise<ImageUser | undefined> {
    this.record("ImageStatus", image);
    if (!this.images.has(image)) return undefined;
    return this.imageUsers.get(image) ?? {};
  }

  /** Credentials each pull was given, in order (undefined: anonymous). */
  pullAuths: (RegistryAuth | undefined)[] = [];
  /** Images the fake registry gives only to this user name. */
  privateImages = new Map<string, string>();

  async pullImage(image: string, auth?: RegistryAuth): Promise<string> {
    this.record("PullImage", image);
    this.pullAuths.push(auth);
    const owner = this.privateImages.get(image);
    if (owner !== undefined && auth?.username !== owner) throw new RuntimeError(`failed to pull and unpack image "${image}": 401 Unauthorized`, GrpcCode.UNKNOWN, "PullImage");
    // The fake registry holds what it was given and every image the node already has.
    if (!this.pullable.has(image) && !this.images.has(image)) {
      throw new RuntimeError(`PullImage: failed to resolve reference "${image}": not found`, GrpcCode.NOT_FOUND, "PullImage");
    }
    this.images.add(image);
    return `sha256:${image}`;
  }

  /** Answers every command with its words echoed and exit code 0 (tests set `execAnswer` for more). */
  execAnswer: (cmd: string[]) => { stdout: string; stderr: string; exitCode: number } = (cmd) => ({ stdout: `${cmd.join(" ")}\n`, stderr: "", exitCode: 0 });

  async execSync(id: string, cmd: string[]): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    this.record("ExecSync", id);
    this.mustGet(id, "ExecSync");
    const a = this.execAnswer(cmd);
    return { stdout: Buffer.from(a.stdout), stderr: Buffer.from(a.stderr), exitCode: a.exitCode };
  }

  /** A URL on no server: the fake has no streaming server; tests of the proxy bring their own. */
  async streamingUrl(request: StreamingRequest): Promise<string> {
    const target = request.kind === "portforward" ? request.sandboxId : request.containerId;
    this.record(request.kind === "exec" ? "Exec" : request.kind === "attach" ? "Attach" : "PortForward", target);
    if (request.kind !== "portforward") this.mustGet(request.containerId, request.kind);
    return this.streamingBaseUrl + `/${request.kind}/${encodeURIComponent(target)}`;
  }

  /** Where `streamingUrl` points; a test sets it to a server of its own. */
  streamingBaseUrl = "http://127.0.0.1:1";

  async listImages(): Promise<ImageInfo[]> {
    this.record("ListImages");
    return [...this.images].sort().map((image) => this.fakeImage(image));
  }

  /** Image sizes a test sets (1000 bytes otherwise). */
  imageSizes = new Map<string, number>();

  private fakeImage(image: string): ImageInfo {
    return { id: `sha256:${image}`, repoTags: [image], repoDigests: [], sizeBytes: this.imageSizes.get(image) ?? 1000 };
  }

  async imageInfo(image: string): Promise<(ImageInfo & { user: ImageUser }) | undefined> {
    this.record("ImageStatus", image);
    if (!this.images.has(image)) return undefined;
    return { ...this.fakeImage(image), user: this.imageUsers.get(image) ?? {} };
  }

  async removeImage(imageId: string): Promise<void> {
    this.record("RemoveImage", imageId);
    this.images.delete(imageId.replace(/^sha256:/, ""));
  }

  /** What ImageFsInfo answers; a test sets it. */
  imageFs: ImageFsUsage[] = [];

  async imageFsInfo(): Promise<ImageFsUsage[]> {
    this.record("ImageFsInfo");
    return this.imageFs;
  }

  async reopenContainerLog(id: string): Promise<void> {
    this.record("ReopenContainerLog", id);
    this.mustGet(id, "ReopenContainerLog");
  }

  close(): void {}

  /** Test control: the container's process exits with `exitCode`. */
  exit(id: string, exitCode: number, reason = exitCode === 0 ? "Completed" : "Error"): void {
    const c = this.mustGet(id, "exit");
    c.state = "exited";
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAtNs = this.nowNs();
  }

  /**
   * Test control: the container's process exits with `exitCode`, but lists and status calls
   * show it running until showExit (containerd 1.6's CRI takes an exit in after its own event).
   */
  exitUnseen(id: string, exitCode: number, reason = exitCode === 0 ? "Completed" : "Error"): void {
    this.mustGet(id, "exitUnseen").unseenExit = { exitCode, reason };
  }

  /** Test control: the exit exitUnseen made is shown now. */
  showExit(id: string): void {
    const c = this.mustGet(id, "showExit");
    if (!c.unseenExit) return;
    this.exit(id, c.unseenExit.exitCode, c.unseenExit.reason);
    c.unseenExit = undefined;
  }

  private mustGet(id: string, call: string): FakeContainer {
    const c = this.containers.get(id);
    if (!c) throw new RuntimeError(`${call}: container "${id}" not found`, GrpcCode.NOT_FOUND, call);
    return c;
  }
}

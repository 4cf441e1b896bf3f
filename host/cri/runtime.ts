// The container runtime as nanolet's host sees it: the CRI calls it makes, in plain types.
// Implementations: GrpcRuntime (real CRI over a unix socket) and FakeRuntime (in memory, for
// host unit tests and the simulator).

/** Labels nanolet puts on its sandboxes and containers (upstream kubelet's names where it has one). */
export const LABEL_POD_UID = "io.kubernetes.pod.uid";
export const LABEL_POD_NAME = "io.kubernetes.pod.name";
export const LABEL_POD_NAMESPACE = "io.kubernetes.pod.namespace";
export const LABEL_CONTAINER_NAME = "io.kubernetes.container.name";
/** Marks a sandbox or container as nanolet's, so that a restarted agent adopts only its own. */
export const LABEL_MANAGED_BY = "nanolet.io/managed";
export const ANNOTATION_SPEC_HASH = "io.kubernetes.container.hash";
export const ANNOTATION_GRACE_PERIOD = "io.kubernetes.pod.terminationGracePeriod";

export type SandboxStateName = "ready" | "not-ready";
export type ContainerStateName = "created" | "running" | "exited" | "unknown";

/** A seccomp or AppArmor profile as CRI's SecurityProfile carries it. */
export interface SecurityProfile {
  type: "RuntimeDefault" | "Unconfined" | "Localhost";
  localhostRef?: string;
}

/** Which of the node's namespaces a pod shares (hostPID, hostIPC) or whether its containers share one PID namespace. */
export interface PodNamespaces {
  hostPid: boolean;
  hostIpc: boolean;
  sharedPid: boolean;
}

/** CRI LinuxSandboxSecurityContext's settings (the namespaces come from `hostNetwork` and `namespaces`). */
export interface SandboxSecurity {
  runAsUser?: number;
  runAsGroup?: number;
  supplementalGroups: number[];
  privileged: boolean;
  seccomp?: SecurityProfile;
  sysctls: Record<string, string>;
}

/** CRI LinuxContainerSecurityContext's settings. */
export interface ContainerSecurity {
  capabilities: { add: string[]; drop: string[] };
  privileged: boolean;
  runAsUser?: number;
  runAsUsername?: string;
  runAsGroup?: number;
  readonlyRootfs: boolean;
  supplementalGroups: number[];
  noNewPrivs: boolean;
  maskedPaths: string[];
  readonlyPaths: string[];
  seccomp?: SecurityProfile;
  apparmor?: SecurityProfile;
}

export interface PortMapping {
  protocol: "TCP" | "UDP" | "SCTP";
  containerPort: number;
  hostPort: number;
  hostIp: string;
}

export interface DnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

export interface SandboxConfig {
  podUid: string;
  podName: string;
  podNamespace: string;
  attempt: number;
  hostNetwork: boolean;
  cgroupParent: string;
  logDirectory: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The pod's hostname (default: its name; none on the node's network). */
  hostname?: string;
  dns?: DnsConfig;
  portMappings?: PortMapping[];
  namespaces?: PodNamespaces;
  security?: SandboxSecurity;
  /** The RuntimeClass's handler (CRI `runtime_handler`); the runtime's default when unset. */
  runtimeHandler?: string;
}

/** Cgroup values of a container, as CRI's LinuxContainerResources carries them (0: unset). */
export interface ContainerResources {
  cpuShares: number;
  cpuQuotaUs: number;
  cpuPeriodUs: number;
  memoryLimitBytes: number;
  oomScoreAdj: number;
  /** The CPU manager's cpuset; absent leaves the runtime's. */
  cpusetCpus?: string;
  /** The memory manager's NUMA nodes; absent leaves the runtime's. */
  cpusetMems?: string;
}

/** A device node of the node given to a container (CRI Device), as a device plugin names it. */
export interface CriDevice {
  containerPath: string;
  hostPath: string;
  /** cgroup permissions: `r`, `w`, `m` or a mix. */
  permissions: string;
}

/** A CRI Mount: a path of the node bound into the container. */
export interface CriMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  /** CRI MountPropagation; private when absent. */
  propagation?: "private" | "host-to-container" | "bidirectional";
}

export interface ContainerConfig {
  name: string;
  resources?: ContainerResources;
  attempt: number;
  image: string;
  command: string[];
  args: string[];
  env: { name: string; value: string }[];
  workingDir?: string;
  logPath: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Files of the node mounted into the container (the termination message file, /etc/hosts). */
  mounts?: CriMount[];
  security?: ContainerSecurity;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  /** An ephemeral container's target: it joins this container's PID namespace (CRI TARGET). */
  targetContainerId?: string;
  /** Device nodes from device plugins. */
  devices?: CriDevice[];
  /** Fully qualified CDI device names from device plugins (`vendor.com/class=name`). */
  cdiDevices?: string[];
}

/** Who an image runs as when nothing says otherwise (CRI Image.uid, or its user name). */
export interface ImageUser {
  uid?: number;
  username?: string;
}

export interface SandboxInfo {
  id: string;
  podUid: string;
  podName: string;
  podNamespace: string;
  attempt: number;
  state: SandboxStateName;
  createdAtNs: bigint;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerInfo {
  id: string;
  sandboxId: string;
  name: string;
  attempt: number;
  image: string;
  /** The image's digest reference as the runtime resolved it (CRI `image_ref`), if known. */
  imageRef?: string;
  state: ContainerStateName;
  createdAtNs: bigint;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerDetail extends ContainerInfo {
  /** Where the runtime writes the container's log (CRI ContainerStatus.log_path). */
  logPath?: string;
  startedAtNs: bigint;
  finishedAtNs: bigint;
  exitCode: number;
  reason: string;
  message: string;
}

export interface RuntimeVersion {
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

/** A failed runtime call: the gRPC status code (0 if none) and the runtime's message. */
/** CRI AuthConfig: a registry credential for one pull. */
export interface RegistryAuth {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export class RuntimeError extends Error {
  constructor(
    message: string,
    readonly grpcCode: number,
    readonly call: string,
  ) {
    super(message);
    this.name = "RuntimeError";
  }
}

/**
 * How the host retries a call the runtime did not answer (UNAVAILABLE, or containerd's "server is
 * not initialized yet"): after 100 ms, doubling to 2 s, for up to 30 s in all. The simulator
 * follows the same policy.
 */
export const RETRY_POLICY = { firstDelayMs: 100, maxDelayMs: 2_000, budgetMs: 30_000 } as const;

/** Kubelet's --runtime-request-timeout default: the deadline of one CRI call. */
export const REQUEST_TIMEOUT_MS = 120_000;

/** gRPC status codes used by the host. */
export const GrpcCode = {
  OK: 0,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
} as const;

/** One condition of CRI Status: RuntimeReady and NetworkReady are the two the kubelet reads. */
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface ImageInfo {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  sizeBytes: number;
  /** CRI Image.pinned: the runtime asks that the image never be garbage collected (the pause image). */
  pinned?: boolean;
}

/** One filesystem of CRI ImageFsInfo. */
export interface ImageFsUsage {
  /** Where the filesystem is mounted (statfs of it gives capacity and what is free). */
  mountpoint: string;
  usedBytes: number;
  inodesUsed: number;
}

/** A streaming session the kubelet API asks the runtime for. */
export type StreamingRequest =
  | { kind: "exec"; containerId: string; cmd: string[]; tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean }
  | { kind: "attach"; containerId: string; tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean }
  | { kind: "portforward"; sandboxId: string; ports: number[] };

export interface Runtime {
  version(): Promise<RuntimeVersion>;
  /** CRI Status: the runtime's own readiness conditions. */
  status(): Promise<RuntimeCondition[]>;
  /** The runtime's sandbox (pause) image, from the verbose CRI Status, if it says. */
  sandboxImage?(): Promise<string | undefined>;
  runPodSandbox(config: SandboxConfig): Promise<string>;
  stopPodSandbox(id: string): Promise<void>;
  removePodSandbox(id: string): Promise<void>;
  listPodSandboxes(labelSelector: Record<string, string>): Promise<SandboxInfo[]>;
  /** ListPodSandbox's answer as it came off the wire (CRI v1's ListPodSandboxResponse): the relist scans it. */
  listPodSandboxBytes(labelSelector: Record<string, string>): Promise<Buffer>;
  /** CRI PodSandboxStatus: the sandbox's primary IP ("" for a host-network sandbox). */
  podSandboxIp(id: string): Promise<string>;
  createContainer(sandboxId: string, config: ContainerConfig, sandbox: SandboxConfig): Promise<string>;
  startContainer(id: string): Promise<void>;
  /** CRI UpdateContainerResources: new cgroup values for a running container. */
  updateContainerResources(id: string, resources: ContainerResources): Promise<void>;
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  listContainers(labelSelector: Record<string, string>): Promise<ContainerInfo[]>;
  /** ListContainers' answer as it came off the wire (CRI v1's ListContainersResponse): the relist scans it. */
  listContainersBytes(labelSelector: Record<string, string>): Promise<Buffer>;
  containerStatus(id: string): Promise<ContainerDetail>;
  /**
   * CRI ImageStatus: undefined when the runtime has no such image; else who the image runs as
   * (its uid, or its user name; `{}` when it says neither).
   */
  imageStatus(image: string): Promise<ImageUser | undefined>;
  /** CRI ImageStatus in full: the image's ID, size, names and user; undefined when absent. */
  imageInfo(image: string): Promise<(ImageInfo & { user: ImageUser }) | undefined>;
  /** CRI PullImage, with a registry credential when one is given; the image's ID (its ref). */
  pullImage(image: string, auth?: RegistryAuth): Promise<string>;
  /** CRI RemoveImage, by ID; removing an absent image succeeds (as CRI says). */
  removeImage(imageId: string): Promise<void>;
  /** CRI ImageFsInfo: the bytes the image filesystem's images use and its mount point. */
  imageFsInfo(): Promise<ImageFsUsage[]>;
  /** CRI ExecSync: runs `cmd` in the container and waits (timeoutSeconds 0: the runtime's default). */
  execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }>;
  /** CRI Exec, Attach, PortForward: the URL of the runtime's streaming server for this session. */
  streamingUrl(request: StreamingRequest): Promise<string>;
  /** CRI ListImages: every image the runtime holds (for the Node's status.images). */
  listImages(): Promise<ImageInfo[]>;
  /** CRI ReopenContainerLog: the runtime reopens the container's log file (after a rotation). */
  reopenContainerLog(id: string): Promise<void>;
  close(): void;
}

// Carries out the core's runtime actions on a Runtime, at most `concurrency` at a time, and turns
// each outcome into an action-result. Image presence is checked before a create (ImageStatus),
// and the image pulled only when missing; a failed pull is an `image-pull` error for the core.
import path from "node:path";
import type { ActionResult, ContainerSpec, CreateContainer, PlannedAction, PodEvent, SandboxSpec } from "../core/types.js";
import { ContainerConfig, GrpcCode, ImageUser, Runtime, RuntimeError } from "../cri/runtime.js";
import type { Logger } from "../common/log.js";
import { EnvError, containerEnvironment, type PodFacts } from "../env/container-env.js";
import { ANNOTATION_LOG_FILE, ANNOTATION_TERMINATION_FILE, ANNOTATION_TERMINATION_POLICY, prepareTerminationMessageFile } from "../logs/termination-message.js";
import { pathUnder, safeComponent } from "../common/safe-path.js";
import { NonRootError } from "../pod-runtime/security-context.js";
import { HostnameError } from "../pod-runtime/dns.js";
import { objectRefsOf } from "../volumes/object-refs.js";
import { ImageManager, ImageNeverPullError, ImagePullError } from "../images/image-manager.js";
import type { ObjectGetter } from "../volumes/object-store.js";
import { VolumeMountError } from "../volumes/volume-errors.js";
import type { VolumeManager } from "../volumes/volume-manager.js";
import { DEFAULT_POD_RUNTIME_SETTINGS, hostsFileMount, withContainerSettings, withSandboxSettings, type PodObjectFacts, type PodRuntimeSettings } from "../pod-runtime/runtime-settings.js";
import fs from "node:fs";
import { podLogDirectory } from "../logs/log-paths.js";
import type { ContainerLogLinks } from "../logs/log-links.js";
import { containerConfig, criResources, sandboxConfig } from "./cri-requests.js";
import { DEFAULT_ACTION_CONCURRENCY, holdsSlot, slotRank } from "./action-slots.js";
import type { RemovedLogs } from "../logs/removed-logs.js";

import type { DeviceManager } from "../devices/device-manager.js";
import type { DeviceAssignment } from "../core/types.js";

export interface ExecutorOptions {
  runtime: Runtime;
  podLogsDir: string;
  log: Logger;
  concurrency?: number;
  /**
   * Image facts are the host's: it checks and pulls images as part of a create. They are told
   * as the events upstream sends (Pulling, Pulled) about the action's pod and container.
   */
  onEvent?: (action: PlannedAction, event: PodEvent) => void;
  /** What a container's env may read of its pod (labels, node, IPs...), by pod uid. */
  podFacts?: (podUid: string) => PodFacts | undefined;
  /** A RuntimeClass's handler (upstream's LookupRuntimeHandler); rejects with upstream's words. None: classes are not looked up (no apiserver). */
  runtimeHandler?: (runtimeClassName: string) => Promise<string>;
  /** A sandbox's IP as the relister already learned it, if it did (saves a PodSandboxStatus). */
  sandboxIp?: (sandboxId: string) => string | undefined;
  /** `<root-dir>/pods`: per-pod files the kubelet keeps (termination message files, etc-hosts). */
  podsDir?: string;
  /** DNS flags, seccomp root, the node's hosts file. */
  podRuntime?: PodRuntimeSettings;
  /** ConfigMaps and Secrets that env reads; absent without an apiserver. */
  objects?: ObjectGetter;
  /** Logs of removed containers, deleted a minute later; none: logs stay. */
  removedLogs?: RemovedLogs;
  /** Pulls and who may use a pulled image (one with the node's defaults when not given). */
  images?: ImageManager;
  /** The pods' volumes, for each container's mounts. */
  volumes?: VolumeManager;
  /** `/var/log/containers` links to started containers' logs (none without it). */
  logLinks?: ContainerLogLinks;
  /** The device plugins, asked what a container given devices needs (none: no device plugins). */
  devices?: DeviceManager;
}

/** Containers created and not started yet whose log path is remembered for their link. */
const CREATED_LOGS_KEPT = 4096;


/** The pod object's part of its facts, when the source gave the object. */
function objectFactsOf(facts: PodFacts): PodObjectFacts | undefined {
  if (!facts.spec) return undefined;
  return { name: facts.name, namespace: facts.namespace, uid: facts.uid, annotations: facts.annotations, spec: facts.spec };
}

export class Executor {
  private running = 0;
  /** Waiters by slotRank, each in arrival order. */
  private waiting: (() => void)[][] = [];
  private concurrency: number;
  /** The log path of each container created and not yet started (by ID), for its log link. */
  private createdLogs = new Map<string, string>();
  /** The image ID of each container created lately (bounded as the logs are), by container ID. */
  private createdImages = new Map<string, string>();
  /** Sandbox and container starts under way, by pod uid (see `starting`). */
  private startsInFlight = new Map<string, number>();

  private readonly images: ImageManager;

  constructor(private options: ExecutorOptions) {
    this.concurrency = options.concurrency ?? DEFAULT_ACTION_CONCURRENCY;
    this.images = options.images ?? new ImageManager({ runtime: options.runtime, log: options.log });
  }

  /** Whether a sandbox or container of the pod is being started (run, created or started). */
  starting(podUid: string): boolean {
    return this.startsInFlight.has(podUid);
  }

  /** Runs one runtime action; never rejects: failures become `err` results. */
  async execute(action: PlannedAction): Promise<ActionResult> {
    const tag = action.kind.tag;
    const starts = tag === "run-sandbox" || tag === "create-container" || tag === "start-container";
    if (starts) this.startsInFlight.set(action.podUid, (this.startsInFlight.get(action.podUid) ?? 0) + 1);
    try {
      return await this.executeInSlot(action);
    } finally {
      if (starts) {
        const left = (this.startsInFlight.get(action.podUid) ?? 1) - 1;
        if (left > 0) this.startsInFlight.set(action.podUid, left);
        else this.startsInFlight.delete(action.podUid);
      }
    }
  }

  private async executeInSlot(action: PlannedAction): Promise<ActionResult> {
    const slotted = holdsSlot(action);
    if (slotted) await this.acquire(slotRank(action));
    try {
      const createdId = await this.perform(action);
      return { actionId: action.id, outcome: { tag: "ok", val: createdId } };
    } catch (error) {
      if (error instanceof ImageNeverPullError) {
        return { actionId: action.id, outcome: { tag: "err", val: { kind: "image-never-pull", grpcCode: 0, message: error.message } } };
      }
      if (error instanceof EnvError || error instanceof NonRootError || error instanceof HostnameError || error instanceof VolumeMountError) {
        return { actionId: action.id, outcome: { tag: "err", val: { kind: "config", grpcCode: 0, message: error.message } } };
      }
      if (error instanceof ImagePullError) {
        return { actionId: action.id, outcome: { tag: "err", val: { kind: "image-pull", grpcCode: 0, message: error.message } } };
      }
      if (error instanceof RuntimeError) {
        const kind = error.grpcCode === GrpcCode.DEADLINE_EXCEEDED ? "timeout" : "runtime";
        return { actionId: action.id, outcome: { tag: "err", val: { kind, grpcCode: error.grpcCode, message: error.message } } };
      }
      return { actionId: action.id, outcome: { tag: "err", val: { kind: "other", grpcCode: 0, message: String((error as Error)?.message ?? error) } } };
    } finally {
      if (slotted) this.release();
    }
  }

  private async acquire(rank: number): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => (this.waiting[rank] ??= []).push(resolve));
  }

  /** The slot goes to the first waiter of the lowest rank, or is freed. */
  private release(): void {
    for (const queue of this.waiting) {
      const next = queue?.shift();
      if (next) return next();
    }
    this.running--;
  }

  private async perform(action: PlannedAction): Promise<string> {
    const { runtime } = this.options;
    const kind = action.kind;
    switch (kind.tag) {
      case "run-sandbox": {
        const facts = this.options.podFacts?.(kind.val.podUid);
        const { config, warnings } = this.sandboxFor(kind.val, facts);
        // As upstream's createPodSandbox: the pod's log directory first, so that a name the file
        // system cannot hold (a 250-character pod name) fails the sandbox, said once per try,
        // instead of every container start.
        try {
          if (config.logDirectory) fs.mkdirSync(config.logDirectory, { recursive: true, mode: 0o755 });
        } catch (error) {
          const e = error as NodeJS.ErrnoException;
          throw new Error(`create pod log directory ${JSON.stringify(config.logDirectory)}: ${e.code === "ENAMETOOLONG" ? "file name too long" : e.code ?? e.message}`);
        }
        for (const w of warnings) this.options.onEvent?.(action, { containerName: "", eventType: "warning", reason: w.reason, message: w.message });
        // The pod's RuntimeClass gives CRI its handler (upstream's RuntimeClassManager), looked up
        // at each sandbox creation: an unknown class fails this try, and the next looks again.
        const runtimeClassName = facts?.spec?.runtimeClassName;
        if (typeof runtimeClassName === "string" && runtimeClassName !== "" && this.options.runtimeHandler) {
          config.runtimeHandler = await this.options.runtimeHandler(runtimeClassName);
        }
        try {
          return await runtime.runPodSandbox(config);
        } catch (error) {
          // Upstream's event quotes the gRPC error as Go prints it.
          if (error instanceof RuntimeError) throw new RuntimeError(goGrpcError(error), error.grpcCode, error.call);
          throw error;
        }
      }
      case "stop-sandbox":
        await runtime.stopPodSandbox(kind.val);
        return "";
      case "remove-sandbox":
        await runtime.removePodSandbox(kind.val);
        return "";
      case "create-container": {
        // The environment first: a variable that cannot be made fails the create before a pull.
        const facts = await this.podFacts(kind.val);
        facts.envObjects = await this.envObjects(facts, kind.val.container.name);
        const environment = containerEnvironment(kind.val.container, facts);
        const { user: imageUser, imageId } = await this.ensureImage(action, kind.val.container, facts);
        const objectFacts = objectFactsOf(facts);
        const config: ContainerConfig = withContainerSettings({ ...containerConfig(kind.val), ...environment }, objectFacts, imageUser, this.settings);
        if (this.options.volumes && facts.spec) config.mounts = [...(config.mounts ?? []), ...this.options.volumes.mountsFor(facts, kind.val.container.name, environment.env)];
        if ((kind.val.devices ?? []).length > 0) await this.addDevices(config, kind.val.devices);
        this.addTerminationMessage(config, kind.val, facts);
        this.addHostsFile(config, kind.val, facts);
        const sandbox = this.sandboxFor(kind.val.sandbox, facts).config;
        const id = await runtime.createContainer(kind.val.sandboxId, config, sandbox);
        if (this.options.logLinks && sandbox.logDirectory && config.logPath) this.rememberLog(id, path.join(sandbox.logDirectory, config.logPath));
        this.rememberImage(id, imageId);
        return id;
      }
      case "start-container": {
        await runtime.startContainer(kind.val.containerId);
        const logPath = this.createdLogs.get(kind.val.containerId);
        this.createdLogs.delete(kind.val.containerId);
        if (logPath) this.options.logLinks?.link(this.namesOf(action, kind.val), logPath);
        return "";
      }
      case "stop-container":
        await runtime.stopContainer(kind.val.containerId, Number(kind.val.timeoutSeconds));
        return "";
      case "remove-container": {
        // Its log goes a minute later, rotated files too (upstream's container GC removes them; CRI does not).
        const logPath = await runtime.containerStatus(kind.val.containerId).then((d) => d.logPath, () => undefined);
        await runtime.removeContainer(kind.val.containerId);
        if (logPath) this.options.removedLogs?.add(logPath);
        this.createdLogs.delete(kind.val.containerId);
        this.createdImages.delete(kind.val.containerId);
        this.options.logLinks?.unlink(this.namesOf(action, kind.val));
        return "";
      }
      case "update-container-resources":
        await runtime.updateContainerResources(kind.val.containerId, criResources(kind.val.resources));
        return "";
      default:
        throw new Error(`executor: ${kind.tag} is not a runtime action`);
    }
  }

  /**
   * What the device plugins say a container with these devices needs, as upstream orders it: the
   * plugins' environment before the container's own (which wins), their mounts before the volumes'.
   */
  private async addDevices(config: ContainerConfig, assignments: DeviceAssignment[]): Promise<void> {
    if (!this.options.devices) throw new Error("the container was given devices but this node serves no device plugins");
    const extra = await this.options.devices.containerOptions(assignments);
    config.env = [...Object.entries(extra.envs).map(([name, value]) => ({ name, value })), ...config.env];
    config.mounts = [...extra.mounts, ...(config.mounts ?? [])];
    config.annotations = { ...extra.annotations, ...config.annotations };
    config.devices = extra.devices;
    config.cdiDevices = extra.cdiDevices;
  }

  /**
   * The image ID of a container this agent created, until a relist lists it with its image_ref:
   * the container's first statuses then carry their imageID instead of a later patch adding it.
   */
  imageIdOf(containerId: string): string | undefined {
    return this.createdImages.get(containerId);
  }

  private rememberImage(containerId: string, imageId: string): void {
    if (!imageId) return;
    if (this.createdImages.size >= CREATED_LOGS_KEPT) this.createdImages.delete(this.createdImages.keys().next().value!);
    this.createdImages.set(containerId, imageId);
  }

  private rememberLog(containerId: string, logPath: string): void {
    // A create whose start never came (the pod went first) leaves an entry; the oldest goes.
    if (this.createdLogs.size >= CREATED_LOGS_KEPT) this.createdLogs.delete(this.createdLogs.keys().next().value!);
    this.createdLogs.set(containerId, logPath);
  }

  private namesOf(action: PlannedAction, ref: { containerId: string; containerName: string }) {
    return { podName: action.podName, podNamespace: action.podNamespace, containerName: ref.containerName, containerId: ref.containerId };
  }

  private get settings(): PodRuntimeSettings {
    return this.options.podRuntime ?? DEFAULT_POD_RUNTIME_SETTINGS;
  }

  /** The sandbox as CRI takes it: the core's spec, and what the pod's object says of DNS, ports, security. */
  private sandboxFor(spec: SandboxSpec, known?: PodFacts) {
    // A create has the pod's facts already (its service variables are not worked out twice).
    const facts = known ?? this.options.podFacts?.(spec.podUid);
    return withSandboxSettings(sandboxConfig(spec, this.options.podLogsDir), facts ? objectFactsOf(facts) : undefined, this.settings);
  }

  /** The pod's managed /etc/hosts, mounted as the kubelet mounts it. */
  private addHostsFile(config: ContainerConfig, create: CreateContainer, facts: PodFacts): void {
    const objectFacts = objectFactsOf(facts);
    const { podsDir, log } = this.options;
    if (!podsDir || !objectFacts || !safeComponent(create.sandbox.podUid)) return;
    try {
      const mount = hostsFileMount(objectFacts, create.container.name, create.sandbox.hostNetwork, facts.podIps, pathUnder(podsDir, create.sandbox.podUid), this.settings);
      if (mount) config.mounts = [...(config.mounts ?? []), mount];
    } catch (error) {
      // The container gets the runtime's file, as one whose hosts file could not be written would.
      log.log("warn", "Could not write the pod's hosts file", { container: create.container.name, error: (error as Error).message });
    }
  }

  /**
   * The termination message file, mounted at the container's terminationMessagePath, as the
   * kubelet makes it; the relister reads it when the container has exited.
   */
  private addTerminationMessage(config: ContainerConfig, create: CreateContainer, facts: PodFacts): void {
    const { podsDir, podLogsDir, log } = this.options;
    const wanted = facts.terminationMessages?.[create.container.name];
    if (!podsDir || !wanted) return;
    try {
      const file = prepareTerminationMessageFile(podsDir, create.sandbox.podUid, create.container.name);
      config.mounts = [...(config.mounts ?? []), { containerPath: wanted.path, hostPath: file, readonly: false }];
      config.annotations[ANNOTATION_TERMINATION_FILE] = file;
      config.annotations[ANNOTATION_TERMINATION_POLICY] = wanted.policy;
      config.annotations[ANNOTATION_LOG_FILE] = path.join(podLogDirectory(podLogsDir, create.sandbox), config.logPath);
    } catch (error) {
      // The container runs without it, as one whose message file could not be made would.
      log.log("warn", "Could not prepare the termination message file", { container: create.container.name, error: (error as Error).message });
    }
  }

  /** The configMaps and secrets one container's env reads, fetched (missing ones as undefined). */
  private async envObjects(facts: PodFacts, containerName: string): Promise<Map<string, Record<string, any> | undefined>> {
    const out = new Map<string, Record<string, any> | undefined>();
    const raw = [...(facts.spec?.containers ?? []), ...(facts.spec?.initContainers ?? [])].find((c: Record<string, any>) => c?.name === containerName);
    if (!raw || (!raw.envFrom && !raw.env)) return out;
    const refs = objectRefsOf({ metadata: { namespace: facts.namespace }, spec: { containers: [{ env: raw.env, envFrom: raw.envFrom }] } });
    for (const ref of refs) {
      if (!this.options.objects) throw new EnvError(`cannot get ${ref.resource === "configmaps" ? "configmap" : "secret"} "${ref.name}": this node has no apiserver`);
      try {
        out.set(`${ref.resource}/${ref.name}`, await this.options.objects.get(ref));
      } catch (error) {
        throw new EnvError((error as Error).message);
      }
    }
    return out;
  }

  /** The pod's imagePullSecrets as the apiserver has them; one that cannot be had is logged and left out (the pull may still work). */
  private async pullSecrets(facts: PodFacts | undefined): Promise<Record<string, any>[]> {
    const { log, objects } = this.options;
    const names: string[] = (Array.isArray(facts?.spec?.imagePullSecrets) ? facts!.spec!.imagePullSecrets : []).map((s: any) => String(s?.name ?? "")).filter((n: string) => n !== "");
    const secrets: Record<string, any>[] = [];
    for (const name of names) {
      const pod = `${facts!.namespace}/${facts!.name}`;
      let secret: Record<string, any> | undefined;
      let error: string | undefined;
      try {
        secret = objects ? await objects.get({ resource: "secrets", namespace: facts!.namespace, name }) : undefined;
      } catch (e) {
        error = (e as Error).message;
      }
      if (secret) secrets.push(secret);
      else log.log("warn", "Unable to retrieve pull secret; the image pull may not succeed", { pod, secret: name, ...(error ? { error } : {}) });
    }
    return secrets;
  }

  /** What the container's env may read: the host's facts of the pod, its IPs from the runtime. */
  private async podFacts(create: CreateContainer): Promise<PodFacts> {
    const sandbox = create.sandbox;
    const known = this.options.podFacts?.(sandbox.podUid);
    const facts: PodFacts = known ?? {
      name: sandbox.podName, namespace: sandbox.podNamespace, uid: sandbox.podUid, labels: {}, annotations: {}, nodeName: "",
      serviceAccountName: "", hostIps: [], podIps: [], containers: [create.container],
      allocatable: { cpu: "0", memory: "0", "ephemeral-storage": "0" },
    };
    // The pod's IPs: for env, and for its /etc/hosts.
    const needsPodIp = facts.spec !== undefined || create.container.env.some((e) => e.valueFrom?.tag === "field-ref" && e.valueFrom.val.startsWith("status.podIP"));
    if (sandbox.hostNetwork) facts.podIps = facts.hostIps;
    else if (needsPodIp) {
      const ip = this.options.sandboxIp?.(create.sandboxId) ?? (await this.options.runtime.podSandboxIp(create.sandboxId).catch(() => ""));
      facts.podIps = ip ? [ip] : [];
    }
    return facts;
  }

  /** The image as its pull policy wants it (the image manager's); returns who it runs as. */
  private async ensureImage(action: PlannedAction, container: ContainerSpec, facts?: PodFacts): Promise<{ user: ImageUser; imageId: string }> {
    const { name: containerName, image } = container;
    const event = (reason: string, message: string) => this.options.onEvent?.(action, { containerName, eventType: "normal", reason, message });
    const request = { podName: action.podName, podNamespace: action.podNamespace, podUid: action.podUid, image, pullPolicy: container.imagePullPolicy, secrets: await this.pullSecrets(facts) };
    return this.images.ensure(request, event);
  }

}

/** Go's names of the gRPC codes, as `rpc error: code = ... desc = ...` prints them. */
const GRPC_CODE_NAMES = ["OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"];

/** A runtime call's error as upstream's events quote it: `rpc error: code = Unknown desc = ...`. */
export function goGrpcError(error: RuntimeError): string {
  const desc = error.message.startsWith(`${error.call}: `) ? error.message.slice(error.call.length + 2) : error.message;
  return `rpc error: code = ${GRPC_CODE_NAMES[error.grpcCode] ?? `Code(${error.grpcCode})`} desc = ${desc}`;
}

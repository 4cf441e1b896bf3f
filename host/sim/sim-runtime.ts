// The simulated container runtime: sandboxes and containers with containerd's lifecycle and CRI
// state names, held in memory and changed only when the simulator says a call takes effect. It
// keeps its state across a simulated restart, as containerd does. Synchronous by design: the
// simulator decides when things happen, this decides what happens.
import type { ContainerObservation, CreateContainer, LinuxResources, PackedSnapshot, RuntimeSnapshot, SandboxObservation, SandboxSpec } from "../core/types.js";
import { GrpcCode, RuntimeError } from "../cri/runtime.js";
import { PackedSegment, assembleSnapshot, packContainer, packSandbox } from "../core/snapshot-packing.js";
import type { Prng } from "./prng.js";
import type { Scenario } from "./scenario.js";

export interface SimSandbox {
  id: string;
  podUid: string;
  podName: string;
  podNamespace: string;
  attempt: number;
  state: "ready" | "not-ready";
  createdAtMs: number;
  gracePeriodSeconds: number;
  /** What a relist shows of it, packed; dropped whenever it changes. */
  seen?: { observation: SandboxObservation; segment: PackedSegment };
}

export interface SimContainer {
  id: string;
  sandboxId: string;
  podUid: string;
  name: string;
  attempt: number;
  image: string;
  specHash: string;
  state: "created" | "running" | "exited";
  createdAtMs: number;
  startedAtMs: number;
  finishedAtMs: number;
  exitCode: number;
  reason: string;
  /** Bumped on every start; a scheduled exit only applies to the run it was planned for. */
  runNumber: number;
  /** The core asked to stop it (it may have exited on its own before or meanwhile). */
  stopRequested?: boolean;
  /** The core stopped it while it ran (not after it exited). */
  killedWhileRunning?: boolean;
  /** Cgroup values from the create, or the last in-place resize. */
  resources?: LinuxResources;
  /** What a relist shows of it, packed; dropped whenever it changes. */
  seen?: { observation: ContainerObservation; segment: PackedSegment };
}

const NS_PER_MS = 1_000_000n;

export class SimRuntime {
  readonly sandboxes = new Map<string, SimSandbox>();
  readonly containers = new Map<string, SimContainer>();
  readonly images = new Set<string>();
  /** Images the registry does not have. */
  readonly missingImages = new Set<string>();
  /** Bumped on every change; a relist of an unchanged runtime reuses its snapshot. */
  private version = 0;
  private cached?: {
    version: number;
    snapshot: RuntimeSnapshot;
    packed: PackedSnapshot;
    sandboxes: { observation: SandboxObservation; segment: PackedSegment }[];
    containers: { observation: ContainerObservation; segment: PackedSegment }[];
  };

  /** Told of every container exit, however it came (StopContainer calls wait for it). */
  onExit?: (c: SimContainer, nowMs: number) => void;
  /** Told of every change a relist would show (`exit`: a container's process ended). */
  onChange?: (exit: boolean) => void;

  /** `listOrder`: each relist lists in a new order drawn from it (containerd's CRI lists walk a
   * Go map); without it, in the same order every time. */
  constructor(
    private ids: Prng,
    private listOrder?: Prng,
  ) {}

  private changed(exit = false): void {
    this.version++;
    this.onChange?.(exit);
  }

  /** Changes so far; equal numbers mean nothing changed in between. */
  get changeCount(): number {
    return this.version;
  }

  runPodSandbox(spec: SandboxSpec, nowMs: number): string {
    const id = this.ids.hexId();
    this.sandboxes.set(id, {
      id,
      podUid: spec.podUid,
      podName: spec.podName,
      podNamespace: spec.podNamespace,
      attempt: spec.attempt,
      state: "ready",
      createdAtMs: nowMs,
      gracePeriodSeconds: Number(spec.terminationGracePeriodSeconds),
    });
    this.changed();
    return id;
  }

  /** Stops the sandbox and kills what still runs in it (CRI's StopPodSandbox is forceful). */
  stopPodSandbox(id: string, nowMs: number): void {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return; // idempotent, as CRI requires
    for (const c of this.containers.values()) if (c.sandboxId === id && c.state === "running") this.exit(c, 137, "Error", nowMs);
    sandbox.state = "not-ready";
    sandbox.seen = undefined;
    this.changed();
  }

  removePodSandbox(id: string): void {
    for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
    this.sandboxes.delete(id);
    this.changed();
  }

  hasImage(image: string): boolean {
    return this.images.has(image);
  }

  pullImage(image: string): void {
    if (this.missingImages.has(image)) {
      throw new RuntimeError(`PullImage: failed to resolve reference "${image}": not found`, GrpcCode.NOT_FOUND, "PullImage");
    }
    this.images.add(image);
  }

  createContainer(create: CreateContainer, nowMs: number): string {
    const sandbox = this.sandboxes.get(create.sandboxId);
    if (!sandbox || sandbox.state !== "ready") {
      throw new RuntimeError(`CreateContainer: sandbox ${create.sandboxId} is not ready`, GrpcCode.UNKNOWN, "CreateContainer");
    }
    const image = create.container.image;
    if (!this.images.has(image)) throw new RuntimeError(`CreateContainer: image "${image}" not found`, GrpcCode.NOT_FOUND, "CreateContainer");
    const id = this.ids.hexId();
    this.containers.set(id, {
      id,
      sandboxId: create.sandboxId,
      podUid: sandbox.podUid,
      name: create.container.name,
      attempt: create.attempt,
      image,
      specHash: create.specHash,
      resources: create.resources,
      state: "created",
      createdAtMs: nowMs,
      startedAtMs: 0,
      finishedAtMs: 0,
      exitCode: 0,
      reason: "",
      runNumber: 0,
    });
    this.changed();
    return id;
  }

  startContainer(id: string, nowMs: number): SimContainer {
    const c = this.mustGet(id, "StartContainer");
    if (c.state !== "created") throw new RuntimeError(`StartContainer: container ${id} is ${c.state}, not created`, GrpcCode.UNKNOWN, "StartContainer");
    const sandbox = this.sandboxes.get(c.sandboxId);
    if (!sandbox || sandbox.state !== "ready") throw new RuntimeError(`StartContainer: sandbox ${c.sandboxId} is not ready`, GrpcCode.UNKNOWN, "StartContainer");
    c.state = "running";
    c.startedAtMs = nowMs;
    c.runNumber++;
    c.seen = undefined;
    this.changed();
    return c;
  }

  /** The container's process ends. */
  exit(c: SimContainer, exitCode: number, reason: string, nowMs: number): void {
    if (c.state !== "running") return;
    c.state = "exited";
    c.exitCode = exitCode;
    c.reason = reason;
    c.finishedAtMs = nowMs;
    c.seen = undefined;
    this.changed(true);
    this.onExit?.(c, nowMs);
  }

  removeContainer(id: string): void {
    if (!this.containers.delete(id)) return; // removing what is gone is success in CRI
    this.changed();
  }

  mustGet(id: string, call: string): SimContainer {
    const c = this.containers.get(id);
    if (!c) throw new RuntimeError(`${call}: container "${id}" not found`, GrpcCode.NOT_FOUND, call);
    return c;
  }

  /** What a relist at `listedAtMs` sees; only objects that changed since are packed again. */
  snapshot(listedAtMs: number): { snapshot: RuntimeSnapshot; packed: PackedSnapshot } {
    if (!this.cached || this.cached.version !== this.version) {
      const sandboxes = [...this.sandboxes.values()].map((s) => (s.seen ??= seeSandbox(s)));
      const containers = [...this.containers.values()].map((c) => (c.seen ??= seeContainer(c)));
      const snapshot: RuntimeSnapshot = {
        listedAtMs: 0n,
        sandboxes: sandboxes.map((x) => x.observation),
        containers: containers.map((x) => x.observation),
        uninspectedPodUids: [],
      };
      const packed = assembleSnapshot(0n, sandboxes.map((x) => x.segment), containers.map((x) => x.segment), []);
      this.cached = { version: this.version, snapshot, packed, sandboxes, containers };
    }
    const at = BigInt(listedAtMs);
    if (this.listOrder) {
      const sandboxes = this.listOrder.shuffled(this.cached.sandboxes);
      const containers = this.listOrder.shuffled(this.cached.containers);
      return {
        snapshot: { listedAtMs: at, sandboxes: sandboxes.map((x) => x.observation), containers: containers.map((x) => x.observation), uninspectedPodUids: [] },
        packed: assembleSnapshot(at, sandboxes.map((x) => x.segment), containers.map((x) => x.segment), []),
      };
    }
    return { snapshot: { ...this.cached.snapshot, listedAtMs: at }, packed: { ...this.cached.packed, listedAtMs: at } };
  }

  /** Running containers of one pod with one name (more than one breaks an invariant). */
  /** CRI UpdateContainerResources: only a created or running container can be resized. */
  updateResources(id: string, resources: LinuxResources): void {
    const c = this.mustGet(id, "UpdateContainerResources");
    if (c.state === "exited") throw new RuntimeError(`UpdateContainerResources: container ${id} is not running`, GrpcCode.UNKNOWN, "UpdateContainerResources");
    c.resources = resources;
  }

  runningNamed(podUid: string, name: string): SimContainer[] {
    const out: SimContainer[] = [];
    for (const c of this.containers.values()) if (c.podUid === podUid && c.name === name && c.state === "running") out.push(c);
    return out;
  }
}

function seeSandbox(s: SimSandbox): { observation: SandboxObservation; segment: PackedSegment } {
  const observation: SandboxObservation = {
    id: s.id,
    podUid: s.podUid,
    podName: s.podName,
    podNamespace: s.podNamespace,
    attempt: s.attempt,
    state: s.state,
    createdAtNs: BigInt(s.createdAtMs) * NS_PER_MS,
    terminationGracePeriodSeconds: BigInt(s.gracePeriodSeconds),
  };
  return { observation, segment: packSandbox(observation) };
}

function seeContainer(c: SimContainer): { observation: ContainerObservation; segment: PackedSegment } {
  const observation: ContainerObservation = {
    id: c.id,
    sandboxId: c.sandboxId,
    podUid: c.podUid,
    name: c.name,
    attempt: c.attempt,
    state: c.state,
    image: c.image,
    specHash: c.specHash,
    exitCode: c.exitCode,
    reason: c.reason,
    message: "",
    createdAtNs: BigInt(c.createdAtMs) * NS_PER_MS,
    startedAtNs: BigInt(c.startedAtMs) * NS_PER_MS,
    finishedAtNs: BigInt(c.finishedAtMs) * NS_PER_MS,
  };
  return { observation, segment: packContainer(observation) };
}

/** Images the scenario's pods use are present from the start, unless the scenario says which. */
export function preloadImages(s: Scenario, runtime: SimRuntime): void {
  if (s.preloadedImages !== "all") {
    for (const image of s.preloadedImages) runtime.images.add(image);
    return;
  }
  const all = [...s.pods, ...s.timeline.flatMap((e) => (e.action.type === "add" || e.action.type === "update" ? [e.action.pod] : []))];
  for (const pod of all) {
    const containers = (pod.manifest.spec as { containers?: { image?: unknown }[] } | undefined)?.containers ?? [];
    for (const c of containers) if (typeof c.image === "string" && !s.missingImages.includes(c.image)) runtime.images.add(c.image);
  }
}

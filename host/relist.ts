// One relist: ListPodSandbox + ListContainers (nanolet's label only), plus ContainerStatus for
// containers whose exit code or start time is not known yet. Exited containers never change, so
// their details are cached by ID; a relist of a steady node makes exactly two calls.
import type { ContainerObservation, RuntimeSnapshot, SandboxObservation } from "./core-types.js";
import {
  ANNOTATION_GRACE_PERIOD,
  ANNOTATION_SPEC_HASH,
  ContainerDetail,
  ContainerInfo,
  LABEL_MANAGED_BY,
  LABEL_POD_UID,
  Runtime,
} from "./cri/runtime.js";

import type { TaskExit } from "./cri/runtime-events.js";
import { terminationMessage } from "./logs/termination-message.js";

export const MANAGED_SELECTOR = { [LABEL_MANAGED_BY]: "true" };
/** Status calls in flight at once during one relist. */
const INSPECT_CONCURRENCY = 8;

/**
 * How long an exit containerd announced stands against a CRI that still lists the container
 * running (see pushExit). containerd 1.6's CRI takes an exit in once it has deleted the task,
 * which under load can take seconds; a CRI still saying "running" after this long is believed.
 */
const PUSHED_EXIT_TRUST_MS = 60_000;

/** An exit containerd announced and the CRI does not show yet. */
interface PushedExit {
  detail: ContainerDetail;
  atMs: number;
  /** The relist that last listed this container. */
  listedIn: number;
}

/** What containerd's task-exit event (and an OOM event before it) says of an exit. */
export interface AnnouncedExit extends TaskExit {
  oomKilled: boolean;
}

interface Known {
  state: string;
  detail: ContainerDetail;
  /** The relist that last listed this container (entries no relist lists any more are dropped). */
  listedIn: number;
}

export class Relister {
  /** Details by container ID, kept while the container is listed in the same state. */
  private known = new Map<string, Known>();
  /** Pod IP by sandbox ID, asked once per new ready sandbox (PodSandboxStatus): the status's podIP. */
  readonly sandboxIps = new Map<string, string>();
  /** The containers of the last relist, and their image references by ID once asked (imageRefOf). */
  private lastContainers: ContainerInfo[] = [];
  /** Exits containerd announced that the CRI does not show yet, by container ID. */
  private pushedExits = new Map<string, PushedExit>();
  private imageRefs: Map<string, string> | undefined;
  private relists = 0;

  constructor(
    private runtime: Runtime,
    private nowMs: () => number,
  ) {}

  /**
   * Details read outside a relist (the exit watch's ContainerStatus): the next relist takes them
   * instead of asking again, if it lists the container in the same state.
   */
  remember(detail: ContainerDetail): void {
    if (detail.state === "created" || detail.state === "unknown") return;
    this.enrich(detail, detail.annotations);
    this.known.set(detail.id, { state: detail.state, detail, listedIn: this.relists });
  }

  /**
   * containerd announced that this container's main process exited (its task-exit event), which
   * its CRI plugin shows only once it has deleted the task (~130 ms later on an idle node);
   * `running` is what the CRI says of it meanwhile. Until the CRI lists it exited, relists list
   * it exited with the details the CRI will give: the event's exit code and time, the start the
   * CRI gave, reason OOMKilled, Error or Completed as containerd derives it, and the termination
   * message file. Once the CRI lists it exited, its own details are read as for any exit.
   */
  pushExit(running: ContainerDetail, exit: AnnouncedExit): void {
    const detail: ContainerDetail = {
      ...running,
      state: "exited",
      exitCode: exit.exitCode,
      finishedAtNs: exit.finishedAtNs,
      reason: exit.oomKilled ? "OOMKilled" : exit.exitCode === 0 ? "Completed" : "Error",
      message: "",
    };
    this.enrich(detail, detail.annotations);
    this.pushedExits.set(running.id, { detail, atMs: this.nowMs(), listedIn: this.relists });
  }

  /** The image digest reference (CRI `image_ref`) of a container the last relist listed. */
  imageRefOf(containerId: string): string | undefined {
    if (!this.imageRefs) {
      // Built on first use after each relist: status updates ask, a steady relist does not.
      this.imageRefs = new Map();
      for (const c of this.lastContainers) if (c.imageRef) this.imageRefs.set(c.id, c.imageRef);
    }
    return this.imageRefs.get(containerId);
  }

  /** What the container wrote to its termination message file enriches the runtime's message. */
  private enrich(detail: ContainerDetail, annotations: Record<string, string>): void {
    if (detail.state !== "exited") return;
    const written = terminationMessage(annotations, detail.exitCode, detail.reason);
    if (written) detail.message = detail.message ? `${detail.message}: ${written}` : written;
  }

  async relist(): Promise<RuntimeSnapshot> {
    const listedAtMs = this.nowMs();
    const [sandboxes, containers] = await Promise.all([
      this.runtime.listPodSandboxes(MANAGED_SELECTOR),
      this.runtime.listContainers(MANAGED_SELECTOR),
    ]);
    const relist = ++this.relists;
    const uninspected = new Set<string>();
    // One lookup per container: the details known for it, marked as listed by this relist.
    const knownOf: (Known | undefined)[] = new Array(containers.length);
    const toInspect: number[] = [];
    for (let i = 0; i < containers.length; i++) {
      const c = containers[i]!;
      const known = this.known.get(c.id);
      if (known) known.listedIn = relist;
      knownOf[i] = known;
      if (c.state === "created" || c.state === "unknown") continue;
      if (!known || known.state !== c.state) toInspect.push(i);
    }
    for (let k = 0; k < toInspect.length; k += INSPECT_CONCURRENCY) {
      await Promise.all(
        toInspect.slice(k, k + INSPECT_CONCURRENCY).map(async (i) => {
          const c = containers[i]!;
          try {
            const detail = await this.runtime.containerStatus(c.id);
            this.enrich(detail, c.annotations);
            const known = { state: detail.state, detail, listedIn: relist };
            this.known.set(c.id, known);
            knownOf[i] = known;
          } catch {
            // Removed between the list and the status call, or the runtime failed: the core
            // keeps this pod's previous view and we look again next relist.
            uninspected.add(c.labels[LABEL_POD_UID] ?? "");
          }
        }),
      );
    }
    await this.learnSandboxIps(sandboxes.filter((s) => s.state === "ready" && !this.sandboxIps.has(s.id)).map((s) => s.id));
    const listedSandboxes = new Set(sandboxes.map((s) => s.id));
    for (const id of this.sandboxIps.keys()) if (!listedSandboxes.has(id)) this.sandboxIps.delete(id);
    // Containers this relist did not list are gone (details remembered while it ran wait for the next).
    for (const [id, known] of this.known) if (known.listedIn < relist) this.known.delete(id);
    this.lastContainers = containers;
    this.imageRefs = undefined;

    const sandboxObservations: SandboxObservation[] = sandboxes.map((s) => {
      const grace = s.annotations[ANNOTATION_GRACE_PERIOD];
      return {
        id: s.id,
        podUid: s.labels[LABEL_POD_UID] ?? s.podUid,
        podName: s.podName,
        podNamespace: s.podNamespace,
        attempt: s.attempt,
        state: s.state,
        createdAtNs: s.createdAtNs,
        terminationGracePeriodSeconds: grace !== undefined && /^\d+$/.test(grace) ? BigInt(grace) : undefined,
      };
    });
    const containerObservations: ContainerObservation[] = new Array(containers.length);
    const pushedExits = this.pushedExits.size > 0 ? this.pushedExits : undefined;
    for (let i = 0; i < containers.length; i++) {
      const c = containers[i]!;
      const known = knownOf[i];
      let detail = known && known.state === c.state ? known.detail : undefined;
      let state = c.state;
      const pushed = pushedExits?.get(c.id);
      if (pushed) {
        pushed.listedIn = relist;
        if (c.state === "running" && listedAtMs - pushed.atMs < PUSHED_EXIT_TRUST_MS) {
          state = "exited";
          detail = pushed.detail;
        } else {
          // The CRI shows the exit now (or, long after, still does not: it is believed).
          pushedExits!.delete(c.id);
        }
      }
      // A container whose details could not be read is still listed, as the runtime listed it:
      // the PLEG sees its state, and the core keeps its pod's old view (the pod is uninspected).
      containerObservations[i] = {
        id: c.id,
        sandboxId: c.sandboxId,
        podUid: c.labels[LABEL_POD_UID] ?? "",
        name: c.name,
        attempt: c.attempt,
        state,
        image: c.image,
        specHash: c.annotations[ANNOTATION_SPEC_HASH] ?? "",
        exitCode: detail?.exitCode ?? 0,
        reason: detail?.reason ?? "",
        message: detail?.message ?? "",
        createdAtNs: c.createdAtNs,
        startedAtNs: detail?.startedAtNs ?? 0n,
        finishedAtNs: detail?.finishedAtNs ?? 0n,
      };
    }
    if (pushedExits) for (const [id, pushed] of pushedExits) if (pushed.listedIn < relist) pushedExits.delete(id);
    uninspected.delete("");
    return { listedAtMs: BigInt(listedAtMs), sandboxes: sandboxObservations, containers: containerObservations, uninspectedPodUids: [...uninspected].sort() };
  }

  /** A failed status call leaves the IP unknown; the next relist asks again. */
  private async learnSandboxIps(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += INSPECT_CONCURRENCY) {
      await Promise.all(
        ids.slice(i, i + INSPECT_CONCURRENCY).map(async (id) => {
          try {
            this.sandboxIps.set(id, await this.runtime.podSandboxIp(id));
          } catch {
            // not now
          }
        }),
      );
    }
  }
}

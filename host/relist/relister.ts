// One relist: ListPodSandbox + ListContainers (nanolet's label only), plus ContainerStatus for
// containers whose exit code or start time is not known yet. Exited containers never change, so
// their details are cached by ID; a relist of a steady node makes exactly two calls. The two
// answers are not decoded: they are scanned (relist/list-scanning.ts) and packed for the core as
// they came (relist/wire-packing.ts); host records of them are made only if something reads them.
import type { PackedSnapshot, RuntimeSnapshot } from "../core/types.js";
import { ContainerDetail, LABEL_MANAGED_BY, Runtime } from "../cri/runtime.js";
import { CONTAINER_ROW, CR_ID, CR_STATE, CR_UID_LABEL, ContainerRows, SANDBOX_ROW, SR_ID, SR_READY, SandboxRows, scanContainerList, scanSandboxList } from "./list-scanning.js";
import { CONTAINER_STATE_NAMES as STATE_NAMES } from "../cri/list-decoding.js";
import { lazySnapshot } from "./observations.js";
import { KnownDetail, WirePacker } from "./wire-packing.js";

import type { TaskExit } from "../cri/runtime-events.js";
import { terminationMessage } from "../logs/termination-message.js";

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
  detail: KnownDetail;
  atMs: number;
  /** The relist that last listed this container. */
  listedIn: number;
}

/** CRI container states as the scanned rows carry them. */
const CREATED = 0;
const RUNNING = 1;
const EXITED = 2;
const UNKNOWN = 3;

/** What one relist saw. */
export interface Relist {
  /** For the core (handle-relist-packed); valid until the next relist. */
  packed: PackedSnapshot;
  /** The same relist as host records, made when first read. */
  snapshot: RuntimeSnapshot;
  counts: RelistCounts;
}

/** How many sandboxes are ready and how many containers are in each state (metrics). */
export interface RelistCounts {
  readySandboxes: number;
  containers: Record<"created" | "running" | "exited" | "unknown", number>;
}

function countOf(sandboxes: SandboxRows, states: Uint8Array): RelistCounts {
  let readySandboxes = 0;
  for (let i = 0; i < sandboxes.count; i++) if (sandboxes.rows[i * SANDBOX_ROW + SR_READY]) readySandboxes++;
  const byState = [0, 0, 0, 0];
  for (const state of states) byState[state]!++;
  return { readySandboxes, containers: { created: byState[0]!, running: byState[1]!, exited: byState[2]!, unknown: byState[3]! } };
}

/** What containerd's task-exit event (and an OOM event before it) says of an exit. */
export interface AnnouncedExit extends TaskExit {
  oomKilled: boolean;
}

interface Known {
  state: string;
  detail: KnownDetail;
  /** The relist that last listed this container (entries no relist lists any more are dropped). */
  listedIn: number;
}

export class Relister {
  /** Details by container ID, kept while the container is listed in the same state. */
  private known = new Map<string, Known>();
  /**
   * Pod IP by sandbox ID, asked once per new ready sandbox (PodSandboxStatus: the status's podIP),
   * and the relist that last listed the sandbox.
   */
  private sandboxes = new Map<string, { ip: string; listedIn: number }>();
  /** The containers of the last relist, and their image references by ID once asked (imageRefOf). */
  private lastContainers: ContainerRows | undefined;
  private packer = new WirePacker();
  /** Exits containerd announced that the CRI does not show yet, by container ID. */
  private pushedExits = new Map<string, PushedExit>();
  /** Index in the last relist by container ID, made when imageRefOf first asks. */
  private imageRefs: Map<string, number> | undefined;
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
    this.known.set(detail.id, { state: detail.state, detail: KnownDetail.of(detail), listedIn: this.relists });
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
    this.pushedExits.set(running.id, { detail: KnownDetail.of(detail), atMs: this.nowMs(), listedIn: this.relists });
  }

  /** The image digest reference (CRI `image_ref`) of a container the last relist listed. */
  imageRefOf(containerId: string): string | undefined {
    // Indexed on first use after each relist (status updates ask, a steady relist does not);
    // only the containers asked about are read again from the answer.
    if (!this.imageRefs) {
      this.imageRefs = new Map();
      for (let i = 0; this.lastContainers && i < this.lastContainers.count; i++) this.imageRefs.set(this.lastContainers.string(i, CR_ID, CONTAINER_ROW), i);
    }
    const i = this.imageRefs.get(containerId);
    return i === undefined || !this.lastContainers ? undefined : this.lastContainers.infoAt(i).imageRef;
  }

  /** The IP of a sandbox the last relists listed, as the runtime told it ("" on the host's network). */
  sandboxIp(sandboxId: string): string | undefined {
    return this.sandboxes.get(sandboxId)?.ip;
  }

  /** What the container wrote to its termination message file enriches the runtime's message. */
  private enrich(detail: ContainerDetail, annotations: Record<string, string>): void {
    if (detail.state !== "exited") return;
    const written = terminationMessage(annotations, detail.exitCode, detail.reason);
    if (written) detail.message = detail.message ? `${detail.message}: ${written}` : written;
  }

  /**
   * One relist. Its packed form, for the core, is valid until the next relist (its text buffer
   * is reused); its snapshot, for the host's own readers, is made when first read.
   */
  async relist(): Promise<Relist> {
    const listedAtMs = this.nowMs();
    const [sandboxes, containers] = await Promise.all([
      this.runtime.listPodSandboxBytes(MANAGED_SELECTOR).then((bytes) => scanSandboxList(bytes)),
      this.runtime.listContainersBytes(MANAGED_SELECTOR).then((bytes) => scanContainerList(bytes)),
    ]);
    const relist = ++this.relists;
    const uninspected = new Set<string>();
    const count = containers.count;
    const rows = containers.rows;
    // The only strings a relist makes of the containers' answer: their IDs, to find what is
    // known of each (one lookup per container, which also marks it as listed by this relist).
    // Kept only for the containers to inspect: the rest die young, before the awaits below
    // (on a large node, keeping them all promoted thousands of strings a relist).
    const knownOf: (Known | undefined)[] = new Array(count);
    const states = new Uint8Array(count);
    const toInspect: { i: number; id: string }[] = [];
    for (let i = 0; i < count; i++) {
      const id = containers.string(i, CR_ID, CONTAINER_ROW);
      const stateCode = rows[i * CONTAINER_ROW + CR_STATE]!;
      states[i] = stateCode;
      const known = this.known.get(id);
      if (known) known.listedIn = relist;
      knownOf[i] = known;
      if (stateCode === CREATED || stateCode === UNKNOWN) continue;
      if (!known || known.state !== STATE_NAMES[stateCode]) toInspect.push({ i, id });
    }
    for (let k = 0; k < toInspect.length; k += INSPECT_CONCURRENCY) {
      await Promise.all(
        toInspect.slice(k, k + INSPECT_CONCURRENCY).map(async ({ i, id }) => {
          try {
            const detail = await this.runtime.containerStatus(id);
            this.enrich(detail, containers.infoAt(i).annotations);
            const known = { state: detail.state, detail: KnownDetail.of(detail), listedIn: relist };
            this.known.set(id, known);
            knownOf[i] = known;
          } catch {
            // Removed between the list and the status call, or the runtime failed: the core
            // keeps this pod's previous view and we look again next relist.
            uninspected.add(containers.string(i, CR_UID_LABEL, CONTAINER_ROW));
          }
        }),
      );
    }
    await this.learnSandboxIps(sandboxes, relist);
    // Containers this relist did not list are gone (details remembered while it ran wait for the next).
    for (const [id, known] of this.known) if (known.listedIn < relist) this.known.delete(id);
    this.lastContainers = containers;
    this.imageRefs = undefined;

    const details: (KnownDetail | undefined)[] = new Array(count);
    const pushedExits = this.pushedExits.size > 0 ? this.pushedExits : undefined;
    for (let i = 0; i < count; i++) {
      const known = knownOf[i];
      // A container whose details could not be read is still listed, as the runtime listed it:
      // the PLEG sees its state, and the core keeps its pod's old view (the pod is uninspected).
      details[i] = known && known.state === STATE_NAMES[states[i]!] ? known.detail : undefined;
      if (!pushedExits) continue;
      const id = containers.string(i, CR_ID, CONTAINER_ROW);
      const pushed = pushedExits.get(id);
      if (pushed) {
        pushed.listedIn = relist;
        if (states[i] === RUNNING && listedAtMs - pushed.atMs < PUSHED_EXIT_TRUST_MS) {
          states[i] = EXITED;
          details[i] = pushed.detail;
        } else {
          // The CRI shows the exit now (or, long after, still does not: it is believed).
          pushedExits.delete(id);
        }
      }
    }
    if (pushedExits) for (const [id, pushed] of pushedExits) if (pushed.listedIn < relist) pushedExits.delete(id);
    uninspected.delete("");
    const uninspectedPodUids = [...uninspected].sort();
    const facts = { states, details };
    return {
      packed: this.packer.pack(BigInt(listedAtMs), sandboxes, containers, facts, uninspectedPodUids),
      snapshot: lazySnapshot(BigInt(listedAtMs), sandboxes, containers, facts, uninspectedPodUids),
      counts: countOf(sandboxes, states),
    };
  }

  /**
   * Asks the IP of each new ready sandbox (PodSandboxStatus); forgets sandboxes no longer
   * listed. A failed status call leaves the IP unknown; the next relist asks again.
   */
  private async learnSandboxIps(sandboxes: SandboxRows, relist: number): Promise<void> {
    const ask: string[] = [];
    for (let i = 0; i < sandboxes.count; i++) {
      const id = sandboxes.string(i, SR_ID, SANDBOX_ROW);
      const known = this.sandboxes.get(id);
      if (known) known.listedIn = relist;
      else if (sandboxes.rows[i * SANDBOX_ROW + SR_READY]) ask.push(id);
    }
    for (let i = 0; i < ask.length; i += INSPECT_CONCURRENCY) {
      await Promise.all(
        ask.slice(i, i + INSPECT_CONCURRENCY).map(async (id) => {
          try {
            this.sandboxes.set(id, { ip: await this.runtime.podSandboxIp(id), listedIn: relist });
          } catch {
            // not now
          }
        }),
      );
    }
    for (const [id, known] of this.sandboxes) if (known.listedIn < relist) this.sandboxes.delete(id);
  }
}

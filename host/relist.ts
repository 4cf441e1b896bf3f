// One relist: ListPodSandbox + ListContainers (nanolet's label only), plus ContainerStatus for
// containers whose exit code or start time is not known yet. Exited containers never change, so
// their details are cached by ID; a relist of a steady node makes exactly two calls.
import type { ContainerObservation, RuntimeSnapshot, SandboxObservation } from "./core-types.js";
import {
  ANNOTATION_GRACE_PERIOD,
  ANNOTATION_SPEC_HASH,
  ContainerDetail,
  LABEL_MANAGED_BY,
  LABEL_POD_UID,
  Runtime,
} from "./cri/runtime.js";

import { terminationMessage } from "./logs/termination-message.js";

export const MANAGED_SELECTOR = { [LABEL_MANAGED_BY]: "true" };
/** Status calls in flight at once during one relist. */
const INSPECT_CONCURRENCY = 8;

interface Known {
  state: string;
  detail: ContainerDetail;
}

export class Relister {
  /** Details by container ID, kept while the container is listed in the same state. */
  private known = new Map<string, Known>();
  /** Image digest reference by container ID, from the last relist: the status's imageID. */
  readonly imageRefs = new Map<string, string>();
  /** Pod IP by sandbox ID, asked once per new ready sandbox (PodSandboxStatus): the status's podIP. */
  readonly sandboxIps = new Map<string, string>();

  constructor(
    private runtime: Runtime,
    private nowMs: () => number,
  ) {}

  async relist(): Promise<RuntimeSnapshot> {
    const listedAtMs = this.nowMs();
    const [sandboxes, containers] = await Promise.all([
      this.runtime.listPodSandboxes(MANAGED_SELECTOR),
      this.runtime.listContainers(MANAGED_SELECTOR),
    ]);
    const uninspected = new Set<string>();
    const toInspect = containers.filter((c) => {
      if (c.state === "created" || c.state === "unknown") return false;
      const known = this.known.get(c.id);
      return !known || known.state !== c.state;
    });
    for (let i = 0; i < toInspect.length; i += INSPECT_CONCURRENCY) {
      await Promise.all(
        toInspect.slice(i, i + INSPECT_CONCURRENCY).map(async (c) => {
          try {
            const detail = await this.runtime.containerStatus(c.id);
            if (detail.state === "exited") {
              // What the container wrote to its termination message file enriches the runtime's message.
              const written = terminationMessage(c.annotations, detail.exitCode, detail.reason);
              if (written) detail.message = detail.message ? `${detail.message}: ${written}` : written;
            }
            this.known.set(c.id, { state: detail.state, detail });
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
    const listed = new Set(containers.map((c) => c.id));
    for (const id of this.known.keys()) if (!listed.has(id)) this.known.delete(id);

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
    const containerObservations: ContainerObservation[] = [];
    this.imageRefs.clear();
    for (const c of containers) {
      if (c.imageRef) this.imageRefs.set(c.id, c.imageRef);
      const podUid = c.labels[LABEL_POD_UID] ?? "";
      const known = this.known.get(c.id);
      const detail = known && known.state === c.state ? known.detail : undefined;
      // A container whose details could not be read is still listed, as the runtime listed it:
      // the PLEG sees its state, and the core keeps its pod's old view (the pod is uninspected).
      containerObservations.push({
        id: c.id,
        sandboxId: c.sandboxId,
        podUid,
        name: c.name,
        attempt: c.attempt,
        state: c.state,
        image: c.image,
        specHash: c.annotations[ANNOTATION_SPEC_HASH] ?? "",
        exitCode: detail?.exitCode ?? 0,
        reason: detail?.reason ?? "",
        message: detail?.message ?? "",
        createdAtNs: c.createdAtNs,
        startedAtNs: detail?.startedAtNs ?? 0n,
        finishedAtNs: detail?.finishedAtNs ?? 0n,
      });
    }
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

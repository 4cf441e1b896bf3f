// A relist's observations as host records (RuntimeSnapshot), read from the scanned answers: the
// same relist the packed form says (relist/wire-packing.ts), for the host's own readers (stats,
// log rotation, metrics, traces). Made only when one of them asks (lazySnapshot).
import type { ContainerObservation, RuntimeSnapshot, SandboxObservation } from "../core/types.js";
import {
  CONTAINER_ROW,
  CR_ATTEMPT,
  CR_CREATED,
  CR_ID,
  CR_IMAGE,
  CR_NAME,
  CR_SANDBOX_ID,
  CR_SPEC_HASH,
  CR_UID_LABEL,
  ContainerRows,
  SANDBOX_ROW,
  SR_ATTEMPT,
  SR_CREATED,
  SR_GRACE,
  SR_ID,
  SR_NAME,
  SR_NAMESPACE,
  SR_READY,
  SR_UID,
  SR_UID_LABEL,
  ABSENT,
  SandboxRows,
} from "./list-scanning.js";
import { CONTAINER_STATE_NAMES, int64Of } from "../cri/list-decoding.js";
import { readGracePeriod, type ContainerFacts } from "./wire-packing.js";

export function sandboxObservations(sandboxes: SandboxRows): SandboxObservation[] {
  const s = sandboxes.rows;
  const grace = new Uint32Array(2);
  const out: SandboxObservation[] = new Array(sandboxes.count);
  for (let i = 0; i < sandboxes.count; i++) {
    const r = i * SANDBOX_ROW;
    const hasGrace = readGracePeriod(sandboxes.bytes, s[r + SR_GRACE]!, s[r + SR_GRACE + 1]!, grace, 0);
    out[i] = {
      id: sandboxes.string(i, SR_ID, SANDBOX_ROW),
      podUid: sandboxes.string(i, s[r + SR_UID_LABEL] !== ABSENT ? SR_UID_LABEL : SR_UID, SANDBOX_ROW),
      podName: sandboxes.string(i, SR_NAME, SANDBOX_ROW),
      podNamespace: sandboxes.string(i, SR_NAMESPACE, SANDBOX_ROW),
      attempt: s[r + SR_ATTEMPT]!,
      state: s[r + SR_READY] ? "ready" : "not-ready",
      createdAtNs: int64Of(s[r + SR_CREATED + 1]!, s[r + SR_CREATED]!),
      terminationGracePeriodSeconds: hasGrace ? new BigInt64Array(grace.buffer)[0] : undefined,
    };
  }
  return out;
}

export function containerObservations(containers: ContainerRows, facts: ContainerFacts): ContainerObservation[] {
  const c = containers.rows;
  const out: ContainerObservation[] = new Array(containers.count);
  for (let i = 0; i < containers.count; i++) {
    const r = i * CONTAINER_ROW;
    const detail = facts.details[i];
    out[i] = {
      id: containers.string(i, CR_ID, CONTAINER_ROW),
      sandboxId: containers.string(i, CR_SANDBOX_ID, CONTAINER_ROW),
      podUid: containers.string(i, CR_UID_LABEL, CONTAINER_ROW),
      name: containers.string(i, CR_NAME, CONTAINER_ROW),
      attempt: c[r + CR_ATTEMPT]!,
      state: CONTAINER_STATE_NAMES[facts.states[i]!]!,
      image: containers.string(i, CR_IMAGE, CONTAINER_ROW),
      specHash: containers.string(i, CR_SPEC_HASH, CONTAINER_ROW),
      exitCode: detail?.exitCode ?? 0,
      reason: detail?.reason ?? "",
      message: detail?.message ?? "",
      createdAtNs: int64Of(c[r + CR_CREATED + 1]!, c[r + CR_CREATED]!),
      startedAtNs: detail?.startedAtNs ?? 0n,
      finishedAtNs: detail?.finishedAtNs ?? 0n,
    };
  }
  return out;
}

/**
 * A RuntimeSnapshot whose lists are read from the answers the first time they are asked for
 * (then kept): a relist the core takes packed, and that no host reader looks at, makes none.
 */
export function lazySnapshot(listedAtMs: bigint, sandboxes: SandboxRows, containers: ContainerRows, facts: ContainerFacts, uninspectedPodUids: string[]): RuntimeSnapshot {
  let sandboxList: SandboxObservation[] | undefined;
  let containerList: ContainerObservation[] | undefined;
  return {
    listedAtMs,
    uninspectedPodUids,
    get sandboxes() {
      return (sandboxList ??= sandboxObservations(sandboxes));
    },
    get containers() {
      return (containerList ??= containerObservations(containers, facts));
    },
  };
}

// AssemblyScript mirrors of wit/runtime-state.wit: sandboxes and containers as a relist saw them.
// Field order and meaning follow the WIT records one to one; assembly/abi/ moves them across
// the boundary.

export const enum SandboxState {
  Ready = 0,
  NotReady = 1,
}

export class SandboxObservation {
  id: string = "";
  podUid: string = "";
  podName: string = "";
  podNamespace: string = "";
  attempt: u32 = 0;
  state: i32 = SandboxState.Ready;
  createdAtNs: i64 = 0;
  hasGracePeriod: bool = false;
  terminationGracePeriodSeconds: i64 = 0;
  /// The PLEG's serial of this sandbox's ID when read from a relist (see Pleg.sandboxSerialAt);
  /// 0 when made here. Lets the next relist find this object without comparing IDs.
  relistSerial: u64 = 0;
}

export const enum ContainerState {
  Created = 0,
  Running = 1,
  Exited = 2,
  Unknown = 3,
}

export class ContainerObservation {
  id: string = "";
  sandboxId: string = "";
  podUid: string = "";
  name: string = "";
  attempt: u32 = 0;
  state: i32 = ContainerState.Unknown;
  image: string = "";
  specHash: string = "";
  exitCode: i32 = 0;
  reason: string = "";
  message: string = "";
  createdAtNs: i64 = 0;
  startedAtNs: i64 = 0;
  finishedAtNs: i64 = 0;
  /// The PLEG's fingerprint of the container when read from a relist (never 0); 0 when made or
  /// changed here. A later relist with the same fingerprint keeps this object as it is.
  relistFingerprint: u64 = 0;
  /// The PLEG's serial of this container's ID when read from a relist (see
  /// Pleg.containerSerialAt); 0 when made here.
  relistSerial: u64 = 0;
}

export class RuntimeSnapshot {
  listedAtMs: u64 = 0;
  sandboxes: SandboxObservation[] = [];
  containers: ContainerObservation[] = [];
  uninspectedPodUids: string[] = [];
}

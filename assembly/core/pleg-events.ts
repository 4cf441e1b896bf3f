// The PLEG's events (upstream pkg/kubelet/pleg/generic.go): what a container's move from one
// state to another between two relists is called.
import { ContainerState } from "./model";

/// The PLEG's own view of a container: created and unknown both read as "unknown".
export const enum PlegState {
  NonExistent = 0,
  Running = 1,
  Exited = 2,
  Unknown = 3,
}

export const enum PlegEventType {
  ContainerStarted = 0,
  ContainerDied = 1,
  ContainerRemoved = 2,
  /// Seen by upstream but not sent on; counted here for the record.
  ContainerChanged = 3,
}

export class PlegEvent {
  constructor(public podUid: string, public containerId: string, public type: i32) {}
}

export function plegStateOfContainer(state: i32): PlegState {
  if (state == ContainerState.Running) return PlegState.Running;
  if (state == ContainerState.Exited) return PlegState.Exited;
  return PlegState.Unknown;
}

/// Events for one container moving from `oldState` to `newState`; appended to `out`.
export function generateEvents(podUid: string, id: string, oldState: PlegState, newState: PlegState, out: PlegEvent[]): void {
  if (oldState == newState) return;
  switch (newState) {
    case PlegState.Running:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerStarted));
      return;
    case PlegState.Exited:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerDied));
      return;
    case PlegState.Unknown:
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerChanged));
      return;
    case PlegState.NonExistent:
      // A container that vanished without being seen exited also died.
      if (oldState != PlegState.Exited) out.push(new PlegEvent(podUid, id, PlegEventType.ContainerDied));
      out.push(new PlegEvent(podUid, id, PlegEventType.ContainerRemoved));
      return;
  }
}

/// How many events `generateEvents` would append for the same move, without making them.
export function countEvents(oldState: PlegState, newState: PlegState): i32 {
  if (oldState == newState) return 0;
  if (newState != PlegState.NonExistent) return 1;
  return oldState == PlegState.Exited ? 1 : 2;
}

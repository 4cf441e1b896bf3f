// PLEG relist diff (upstream pkg/kubelet/pleg/generic.go): compares the previous and the new
// runtime state of every container and sandbox and names what happened to each.
import { ContainerObservation, ContainerState, SandboxObservation, SandboxState } from "./model";

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

export function plegStateOfSandbox(state: i32): PlegState {
  return state == SandboxState.Ready ? PlegState.Running : PlegState.Exited;
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

/// What the PLEG remembers of one container or sandbox between relists.
class Record {
  constructor(public podUid: string, public state: PlegState, public seenInRelist: u32) {}
}

/// Remembers the last relist and diffs each new one against it.
export class Pleg {
  private records: Map<string, Record> = new Map();
  private order: string[] = [];
  private relistCount: u32 = 0;

  /// Diffs a new relist; returns events in input order, then vanished ones in first-seen order.
  relist(sandboxes: SandboxObservation[], containers: ContainerObservation[]): PlegEvent[] {
    const events: PlegEvent[] = [];
    const generation = ++this.relistCount;
    for (let i = 0, n = sandboxes.length; i < n; i++) {
      const s = unchecked(sandboxes[i]);
      this.observe(s.podUid, s.id, plegStateOfSandbox(s.state), generation, events);
    }
    for (let i = 0, n = containers.length; i < n; i++) {
      const c = unchecked(containers[i]);
      this.observe(c.podUid, c.id, plegStateOfContainer(c.state), generation, events);
    }
    // Whatever was not seen this time has vanished.
    const kept: string[] = [];
    for (let i = 0, n = this.order.length; i < n; i++) {
      const id = unchecked(this.order[i]);
      const record = this.records.get(id);
      if (record.seenInRelist == generation) {
        kept.push(id);
      } else {
        generateEvents(record.podUid, id, record.state, PlegState.NonExistent, events);
        this.records.delete(id);
      }
    }
    this.order = kept;
    return events;
  }

  private observe(podUid: string, id: string, state: PlegState, generation: u32, events: PlegEvent[]): void {
    if (this.records.has(id)) {
      const record = this.records.get(id);
      if (record.seenInRelist == generation) return; // a duplicate within one relist
      generateEvents(podUid, id, record.state, state, events);
      record.state = state;
      record.seenInRelist = generation;
    } else {
      generateEvents(podUid, id, PlegState.NonExistent, state, events);
      this.records.set(id, new Record(podUid, state, generation));
      this.order.push(id);
    }
  }

  /// Forgets everything, as after an agent restart.
  clear(): void {
    this.records.clear();
    this.order = [];
  }

  get size(): i32 {
    return this.records.size;
  }
}

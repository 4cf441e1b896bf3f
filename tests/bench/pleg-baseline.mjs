// The PLEG relist diff of assembly/core/pleg.ts written again in plain JavaScript, as the
// baseline the benchmark compares the component against (same records, same rules).
const NON_EXISTENT = 0;
const RUNNING = 1;
const EXITED = 2;
const UNKNOWN = 3;

function containerState(state) {
  return state === "running" ? RUNNING : state === "exited" ? EXITED : UNKNOWN;
}

function generateEvents(podUid, id, oldState, newState, out) {
  if (oldState === newState) return;
  switch (newState) {
    case RUNNING:
      out.push({ podUid, id, type: "ContainerStarted" });
      return;
    case EXITED:
      out.push({ podUid, id, type: "ContainerDied" });
      return;
    case UNKNOWN:
      out.push({ podUid, id, type: "ContainerChanged" });
      return;
    case NON_EXISTENT:
      if (oldState !== EXITED) out.push({ podUid, id, type: "ContainerDied" });
      out.push({ podUid, id, type: "ContainerRemoved" });
  }
}

export class JsPleg {
  records = new Map();
  order = [];
  generation = 0;

  relist(sandboxes, containers) {
    const events = [];
    const generation = ++this.generation;
    for (const s of sandboxes) this.observe(s.podUid, s.id, s.state === "ready" ? RUNNING : EXITED, generation, events);
    for (const c of containers) this.observe(c.podUid, c.id, containerState(c.state), generation, events);
    const kept = [];
    for (const id of this.order) {
      const record = this.records.get(id);
      if (record.seen === generation) kept.push(id);
      else {
        generateEvents(record.podUid, id, record.state, NON_EXISTENT, events);
        this.records.delete(id);
      }
    }
    this.order = kept;
    return events;
  }

  observe(podUid, id, state, generation, events) {
    const record = this.records.get(id);
    if (record) {
      if (record.seen === generation) return;
      generateEvents(podUid, id, record.state, state, events);
      record.state = state;
      record.seen = generation;
    } else {
      generateEvents(podUid, id, NON_EXISTENT, state, events);
      this.records.set(id, { podUid, state, seen: generation });
      this.order.push(id);
    }
  }
}

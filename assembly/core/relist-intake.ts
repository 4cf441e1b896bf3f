// The PLEG's side of the agent: when to relist, which answers to take, and how a relist becomes
// each changed pod's view of the runtime. Pods whose view a local change made stale wait on a
// list here until a relist newer than that change replaces it.
import { WorkerContext } from "./context";
import { ContainerObservation, SandboxObservation } from "./model";
import { C_ID, PackedSnapshot, S_ID } from "./packed";
import { Pleg } from "./pleg";
import { PodManager } from "./pod-manager";
import { PodRecord } from "./pod-record";
import { WorkerState } from "./pod-workers";

const BACKOFF_COLLECT_PERIOD_MS: u64 = 60_000;
/// A relist unanswered for this long is given up and asked again: a host that lost the answer
/// must not freeze every pod. (A real relist ends sooner: each CRI call has its own deadline.)
export const RELIST_ANSWER_TIMEOUT_MS: u64 = 30_000;
/// Upstream's eventedPlegRelistPeriod: while the runtime's event stream brings each change, a
/// relist every five minutes only catches what a lost event would hide.
export const EVENTED_RELIST_PERIOD_MS: u64 = 300_000;

export class RelistIntake {
  private pleg: Pleg = new Pleg();
  /// Pods whose view is not the runtime's last word (see markViewStale).
  private staleViews: PodRecord[] = [];
  private inFlightId: u64 = 0;
  private issuedAtMs: u64 = 0;
  private nextAtMs: u64 = 0;
  /// The runtime streams every container change (CRI GetContainerEvents): periodic relists are
  /// only a safety net, every `EVENTED_RELIST_PERIOD_MS` (see `eventStream`).
  private evented: bool = false;
  /// The relist after the one in flight comes within the configured period (relistWithinPeriod).
  private soonAfterAnswer: bool = false;
  /// `listed-at-ms` of the newest relist taken in; an older one arriving later is out of date.
  private newestListedAtMs: u64 = 0;
  /// Reused by replaceView: each pod's new view is gathered here, then copied into its lists.
  private scratchSandboxes: SandboxObservation[] = [];
  private scratchContainers: ContainerObservation[] = [];
  /// When back-off entries idle for more than 2 x max are next dropped (upstream: every minute).
  private nextBackoffCollectAtMs: u64 = 0;
  /// No pod is acted on before the first relist: after an agent restart the runtime already
  /// holds its pods, and acting blind would create duplicates.
  seenRuntime: bool = false;
  plegEventCount: u64 = 0;
  staleRelistCount: u64 = 0;
  abandonedRelistCount: u64 = 0;

  constructor(private ctx: WorkerContext, private pods: PodManager) {
    // The agent acts on which pods changed and only counts the events.
    this.pleg.collectEvents = false;
  }

  /// Queues a relist when one is due (or asked for) and none is in flight.
  poll(nowMs: u64): void {
    const ctx = this.ctx;
    if (ctx.relistRequested && this.inFlightId == 0) {
      ctx.relistRequested = false;
      this.nextAtMs = nowMs;
    }
    if (this.inFlightId != 0 && nowMs >= this.issuedAtMs + RELIST_ANSWER_TIMEOUT_MS) {
      this.abandonedRelistCount++;
      this.inFlightId = 0;
    }
    if (this.inFlightId == 0 && nowMs >= this.nextAtMs) {
      this.inFlightId = ctx.relist();
      this.issuedAtMs = nowMs;
    }
  }

  /// The period between relists now: the configured one, or the evented one while the runtime
  /// streams its changes.
  periodMs(): u64 {
    return this.evented ? EVENTED_RELIST_PERIOD_MS : this.ctx.config.relistPeriodMs;
  }

  /// The runtime's event stream came up (`streaming`) or was given up on. Either way a relist
  /// follows at once (changes made while no stream was listening came as no event), and the
  /// period after it is the one `periodMs` now says.
  eventStream(streaming: bool): void {
    this.evented = streaming;
    this.ctx.relistRequested = true;
  }

  /// When a relist is next due, or given up on.
  deadline(): u64 {
    if (this.inFlightId == 0) return this.ctx.relistRequested ? this.ctx.nowMs : this.nextAtMs;
    return this.issuedAtMs + RELIST_ANSWER_TIMEOUT_MS;
  }

  /// Takes the failure of the relist in flight; false when `actionId` is not that relist.
  takeFailure(nowMs: u64, actionId: u64): bool {
    if (actionId != this.inFlightId || this.inFlightId == 0) return false;
    this.inFlightId = 0;
    // Tried again a configured period on, even while events drive the relists: the changes the
    // failed relist was asked to see came as events already and will not come again.
    this.nextAtMs = nowMs + this.ctx.config.relistPeriodMs;
    return true;
  }

  handle(nowMs: u64, snapshot: PackedSnapshot): void {
    const listedBeforeAsked = this.inFlightId == 0 || snapshot.listedAtMs < this.issuedAtMs;
    if (snapshot.listedAtMs < this.newestListedAtMs && listedBeforeAsked) {
      // A late or repeated answer to an earlier relist: the runtime has since said something
      // newer, and taking it would move views back in time. (An answer listed after the current
      // relist was asked is taken even if older: that is the host's clock stepping back.)
      this.staleRelistCount++;
      return;
    }
    this.inFlightId = 0;
    this.nextAtMs = nowMs + this.periodMs();
    if (this.soonAfterAnswer) {
      this.soonAfterAnswer = false;
      this.relistWithinPeriod(nowMs);
    }
    this.newestListedAtMs = snapshot.listedAtMs;
    this.seenRuntime = true;
    if (nowMs >= this.nextBackoffCollectAtMs) {
      // Keeps back-off memory bounded on a long run: one entry per container spec ever failed.
      this.ctx.crashBackoff.collect(nowMs);
      this.ctx.imageBackoff.collect(nowMs);
      this.nextBackoffCollectAtMs = nowMs + BACKOFF_COLLECT_PERIOD_MS;
    }
    const diff = this.pleg.relist(snapshot);
    this.plegEventCount += <u64>diff.eventCount;
    const uninspected = new Set<string>();
    for (let i = 0; i < snapshot.uninspectedPodUids.length; i++) uninspected.add(snapshot.uninspectedPodUids[i]);

    // Pods the PLEG saw change, and orphans: sandboxes of pods nobody asked for.
    const changed = diff.changedPods;
    for (let i = 0, n = changed.length; i < n; i++) {
      const slot = unchecked(changed[i]);
      let rec: PodRecord;
      const owner = slot.owner;
      if (owner !== null && this.pods.holds(changetype<PodRecord>(owner))) {
        rec = changetype<PodRecord>(owner); // no lookup by UID (a string hash) per changed pod
      } else {
        if (!this.pods.has(slot.uid)) {
          if (slot.firstSandbox < 0) continue; // containers without a sandbox: nothing to act on
          this.pods.adoptOrphan(snapshot.materializeSandbox(slot.firstSandbox));
        }
        rec = this.pods.get(slot.uid);
        slot.owner = rec;
      }
      rec.plegSlot = slot;
      this.markViewStale(rec);
    }
    // Every pod whose view is not what the runtime last said takes the new relist, unless it is
    // older than the pod's own newest action or the pod could not be inspected.
    const stale = this.staleViews;
    this.staleViews = [];
    for (let i = 0, n = stale.length; i < n; i++) {
      const rec = unchecked(stale[i]);
      if (rec.viewIsSnapshot || rec.state == WorkerState.Forgotten) continue;
      if (uninspected.size > 0 && uninspected.has(rec.uid)) {
        // The runtime has something of this pod that could not be read. Acting on the old view
        // could duplicate what is there (after an agent restart the old view is empty), so the
        // pod waits for a relist that reads it, as upstream's pod worker waits out a status error.
        this.staleViews.push(rec);
        rec.needsFreshView = true;
        continue;
      }
      if (snapshot.listedAtMs <= rec.viewMutatedAtMs) {
        // Keep the view: it is newer. Look again at once if the pod is waiting for the runtime's
        // word (a relist taken in the same millisecond as the pod's last result cannot tell
        // whether it saw that result's effect).
        this.staleViews.push(rec);
        if (rec.needsFreshView) this.ctx.relistRequested = true;
        continue;
      }
      this.replaceView(rec, snapshot);
    }
    // A pod that could not be inspected waits for a relist that reads it, and no runtime event
    // will ask for one.
    if (snapshot.uninspectedPodUids.length > 0) this.relistWithinPeriod(nowMs);
  }

  /// The next relist comes within the configured period, even while events drive the relists:
  /// for what no event will announce (a pod that could not be read, a call whose outcome is
  /// unknown).
  relistWithinPeriod(nowMs: u64): void {
    if (this.inFlightId != 0) {
      this.soonAfterAnswer = true; // the relist in flight may have been listed before
      return;
    }
    const atMs = nowMs + this.ctx.config.relistPeriodMs;
    if (this.nextAtMs > atMs) this.nextAtMs = atMs;
  }

  /// The pod's view becomes what the snapshot says; unchanged observations are kept as objects,
  /// and the record's lists are refilled in place (the pod's own lists: nothing else holds them).
  private replaceView(rec: PodRecord, snapshot: PackedSnapshot): void {
    let slot = rec.plegSlot;
    if (slot === null || !this.pleg.isCurrent(slot)) slot = this.pleg.slotOf(rec.uid);
    const sandboxes = this.scratchSandboxes;
    const containers = this.scratchContainers;
    if (slot !== null) {
      const pleg = this.pleg;
      for (let index = slot.firstSandbox; index >= 0; index = pleg.nextSandbox(index)) {
        const serial = pleg.sandboxSerialAt(index);
        let previous = bySerial<SandboxObservation>(rec.sandboxes, serial);
        const sameEntry = previous !== null;
        if (!sameEntry) previous = findSandboxAt(rec, snapshot, index);
        let s: SandboxObservation;
        if (previous !== null && snapshot.sandboxUnchanged(index, previous, sameEntry)) s = previous;
        else s = snapshot.materializeSandbox(index);
        s.relistSerial = serial;
        sandboxes.push(s);
      }
      for (let index = slot.firstContainer; index >= 0; index = pleg.nextContainer(index)) {
        const serial = pleg.containerSerialAt(index);
        let previous = bySerial<ContainerObservation>(rec.containers, serial);
        if (previous === null) previous = findContainerAt(rec, snapshot, index);
        const fingerprint = pleg.fingerprintAt(index);
        let c: ContainerObservation;
        if (previous !== null && previous.relistFingerprint != 0) {
          // Read from a relist before and not changed here since: only what can change while
          // the ID stays is read again, into the same object (no garbage on a busy node).
          if (previous.relistFingerprint != fingerprint) snapshot.refreshContainer(index, previous, fingerprint);
          c = previous;
        } else {
          c = snapshot.materializeContainer(index, previous, fingerprint);
        }
        c.relistSerial = serial;
        containers.push(c);
      }
    }
    refill<SandboxObservation>(rec.sandboxes, sandboxes);
    refill<ContainerObservation>(rec.containers, containers);
    rec.viewIsSnapshot = true;
    rec.onStaleList = false;
    rec.needsFreshView = false;
    rec.dirty = true;
  }

  /// The pod's view differs from what the runtime said last: the next relist replaces it.
  markViewStale(rec: PodRecord): void {
    if (!rec.viewIsSnapshot) {
      if (!rec.onStaleList) {
        rec.onStaleList = true;
        this.staleViews.push(rec);
      }
      return;
    }
    rec.viewIsSnapshot = false;
    rec.onStaleList = true;
    this.staleViews.push(rec);
  }
}

/// `into` takes the contents of `from`, which is left empty.
function refill<T>(into: T[], from: T[]): void {
  const n = from.length;
  into.length = n;
  for (let i = 0; i < n; i++) unchecked((into[i] = unchecked(from[i])));
  from.length = 0;
}

/// The observation in `list` read from the PLEG entry `serial` (the same ID), if there is one:
/// found without reading any ID (each a cache miss or two on a large node).
function bySerial<T>(list: T[], serial: u64): T | null {
  if (serial == 0) return null;
  for (let i = 0, n = list.length; i < n; i++) {
    const observation = unchecked(list[i]);
    if (observation.relistSerial == serial) return observation;
  }
  return null;
}

/// The pod's current observation of the sandbox at `index` of the snapshot, by ID (one made
/// here, or read before the PLEG last made the ID's entry anew).
function findSandboxAt(rec: PodRecord, snapshot: PackedSnapshot, index: i32): SandboxObservation | null {
  const start = snapshot.sandboxWord(index, S_ID);
  const length = snapshot.sandboxWord(index, S_ID + 1);
  const list = rec.sandboxes;
  for (let i = 0, n = list.length; i < n; i++) {
    const s = unchecked(list[i]);
    if (snapshot.rangeEquals(s.id, start, length)) return s;
  }
  return null;
}

function findContainerAt(rec: PodRecord, snapshot: PackedSnapshot, index: i32): ContainerObservation | null {
  const start = snapshot.containerWord(index, C_ID);
  const length = snapshot.containerWord(index, C_ID + 1);
  const list = rec.containers;
  for (let i = 0, n = list.length; i < n; i++) {
    const c = unchecked(list[i]);
    if (snapshot.rangeEquals(c.id, start, length)) return c;
  }
  return null;
}

// What the outcome of each runtime action does to its pod's view: a created sandbox or container
// joins the view at once (the next relist confirms it), a stop waits for the runtime's word, and
// a failure becomes a waiting reason, an event and a retry after the worker's back-off.
import { InFlight, WorkerContext, containerOfSpec } from "./context";
import { HookType } from "./probe-types";
import {
  ActionResult,
  ActionTag,
  ContainerObservation,
  ContainerState,
  ErrorKind,
  EventType,
  LinuxResources,
  SandboxObservation,
  SandboxState,
} from "./model";
import { AppliedResources, PodRecord } from "./pod-record";
import { PodManager } from "./pod-manager";
import { RelistIntake } from "./relist-intake";
import { wakePod } from "./pod-workers";
import { imagePullKey } from "./restart";
import { WaitingReason } from "./status";
import { volumesFailed, volumesSetUp, volumesTornDown } from "./volume-manager";

/// gRPC NOT_FOUND: the object is already gone, which is what a stop or remove wanted.
const GRPC_NOT_FOUND: u32 = 5;
const NS_PER_MS: i64 = 1_000_000;

export class ActionResults {
  /// Results of actions the core does not know (late, repeated or made up): ignored, counted.
  unknownCount: u64 = 0;

  constructor(private ctx: WorkerContext, private pods: PodManager, private intake: RelistIntake) {}

  apply(nowMs: u64, result: ActionResult): void {
    // Only failures of a relist come here; success is handle-relist.
    if (this.intake.takeFailure(nowMs, result.actionId)) return;
    if (!this.ctx.inFlight.has(result.actionId)) {
      this.unknownCount++;
      return;
    }
    const flight = this.ctx.inFlight.get(result.actionId);
    this.ctx.inFlight.delete(result.actionId);
    if (!this.pods.has(flight.podUid)) return;
    const rec = this.pods.get(flight.podUid);
    rec.busyCount--;
    rec.dirty = true;
    rec.viewMutatedAtMs = nowMs;
    this.intake.markViewStale(rec);
    const error = result.error;
    if (error !== null) {
      // A failed call may still have changed the runtime (a timeout), or changed nothing: no
      // event may come either way, so a relist looks within the configured period.
      this.intake.relistWithinPeriod(nowMs);
      this.applyFailure(nowMs, rec, flight, error.kind, error.grpcCode, error.message);
      return;
    }
    const nowNs = <i64>nowMs * NS_PER_MS;
    switch (flight.tag) {
      case ActionTag.RunSandbox: {
        const s = new SandboxObservation();
        s.id = result.createdId;
        s.podUid = rec.uid;
        s.podName = rec.name;
        s.podNamespace = rec.namespace;
        s.attempt = flight.attempt;
        s.state = SandboxState.Ready;
        s.createdAtNs = nowNs;
        rec.putSandbox(s);
        if (flight.resources !== null) rec.podApplied = flight.resources;
        break;
      }
      case ActionTag.CreateContainer: {
        const c = new ContainerObservation();
        c.id = result.createdId;
        c.sandboxId = flight.sandboxId;
        c.podUid = rec.uid;
        c.name = flight.containerName;
        c.attempt = flight.attempt;
        c.state = ContainerState.Created;
        c.image = flight.image;
        c.specHash = flight.specHash;
        c.createdAtNs = nowNs;
        rec.putContainer(c);
        if (flight.resources !== null) rec.applied.set(c.id, new AppliedResources(changetype<LinuxResources>(flight.resources), flight.requests, flight.limits));
        rec.waiting.delete(flight.containerName);
        this.ctx.imageBackoff.reset(imagePullKey(rec.uid, flight.image));
        this.ctx.event(rec, flight.containerName, EventType.Normal, "Created", "Container created");
        break;
      }
      case ActionTag.StartContainer: {
        const c = rec.findContainer(flight.containerId);
        if (c !== null) {
          c.state = ContainerState.Running;
          c.startedAtNs = nowNs;
          c.relistFingerprint = 0; // no longer what the relist said
        }
        this.ctx.event(rec, flight.containerName, EventType.Normal, "Started", "Container started");
        const container = containerOfSpec(rec.lastSpec, flight.containerName);
        if (container !== null && container.postStart !== null) this.ctx.runPostStart(rec, flight.containerId, container);
        break;
      }
      case ActionTag.RunHook:
        this.hookDone(nowMs, rec, flight, "");
        break;
      case ActionTag.StopContainer:
      case ActionTag.StopSandbox:
        // The exit code and finish time come from the runtime: decide again after a relist.
        this.markStopped(rec, flight);
        break;
      case ActionTag.RemoveContainer:
        rec.dropContainer(flight.containerId);
        rec.applied.delete(flight.containerId);
        break;
      case ActionTag.UpdateContainerResources:
        rec.applied.set(flight.containerId, new AppliedResources(changetype<LinuxResources>(flight.resources), flight.requests, flight.limits));
        this.ctx.event(rec, flight.containerName, EventType.Normal, "ResizeCompleted", "Container " + flight.containerName + " resized in place");
        break;
      case ActionTag.UpdatePodCgroup:
        rec.podApplied = flight.resources;
        break;
      case ActionTag.RemoveSandbox:
        rec.dropSandbox(flight.sandboxId);
        break;
      case ActionTag.SetUpVolumes:
        volumesSetUp(rec, flight.specHash, nowMs);
        break;
      case ActionTag.TearDownVolumes:
        volumesTornDown(rec);
        break;
    }
  }

  /// A lifecycle hook ended (`error` empty when it succeeded). A preStop hook is followed by the
  /// stop with what is left of the grace period; a failed postStart hook kills the container.
  private hookDone(nowMs: u64, rec: PodRecord, flight: InFlight, error: string): void {
    if (flight.hookType == HookType.PreStop) {
      if (error.length > 0) this.ctx.event(rec, flight.containerName, EventType.Warning, "FailedPreStopHook", error);
      if (!flight.stopAfterHook) return; // a sidecar: stopped at its turn
      const spentSeconds = <i64>((nowMs - flight.startedAtMs) / 1000);
      this.ctx.stopNow(rec, flight.containerId, flight.containerName, flight.graceSeconds - spentSeconds);
      return;
    }
    rec.postStartRunning.delete(flight.containerId);
    if (error.length == 0) return;
    // The message is not in the event, so that what a hook prints (secrets) stays off the server.
    this.ctx.event(rec, flight.containerName, EventType.Warning, "FailedPostStartHook", "PostStartHook failed");
    rec.waiting.set(flight.containerName, new WaitingReason("PostStartHookError", error));
    this.ctx.stopContainer(rec, flight.containerId, flight.containerName, "FailedPostStartHook");
  }

  private markStopped(rec: PodRecord, flight: InFlight): void {
    if (flight.tag == ActionTag.StopSandbox) {
      const s = rec.findSandbox(flight.sandboxId);
      if (s !== null) s.state = SandboxState.NotReady;
    }
    // A stopped container's exit code and finish time are the runtime's to say: guessing them
    // would publish a status (say, Succeeded) that the next relist contradicts. The pod waits
    // for that relist before it acts again.
    rec.needsFreshView = true;
    this.ctx.relistRequested = true;
  }

  private applyFailure(nowMs: u64, rec: PodRecord, flight: InFlight, kind: i32, grpcCode: u32, message: string): void {
    const tag = flight.tag;
    if (tag == ActionTag.RunHook) {
      this.hookDone(nowMs, rec, flight, message);
      return;
    }
    if (tag == ActionTag.SetUpVolumes) {
      // Upstream's reconciler: a FailedMount event for each failed try, the next after a back-off.
      this.ctx.event(rec, "", EventType.Warning, "FailedMount", message);
      const retryAtMs = volumesFailed(rec, nowMs);
      if (!rec.volumes.ready) wakePod(rec, retryAtMs, nowMs);
      return;
    }
    if (tag == ActionTag.TearDownVolumes) {
      // Still mounted: tried again (the host has logged why).
      wakePod(rec, nowMs + this.ctx.config.workerErrorBackoffMs, nowMs);
      return;
    }
    if (grpcCode == GRPC_NOT_FOUND && tag != ActionTag.CreateContainer && tag != ActionTag.RunSandbox && tag != ActionTag.StartContainer) {
      // Already gone: exactly what a stop or remove wanted.
      if (tag == ActionTag.RemoveContainer) rec.dropContainer(flight.containerId);
      else if (tag == ActionTag.RemoveSandbox) rec.dropSandbox(flight.sandboxId);
      else this.markStopped(rec, flight);
      return;
    }
    // A replacement for a spec change that cannot be created or started: its status says why.
    if (tag == ActionTag.CreateContainer || tag == ActionTag.StartContainer) {
      rec.restartForSpecChange.delete(flight.containerName);
      rec.restartForResize.delete(flight.containerName);
    }
    if (tag == ActionTag.CreateContainer && kind == ErrorKind.ImagePull) {
      this.ctx.imageBackoff.next(imagePullKey(rec.uid, flight.image), nowMs, nowMs);
      rec.waiting.set(flight.containerName, new WaitingReason("ErrImagePull", message));
      this.ctx.event(rec, flight.containerName, EventType.Warning, "Failed", "Failed to pull image \"" + flight.image + "\": " + message);
      // And, as upstream's failed start says of every sync that could not start the container:
      this.ctx.event(rec, flight.containerName, EventType.Warning, "Failed", "Error: ErrImagePull");
      // Look again after one relist period: the status then says ImagePullBackOff until the
      // wait ends (the step wakes the pod at the end of the wait).
      wakePod(rec, nowMs + this.ctx.config.relistPeriodMs, nowMs);
      return;
    }
    if (tag == ActionTag.CreateContainer && kind == ErrorKind.ImageNeverPull) {
      rec.waiting.set(flight.containerName, new WaitingReason("ErrImageNeverPull", message));
      this.ctx.event(rec, flight.containerName, EventType.Warning, "ErrImageNeverPull", message);
      this.ctx.event(rec, flight.containerName, EventType.Warning, "Failed", "Error: ErrImageNeverPull");
      rec.containerRetryAtMs.set(flight.containerName, nowMs + this.ctx.config.workerErrorBackoffMs);
      wakePod(rec, nowMs, nowMs);
      return;
    }
    if (tag == ActionTag.CreateContainer && kind == ErrorKind.Config) {
      rec.waiting.set(flight.containerName, new WaitingReason("CreateContainerConfigError", message));
    } else if (tag == ActionTag.CreateContainer) {
      rec.waiting.set(flight.containerName, new WaitingReason("CreateContainerError", message));
    } else if (tag == ActionTag.StartContainer) {
      rec.waiting.set(flight.containerName, new WaitingReason("RunContainerError", message));
      // A container whose start failed is left "created" or "exited" by the runtime: look again.
      rec.needsFreshView = true;
      this.ctx.relistRequested = true;
    }
    const reason = tag == ActionTag.RunSandbox ? "FailedCreatePodSandBox" : tag == ActionTag.StopContainer || tag == ActionTag.StopSandbox ? "FailedKillPod" : "Failed";
    // Upstream's SyncPod words the sandbox's failure so; the others are the runtime's own.
    this.ctx.event(rec, flight.containerName, EventType.Warning, reason, tag == ActionTag.RunSandbox ? "Failed to create pod sandbox: " + message : message);
    if (tag == ActionTag.CreateContainer || tag == ActionTag.StartContainer) {
      // This container is tried again after the worker's back-off; the others go on now, as
      // upstream's SyncPod goes on to the next container after one fails.
      rec.containerRetryAtMs.set(flight.containerName, nowMs + this.ctx.config.workerErrorBackoffMs);
      wakePod(rec, nowMs, nowMs);
      return;
    }
    // Upstream pod workers retry a failed sync after a fixed back-off.
    wakePod(rec, nowMs + this.ctx.config.workerErrorBackoffMs, nowMs);
  }
}

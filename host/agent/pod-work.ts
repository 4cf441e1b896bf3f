// The work the core asks for beside the runtime's calls: probes, lifecycle hooks, and a pod's
// volumes set up and torn down. Each run ends in the result the core is given at its next pump.
import type { ActionResult, HookRequest, PlannedAction, ProbeRequest, ProbeResult } from "../core/types.js";
import { runProbe } from "../probes/prober.js";
import type { ExecSlots } from "../probes/exec-slots.js";
import { runHook } from "../probes/hooks.js";
import type { PodFacts } from "../env/container-env.js";
import type { Logger } from "../common/log.js";
import type { Runtime } from "../cri/runtime.js";
import type { VolumeManager } from "../volumes/volume-manager.js";
import { errorResult, okResult } from "./action-results.js";

export interface PodWorkContext {
  runtime: Runtime;
  log: Logger;
  volumes?: VolumeManager;
  /** Where a probe or hook without a host connects: the pod's IP, or the node's (host network). */
  targetIp: (podUid: string) => string;
  /** What the pod's volumes may read of it; undefined once it is no longer desired. */
  podFacts: (podUid: string) => PodFacts | undefined;
  /** The node's bound on exec probes at once. */
  execSlots?: ExecSlots;
}

/** Runs one probe beside everything else. */
export async function probePod(ctx: PodWorkContext, action: PlannedAction, request: ProbeRequest, pod: string | undefined): Promise<ProbeResult> {
  const finding = await runProbe(request, { podIp: ctx.targetIp(action.podUid), runtime: ctx.runtime, execSlots: ctx.execSlots });
  ctx.log.log("debug", "probe", { pod, container: request.containerName, probe: request.probeType, outcome: finding.outcome });
  return { actionId: action.id, outcome: finding.outcome, output: finding.output };
}

/** Runs one lifecycle hook; its outcome is an action result (the pod waits for it). */
export async function hookPod(ctx: PodWorkContext, action: PlannedAction, request: HookRequest, pod: string | undefined): Promise<ActionResult> {
  const error = await runHook(request, { runtime: ctx.runtime, podIp: ctx.targetIp(action.podUid), podLabel: `${pod ?? ""}(${action.podUid})` });
  ctx.log.log(error ? "warn" : "debug", error ? "Lifecycle hook failed" : "Lifecycle hook ran", { pod, container: request.containerName, hook: request.hookType, ...(error ? { error } : {}) });
  return error ? errorResult(action.id, error) : okResult(action.id);
}

/** Sets up (or refreshes) the pod's volumes; the core retries a failure with back-off. */
export async function setUpVolumes(ctx: PodWorkContext, action: PlannedAction, names: string[], pod: string | undefined): Promise<ActionResult> {
  const facts = ctx.podFacts(action.podUid);
  let error: string | undefined;
  if (!facts || !ctx.volumes) error = !facts ? "the pod is no longer desired" : "this node has no pods directory to set up volumes in";
  else {
    try {
      await ctx.volumes.setUp(facts, names);
    } catch (e) {
      error = (e as Error).message;
    }
  }
  if (error !== undefined) ctx.log.log("warn", "Volume set-up failed", { pod, error });
  return error === undefined ? okResult(action.id) : errorResult(action.id, error);
}

/** Unmounts and removes the pod's volumes (all its containers have stopped); CSI drivers unpublish first. */
export async function tearDownVolumes(ctx: PodWorkContext, action: PlannedAction, pod: string | undefined): Promise<ActionResult> {
  try {
    await ctx.volumes?.tearDownCsi(action.podUid);
    ctx.volumes?.tearDown(action.podUid);
    return okResult(action.id);
  } catch (e) {
    const error = `UnmountVolume.TearDown failed: ${(e as Error).message}`;
    ctx.log.log("warn", "Volume tear-down failed", { pod, error });
    return errorResult(action.id, error);
  }
}

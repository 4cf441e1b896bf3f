// The simulator's apiserver, for the pods' status: each status the core publishes is turned into
// the patch the host's status manager sends (the same conversion), applied as the apiserver merges
// a strategic merge patch, and checked as it validates a pod status update. A patch it would
// refuse is a broken rule (the host would have to recover from it); and once the run is calm, what
// it holds must say what the runtime runs: the status converges.
import type { PodStatus } from "../core/types.js";
import { apiPodStatus, statusPatch } from "../cluster/api-status.js";
import type { Invariants } from "./invariants.js";
import type { SimRuntime } from "./sim-runtime.js";

type Json = Record<string, any>;

/** Lists of a pod status merged by a key; every other list is replaced whole. */
const MERGE_KEYS: Record<string, string> = { conditions: "type", podIPs: "ip", hostIPs: "ip" };
const TERMINAL = new Set(["Succeeded", "Failed"]);
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The apiserver's strategic merge of `patch` into `target` (status fields: see MERGE_KEYS). */
export function strategicMerge(target: Json | undefined, patch: Json): Json {
  const out: Json = { ...(target ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (Array.isArray(value)) out[key] = mergeList(key, out[key], value);
    else if (isObject(value)) out[key] = strategicMerge(isObject(out[key]) ? out[key] : undefined, value);
    else out[key] = value;
  }
  return out;
}

function mergeList(key: string, current: unknown, patch: unknown[]): unknown[] {
  const items = patch.filter((v) => !(isObject(v) && "$patch" in v && v.$patch !== "delete"));
  const mergeKey = MERGE_KEYS[key];
  if (!mergeKey || patch.some((v) => isObject(v) && v.$patch === "replace") || !Array.isArray(current)) return items.filter((v) => !(isObject(v) && v.$patch === "delete"));
  const out = current.map((v) => (isObject(v) ? { ...v } : v)) as Json[];
  for (const item of items as Json[]) {
    const at = out.findIndex((v) => v[mergeKey] === item[mergeKey]);
    if (item.$patch === "delete") {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = strategicMerge(out[at], item);
    else out.push(strategicMerge(undefined, item));
  }
  return out;
}

/** The checks of ValidatePodStatusUpdate a node's patch can fail; undefined when it passes. */
export function statusRefusal(before: Json | undefined, after: Json): string | undefined {
  if (before && TERMINAL.has(before.phase) && after.phase !== before.phase) return `status.phase: Forbidden: cannot transition from terminal phase ${before.phase} to ${after.phase}`;
  for (const [single, many] of [["podIP", "podIPs"], ["hostIP", "hostIPs"]]) {
    const ips: Json[] = after[many] ?? [];
    if (ips.length > 0 && ips[0].ip !== after[single]) return `status.${many}[0].ip: must match status.${single}`;
    const families = ips.map((p) => (String(p.ip).includes(":") ? 6 : 4));
    if (new Set(families).size < families.length) return `status.${many}: Invalid value: ${JSON.stringify(ips)}: may specify no more than one IP for each IP family`;
  }
  return undefined;
}

export class SimApiserver {
  private readonly statuses = new Map<string, Json>();
  /** A sandbox's address on the pod network, given as the runtime makes sandboxes. */
  private readonly sandboxIps = new Map<string, string>();
  patches = 0;

  constructor(
    private runtime: SimRuntime,
    private invariants: Invariants,
  ) {}

  private ipOf(sandboxId: string): string | undefined {
    if (!this.runtime.sandboxes.has(sandboxId)) return this.sandboxIps.get(sandboxId);
    let ip = this.sandboxIps.get(sandboxId);
    if (!ip) this.sandboxIps.set(sandboxId, (ip = `10.88.${(this.sandboxIps.size >> 8) & 255}.${(this.sandboxIps.size & 255) + 1}`));
    return ip;
  }

  /** The core published `status` for pod `uid`: the host's patch, merged and checked. */
  publish(uid: string, status: PodStatus, hostNetwork: boolean, nowMs: number): void {
    const current = this.statuses.get(uid);
    const body = apiPodStatus(status, { nodeIp: "10.0.0.1", hostNetwork, runtimeName: "containerd", imageRefOf: () => undefined, podIpOf: (id) => this.ipOf(id), current });
    const patch = statusPatch(uid, body, current).status as Json;
    const merged = strategicMerge(current, JSON.parse(JSON.stringify(patch)));
    const refusal = statusRefusal(current, merged);
    if (refusal) {
      this.invariants.violate(nowMs, "apiserver-accepts-status", `pod ${uid}: the apiserver would refuse the node's status patch: ${refusal}`);
      return;
    }
    this.patches++;
    this.statuses.set(uid, merged);
  }

  forget(uid: string): void {
    this.statuses.delete(uid);
  }

  /**
   * Once calm: the status the apiserver holds for a running pod names, for each container that
   * runs in the pod's ready sandbox, that very instance as running, and the sandbox's address.
   */
  checkConverged(key: string, uid: string, hostNetwork: boolean, nowMs: number): void {
    const held = this.statuses.get(uid);
    const sandbox = [...this.runtime.sandboxes.values()].filter((s) => s.podUid === uid && s.state === "ready").sort((a, b) => b.createdAtMs - a.createdAtMs)[0];
    if (!held || !sandbox) return;
    const problems: string[] = [];
    for (const c of this.runtime.containers.values()) {
      if (c.podUid !== uid || c.sandboxId !== sandbox.id || c.state !== "running") continue;
      const all = [...(held.containerStatuses ?? []), ...(held.initContainerStatuses ?? []), ...(held.ephemeralContainerStatuses ?? [])];
      const shown = all.find((s: Json) => s.name === c.name);
      if (!shown?.state?.running || shown.containerID !== `containerd://${c.id}`) problems.push(`${c.name} runs as ${c.id.slice(0, 12)}, the apiserver shows ${shown?.containerID ?? "nothing"} ${Object.keys(shown?.state ?? {})[0] ?? ""}`);
    }
    const ip = hostNetwork ? "10.0.0.1" : this.ipOf(sandbox.id);
    if (held.podIP !== ip || (held.podIPs ?? []).length !== 1) problems.push(`podIP ${held.podIP} (${JSON.stringify(held.podIPs)}), the sandbox has ${ip}`);
    if (problems.length > 0) this.invariants.violate(nowMs, "status-converges", `pod ${key}: ${problems.join("; ")}`);
  }
}

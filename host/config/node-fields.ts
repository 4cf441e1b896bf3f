// The KubeletConfiguration fields of the node's own life: graceful shutdown and the resources
// kept for the system (and, with them, upstream's checks on them). Kept apart from
// kubelet-config.ts, which reads every field.
import { parseGoDuration } from "./go-duration.js";
import { cpusetSize, reservationProblems } from "../node/allocatable.js";
import type { KubeletConfiguration } from "./config-types.js";

/** One shutdownGracePeriodByPodPriority entry as the file writes it. */
export interface ShutdownGracePeriodByPodPriority {
  priority: number;
  shutdownGracePeriodSeconds: number;
}

const INT32 = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31;
const INT64 = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n);

/** Reads shutdownGracePeriodByPodPriority: a list of {priority, shutdownGracePeriodSeconds}; returns an error or the list. */
export function readPriorityPeriods(value: unknown): ShutdownGracePeriodByPodPriority[] | string {
  if (!Array.isArray(value)) return "expected a list of {priority, shutdownGracePeriodSeconds}";
  const out: ShutdownGracePeriodByPodPriority[] = [];
  for (const [i, entry] of value.entries()) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return `[${i}]: expected {priority, shutdownGracePeriodSeconds}`;
    for (const key of Object.keys(entry)) if (key !== "priority" && key !== "shutdownGracePeriodSeconds") return `[${i}]: unknown field "${key.slice(0, 64)}"`;
    const priority = (entry as Record<string, unknown>).priority ?? 0;
    const seconds = (entry as Record<string, unknown>).shutdownGracePeriodSeconds ?? 0;
    if (!INT32(priority)) return `[${i}].priority: expected a whole number from -2147483648 to 2147483647`;
    if (!INT64(seconds)) return `[${i}].shutdownGracePeriodSeconds: expected a whole number`;
    out.push({ priority: priority as number, shutdownGracePeriodSeconds: seconds as number });
  }
  return out;
}

/** A metav1.Duration as Go's %v prints it in upstream's messages: `{30s}`. */
function shown(duration: string): string {
  return `{${duration}}`;
}

/** Upstream's checks of the graceful shutdown settings. */
export function validateNodeShutdown(c: KubeletConfiguration, bad: (text: string) => void): void {
  const grace = nsOf(c.shutdownGracePeriod);
  const critical = nsOf(c.shutdownGracePeriodCriticalPods);
  if (critical > grace) bad(`shutdownGracePeriodCriticalPods ${shown(c.shutdownGracePeriodCriticalPods)} must be <= shutdownGracePeriod ${shown(c.shutdownGracePeriod)}`);
  if (grace < 0n || (grace > 0n && grace < 1_000_000_000n)) bad(`shutdownGracePeriod ${shown(c.shutdownGracePeriod)} must be either zero or otherwise >= 1 sec`);
  if (critical < 0n || (critical > 0n && critical < 1_000_000_000n)) bad(`shutdownGracePeriodCriticalPods ${shown(c.shutdownGracePeriodCriticalPods)} must be either zero or otherwise >= 1 sec`);
  const byPriority = (c.shutdownGracePeriodByPodPriority ?? []) as ShutdownGracePeriodByPodPriority[];
  if (byPriority.length > 0 && (grace > 0n || critical > 0n)) bad("Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time");
}

function nsOf(duration: string): bigint {
  const ns = parseGoDuration(String(duration));
  return typeof ns === "string" ? 0n : ns;
}

/** The core's graceful shutdown settings (whole seconds, as upstream truncates them). */
export function nodeShutdownSettings(c: KubeletConfiguration): { gracePeriodSeconds: number; criticalPodsSeconds: number; byPodPriority: { priority: number; gracePeriodSeconds: number }[] } {
  return {
    gracePeriodSeconds: Number(nsOf(c.shutdownGracePeriod) / 1_000_000_000n),
    criticalPodsSeconds: Number(nsOf(c.shutdownGracePeriodCriticalPods) / 1_000_000_000n),
    byPodPriority: ((c.shutdownGracePeriodByPodPriority ?? []) as ShutdownGracePeriodByPodPriority[]).map((g) => ({ priority: g.priority, gracePeriodSeconds: g.shutdownGracePeriodSeconds })),
  };
}

/** enforceNodeAllocatable's keys (upstream's). */
const ENFORCEMENT_KEYS = ["pods", "system-reserved", "kube-reserved", "none"];

/** Upstream's checks of the reservations and their enforcement. */
export function validateReservations(c: KubeletConfiguration, bad: (text: string) => void): void {
  const enforce = (c.enforceNodeAllocatable ?? []) as string[];
  for (const key of enforce) {
    if (key === "system-reserved" && !c.systemReservedCgroup) bad(`systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" contained in enforceNodeAllocatable (--enforce-node-allocatable)`);
    else if (key === "kube-reserved" && !c.kubeReservedCgroup) bad(`kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" contained in enforceNodeAllocatable (--enforce-node-allocatable)`);
    else if (key === "none" && enforce.length > 1) bad(`enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified`);
    else if (!ENFORCEMENT_KEYS.includes(key)) bad(`option ${JSON.stringify(key.slice(0, 64))} specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are "pods", "system-reserved", "kube-reserved", or "none"`);
  }
  if (c.reservedSystemCPUs) {
    if (c.systemReservedCgroup || c.kubeReservedCgroup) bad("can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)");
    const size = cpusetSize(c.reservedSystemCPUs);
    if (typeof size === "string") bad(`unable to parse reservedSystemCPUs (--reserved-cpus) ${c.reservedSystemCPUs}, error: ${size}`);
  }
  for (const text of reservationProblems("systemReserved", "--system-reserved", c.systemReserved ?? {})) bad(text);
  for (const text of reservationProblems("kubeReserved", "--kube-reserved", c.kubeReserved ?? {})) bad(text);
}

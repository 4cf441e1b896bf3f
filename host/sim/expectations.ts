// Checks one scenario expectation against what the core published (phase, restart counts,
// waiting reasons) and what the simulated runtime holds (containers running, anything left).
import type { PodStatus } from "../core/types.js";
import type { Expectation } from "./scenario.js";
import type { SimRuntime } from "./sim-runtime.js";

/** What is wrong, in words, or undefined when the expectation holds. */
export function evaluateExpectation(e: Expectation, uid: string | undefined, status: PodStatus | undefined, runtime: SimRuntime): string | undefined {
  if (!uid) return `pod ${e.pod} has no spec`;
  const problems: string[] = [];
  // WIT phase names are the Kubernetes ones in lower case.
  if (e.phase !== undefined && status?.phase !== e.phase.toLowerCase()) problems.push(`phase is ${status?.phase ?? "unpublished"}, want ${e.phase}`);
  const statusOf = (name: string) => status?.containerStatuses.find((c) => c.name === name);
  for (const [name, n] of Object.entries(e.restarts ?? {})) {
    const got = statusOf(name)?.restartCount;
    if (got !== n) problems.push(`restarts of ${name} are ${got ?? "unknown"}, want ${n}`);
  }
  for (const [name, n] of Object.entries(e.minRestarts ?? {})) {
    const got = statusOf(name)?.restartCount ?? 0;
    if (got < n) problems.push(`restarts of ${name} are ${got}, want at least ${n}`);
  }
  for (const [name, reason] of Object.entries(e.reason ?? {})) {
    const got = statusOf(name)?.reason ?? "";
    if (got !== reason) problems.push(`reason of ${name} is "${got}", want "${reason}"`);
  }
  for (const name of e.running ?? []) if (runtime.runningNamed(uid, name).length === 0) problems.push(`${name} is not running`);
  for (const name of e.notRunning ?? []) if (runtime.runningNamed(uid, name).length > 0) problems.push(`${name} is running`);
  for (const image of e.imagesPresent ?? []) if (!runtime.hasImage(image)) problems.push(`image ${image} is not in the runtime`);
  for (const image of e.imagesGone ?? []) if (runtime.hasImage(image)) problems.push(`image ${image} is still in the runtime`);
  if (e.podReason !== undefined && (status?.reason ?? "") !== e.podReason) problems.push(`pod reason is "${status?.reason ?? ""}", want "${e.podReason}"`);
  if (e.gone !== undefined) {
    const left = [...runtime.sandboxes.values()].filter((s) => s.podUid === uid).length + [...runtime.containers.values()].filter((c) => c.podUid === uid).length;
    if (e.gone && left > 0) problems.push(`${left} sandbox(es) and container(s) are left`);
    if (!e.gone && left === 0) problems.push("nothing of it is left");
  }
  return problems.length > 0 ? problems.join("; ") : undefined;
}

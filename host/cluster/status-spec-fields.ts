// The parts of a pod's status the kubelet takes from the pod's spec rather than from the runtime:
// each container's `volumeMounts` (what the spec mounts, read-only ones with their recursive mode)
// and the pod's `resources` (its containers' requests and limits added up, as the pod is sized).
import type { ContainerStatus } from "../core/types.js";
import { quantityValue } from "../env/container-env.js";
import { containerNamed } from "../pod-runtime/security-context.js";

type Json = Record<string, any>;

const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter((v) => v && typeof v === "object") : []);

/**
 * `containerStatuses[].volumeMounts`: the container's mounts by name and path; a read-only one says
 * `recursiveReadOnly: Disabled` (nanolet makes no mount recursively read-only).
 */
export function volumeMountStatuses(spec: Json | undefined, containerName: string): Json[] | undefined {
  const mounts = list(spec ? containerNamed(spec, containerName).volumeMounts : undefined);
  if (mounts.length === 0) return undefined;
  return mounts.map((m) => ({
    name: m.name,
    mountPath: m.mountPath,
    ...(m.readOnly === true ? { readOnly: true, recursiveReadOnly: "Disabled" } : {}),
  }));
}

/** Sum of quantities of one resource, written as Kubernetes writes the sum (`100m`, `48Mi`). */
export function sumQuantities(resource: string, values: string[]): string {
  if (values.length === 1) return values[0];
  const total = values.reduce((sum, v) => sum + (quantityValue(v) || 0), 0);
  if (resource === "cpu") {
    const milli = Math.round(total * 1000);
    return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
  }
  const bytes = Math.round(total);
  const binary = values.every((v) => /[KMGTPE]i$/.test(v.trim()));
  const units = binary ? ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] : ["E", "P", "T", "G", "M", "k"];
  const base = binary ? 1024 : 1000;
  for (let i = 0; i < units.length; i++) {
    const size = base ** (units.length - i);
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${units[i]}`;
  }
  return String(bytes);
}

/**
 * The pod's `status.resources`: the requests and limits of its containers that run for the pod's
 * life (regular ones and sidecars) added up, each as applied to its running instance when there
 * is one, else as its spec asks; `{}` when no container asks for any (undefined without a spec).
 */
export function podResourcesStatus(spec: Json | undefined, statuses: ContainerStatus[], initStatuses: ContainerStatus[]): Json | undefined {
  if (!spec) return undefined;
  const lasting = [...list(spec.containers), ...list(spec.initContainers).filter((c) => c.restartPolicy === "Always")];
  const applied = new Map([...statuses, ...initStatuses].filter((s) => s.containerId).map((s) => [s.name, s]));
  const sums: Record<"requests" | "limits", Map<string, string[]>> = { requests: new Map(), limits: new Map() };
  for (const c of lasting) {
    const running = applied.get(c.name);
    for (const kind of ["requests", "limits"] as const) {
      const quantities: Record<string, string> = running
        ? Object.fromEntries((kind === "requests" ? running.resourceRequests : running.resourceLimits).map((q) => [q.name, q.quantity]))
        : Object.fromEntries(Object.entries(c.resources?.[kind] ?? {}).map(([k, v]) => [k, String(v)]));
      for (const [name, quantity] of Object.entries(quantities)) sums[kind].set(name, [...(sums[kind].get(name) ?? []), quantity]);
    }
  }
  const out: Json = {};
  for (const kind of ["limits", "requests"] as const) {
    if (sums[kind].size === 0) continue;
    out[kind] = Object.fromEntries([...sums[kind]].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => [name, sumQuantities(name, values)]));
  }
  // A pod that asks for nothing says so with an empty object, as the kubelet's does.
  return out;
}

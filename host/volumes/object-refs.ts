// Which configMaps and secrets a pod uses (volumes, projections, env, envFrom, pull secrets), for
// the ConfigMap and Secret managers' reference counts. No I/O: the simulator's bundle uses it too.
import type { PodObject } from "../cluster/pod-reflector.js";

export type ObjectResource = "configmaps" | "secrets";

export interface ObjectRef {
  resource: ObjectResource;
  namespace: string;
  name: string;
}

/** upstream's word for each resource in errors: `configmap "x" not found`. */
export function singular(resource: ObjectResource): string {
  return resource === "configmaps" ? "configmap" : "secret";
}

export function keyOf(ref: ObjectRef): string {
  return `${ref.resource}/${ref.namespace}/${ref.name}`;
}

/** Every configMap and secret a pod object uses: volumes, projections, env, envFrom, pull secrets. */
export function objectRefsOf(pod: PodObject): ObjectRef[] {
  const namespace = String(pod?.metadata?.namespace ?? "default");
  const spec = pod?.spec ?? {};
  const out = new Map<string, ObjectRef>();
  const add = (resource: ObjectResource, name: unknown) => {
    if (typeof name !== "string" || name === "") return;
    const ref = { resource, namespace, name };
    out.set(keyOf(ref), ref);
  };
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    add("configmaps", v?.configMap?.name);
    add("secrets", v?.secret?.secretName);
    for (const s of Array.isArray(v?.projected?.sources) ? v.projected.sources : []) {
      add("configmaps", s?.configMap?.name);
      add("secrets", s?.secret?.name);
    }
  }
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    for (const e of Array.isArray(c?.env) ? c.env : []) {
      add("configmaps", e?.valueFrom?.configMapKeyRef?.name);
      add("secrets", e?.valueFrom?.secretKeyRef?.name);
    }
    for (const f of Array.isArray(c?.envFrom) ? c.envFrom : []) {
      add("configmaps", f?.configMapRef?.name);
      add("secrets", f?.secretRef?.name);
    }
  }
  for (const s of Array.isArray(spec.imagePullSecrets) ? spec.imagePullSecrets : []) add("secrets", s?.name);
  return [...out.values()];
}


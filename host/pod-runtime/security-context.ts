// A pod's and a container's security settings as the kubelet hands them to CRI
// (kuberuntime security_context.go, generatePodSandboxLinuxConfig): the container's own
// securityContext over the pod's, groups as fsGroup then supplementalGroups, the image's user when
// no runAsUser is given, no_new_privs only when allowPrivilegeEscalation is false, /proc masked
// unless procMount is Unmasked, seccomp Unconfined unless a profile is asked for. Plain translation
// of the pod's fields; the runAsNonRoot check is the one rule, and fails the create as upstream's
// CreateContainerConfigError does.
import path from "node:path";
import type { ContainerSecurity, ImageUser, PodNamespaces, SandboxSecurity, SecurityProfile } from "../cri/runtime.js";

type Json = Record<string, any>;

/** Paths the runtime hides from a container's /proc and /sys (the kubelet's defaults). */
export const DEFAULT_MASKED_PATHS = [
  "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
  "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
];
/** Paths the runtime makes read-only (the kubelet's defaults). */
export const DEFAULT_READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"];

const APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

/** A securityContext's runAsNonRoot rule broken: the container is not created. */
export class NonRootError extends Error {}

function object(value: unknown): Json {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
}

function idOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}

/** upstream format.Pod: `name_namespace(uid)`. */
function podLabel(metadata: Json): string {
  return `${metadata.name ?? ""}_${metadata.namespace ?? "default"}(${metadata.uid ?? ""})`;
}

/** fsGroup first, then supplementalGroups, as the kubelet lists them. */
function podGroups(podSc: Json): number[] {
  const groups: number[] = [];
  const fsGroup = idOf(podSc.fsGroup);
  if (fsGroup !== undefined) groups.push(fsGroup);
  for (const g of Array.isArray(podSc.supplementalGroups) ? podSc.supplementalGroups : []) if (idOf(g) !== undefined) groups.push(g);
  return groups;
}

/** A Pod API seccomp profile as CRI takes it; Localhost profiles live under `<root-dir>/seccomp`. */
function seccompOf(value: unknown, seccompRoot: string): SecurityProfile | undefined {
  const p = object(value);
  if (p.type === "RuntimeDefault") return { type: "RuntimeDefault" };
  if (p.type === "Unconfined") return { type: "Unconfined" };
  if (p.type === "Localhost") return { type: "Localhost", localhostRef: path.join(seccompRoot, String(p.localhostProfile ?? "")) };
  return undefined;
}

/** The container's seccomp profile, else the pod's, else Unconfined (the kubelet's seccompDefault is false). */
function containerSeccomp(podSc: Json, sc: Json, seccompRoot: string): SecurityProfile {
  return seccompOf(sc.seccompProfile, seccompRoot) ?? seccompOf(podSc.seccompProfile, seccompRoot) ?? { type: "Unconfined" };
}

function appArmorOf(value: unknown): SecurityProfile | undefined {
  const p = object(value);
  if (p.type === "RuntimeDefault") return { type: "RuntimeDefault" };
  if (p.type === "Unconfined") return { type: "Unconfined" };
  if (p.type === "Localhost") return { type: "Localhost", localhostRef: String(p.localhostProfile ?? "") };
  return undefined;
}

/** The container's AppArmor profile, else the pod's, else the deprecated annotation; none: the runtime's default. */
function containerAppArmor(metadata: Json, podSc: Json, sc: Json, containerName: string): SecurityProfile | undefined {
  const fromFields = appArmorOf(sc.appArmorProfile) ?? appArmorOf(podSc.appArmorProfile);
  if (fromFields) return fromFields;
  const annotation = object(metadata.annotations)[APPARMOR_ANNOTATION_PREFIX + containerName];
  if (annotation === "runtime/default") return { type: "RuntimeDefault" };
  if (annotation === "unconfined") return { type: "Unconfined" };
  if (typeof annotation === "string" && annotation.startsWith("localhost/")) return { type: "Localhost", localhostRef: annotation.slice("localhost/".length) };
  return undefined;
}

/** Every container of the pod's spec, regular and init. */
export function allContainers(spec: Json): Json[] {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  return [...list(spec.containers), ...list(spec.initContainers), ...list(spec.ephemeralContainers)].map(object);
}

/** The spec's container `name` (regular, init or ephemeral), or `{}`. */
export function containerNamed(spec: Json, name: string): Json {
  return allContainers(spec).find((c) => c.name === name) ?? {};
}

/** hostPID, hostIPC and shareProcessNamespace. */
export function podNamespaces(spec: Json): PodNamespaces {
  return { hostPid: spec.hostPID === true, hostIpc: spec.hostIPC === true, sharedPid: object(spec.securityContext).shareProcessNamespace === true || spec.shareProcessNamespace === true };
}

/** The sandbox's security settings: the pod's user, groups, seccomp, sysctls; privileged if any container is. */
export function sandboxSecurity(pod: Json, seccompRoot: string): SandboxSecurity {
  const spec = object(pod.spec);
  const podSc = object(spec.securityContext);
  const sysctls: Record<string, string> = {};
  for (const s of Array.isArray(podSc.sysctls) ? podSc.sysctls : []) {
    const entry = object(s);
    if (typeof entry.name === "string") sysctls[entry.name] = String(entry.value ?? "");
  }
  return {
    runAsUser: idOf(podSc.runAsUser),
    runAsGroup: idOf(podSc.runAsGroup),
    supplementalGroups: podGroups(podSc),
    privileged: allContainers(spec).some((c) => object(c.securityContext).privileged === true),
    seccomp: seccompOf(podSc.seccompProfile, seccompRoot) ?? { type: "Unconfined" },
    sysctls,
  };
}

/**
 * A container's security settings; `imageUser` is who its image runs as. Throws NonRootError
 * when runAsNonRoot cannot hold (upstream verifyRunAsNonRoot, with its words).
 */
export function containerSecurity(pod: Json, containerName: string, imageUser: ImageUser, seccompRoot: string): ContainerSecurity {
  const metadata = object(pod.metadata);
  const spec = object(pod.spec);
  const podSc = object(spec.securityContext);
  const container = containerNamed(spec, containerName);
  const sc = object(container.securityContext);
  const caps = object(sc.capabilities);
  const runAsUser = idOf(sc.runAsUser) ?? idOf(podSc.runAsUser);
  const runAsGroup = idOf(sc.runAsGroup) ?? idOf(podSc.runAsGroup);
  const runAsNonRoot = typeof sc.runAsNonRoot === "boolean" ? sc.runAsNonRoot : podSc.runAsNonRoot === true;
  if (runAsNonRoot) verifyNonRoot(podLabel(metadata), containerName, runAsUser, imageUser);
  const unmasked = sc.procMount === "Unmasked";
  const security: ContainerSecurity = {
    capabilities: { add: stringsOf(caps.add), drop: stringsOf(caps.drop) },
    privileged: sc.privileged === true,
    runAsGroup,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    supplementalGroups: podGroups(podSc),
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    maskedPaths: unmasked ? [] : DEFAULT_MASKED_PATHS,
    readonlyPaths: unmasked ? [] : DEFAULT_READONLY_PATHS,
    seccomp: containerSeccomp(podSc, sc, seccompRoot),
    apparmor: containerAppArmor(metadata, podSc, sc, containerName),
  };
  // No runAsUser: the image's user, by number when the image says one, else by name; an image
  // that says nothing runs as root (uid 0), as upstream's getImageUser has it.
  if (runAsUser !== undefined) security.runAsUser = runAsUser;
  else if (imageUser.uid !== undefined) security.runAsUser = imageUser.uid;
  else if (imageUser.username) security.runAsUsername = imageUser.username;
  else security.runAsUser = 0;
  return security;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function verifyNonRoot(pod: string, container: string, runAsUser: number | undefined, image: ImageUser): void {
  if (runAsUser !== undefined) {
    if (runAsUser === 0) throw new NonRootError(`container's runAsUser breaks non-root policy (pod: "${pod}", container: ${container})`);
    return;
  }
  if (image.uid === undefined && image.username) {
    throw new NonRootError(`container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root (pod: "${pod}", container: ${container})`);
  }
  // An image that says nothing runs as root.
  if ((image.uid ?? 0) === 0) throw new NonRootError(`container has runAsNonRoot and image will run as root (pod: "${pod}", container: ${container})`);
}

// The security fields of a Pod, checked with the apiserver's rules and words (ValidateSecurityContext,
// ValidatePodSecurityContext, validateSysctls, the seccomp and AppArmor profile fields) so that a
// static pod is refused as a created one is. What the fields do is the runtime's: the host passes
// them to CRI as the kubelet does (host/pod-runtime/security-context.ts).
import { FieldReader, isObject, type JsonObject } from "./field-reader.js";

const PROFILE_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"];
const PROC_MOUNT_TYPES = ["Default", "Unmasked"];
const SUPPLEMENTAL_GROUPS_POLICIES = ["Merge", "Strict"];
const FS_GROUP_CHANGE_POLICIES = ["OnRootMismatch", "Always"];
const MAX_ID = 2147483647;

/**
 * Linux capabilities by name (capability.h), with or without the `CAP_` prefix as the runtime takes
 * them. The apiserver accepts any string; a name outside this list fails at container creation
 * with the runtime's words, so nanolet refuses it up front instead.
 */
const CAPABILITIES = new Set([
  "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
  "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
  "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
  "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
  "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
  "CHECKPOINT_RESTORE", "ALL",
]);

const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const SYSCTL_MAX_LENGTH = 253;

function supported(value: string, values: string[]): string {
  return `Unsupported value: "${value}": supported values: ${values.map((v) => `"${v}"`).join(", ")}`;
}

function checkId(r: FieldReader, value: unknown, field: string): void {
  const id = r.integer(value, field, -(2 ** 63), 2 ** 63);
  if (id !== undefined && (id < 0 || id > MAX_ID)) r.add(field, `Invalid value: ${id}: must be between 0 and ${MAX_ID}, inclusive`);
}

/** A relative path that stays below its root (validateLocalDescendingPath). */
function checkDescendingPath(r: FieldReader, value: string, field: string): void {
  if (value.startsWith("/")) r.add(field, `Invalid value: "${value}": must be a relative path`);
  if (value.split("/").includes("..")) r.add(field, `Invalid value: "${value}": must not contain '..'`);
}

/** `seccompProfile` or `appArmorProfile`: a type, and a localhost profile exactly when the type is Localhost. */
function checkProfile(r: FieldReader, value: unknown, field: string, what: "seccomp" | "AppArmor"): void {
  const profile = r.object(value, field);
  if (!profile) return;
  r.onlyFields(profile, field, new Set(["type", "localhostProfile"]));
  const type = r.string(profile.type, `${field}.type`, true);
  if (type !== undefined && !PROFILE_TYPES.includes(type)) r.add(`${field}.type`, supported(type, PROFILE_TYPES));
  const localhost = r.string(profile.localhostProfile, `${field}.localhostProfile`);
  if (type === "Localhost") {
    if (!localhost) r.add(`${field}.localhostProfile`, `Required value: must be set when ${what} type is Localhost`);
    else if (what === "seccomp") checkDescendingPath(r, localhost, `${field}.localhostProfile`);
  } else if (localhost !== undefined) {
    r.add(`${field}.localhostProfile`, `Invalid value: "${localhost}": can only be set when ${what} type is Localhost`);
  }
}

/** `capabilities.add` / `.drop`: names of Linux capabilities. */
function checkCapabilities(r: FieldReader, value: unknown, field: string): string[] {
  const caps = r.object(value, field);
  if (!caps) return [];
  r.onlyFields(caps, field, new Set(["add", "drop"]));
  const added: string[] = [];
  for (const list of ["add", "drop"] as const) {
    r.stringList(caps[list], `${field}.${list}`).forEach((name, i) => {
      if (!CAPABILITIES.has(name.toUpperCase().replace(/^CAP_/, ""))) r.add(`${field}.${list}[${i}]`, `Invalid value: "${name}": not a Linux capability`);
      if (list === "add") added.push(name);
    });
  }
  return added;
}

/** A container's `securityContext` (ValidateSecurityContext). */
export function checkContainerSecurityContext(r: FieldReader, value: unknown, field: string): void {
  const sc = r.object(value, field);
  if (!sc) return;
  r.onlyFields(
    sc, field,
    new Set(["capabilities", "privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount", "seccompProfile", "appArmorProfile", "seLinuxOptions", "windowsOptions"]),
  );
  const added = checkCapabilities(r, sc.capabilities, `${field}.capabilities`);
  const privileged = r.boolean(sc.privileged, `${field}.privileged`);
  checkId(r, sc.runAsUser, `${field}.runAsUser`);
  checkId(r, sc.runAsGroup, `${field}.runAsGroup`);
  r.boolean(sc.runAsNonRoot, `${field}.runAsNonRoot`);
  r.boolean(sc.readOnlyRootFilesystem, `${field}.readOnlyRootFilesystem`);
  const escalation = r.boolean(sc.allowPrivilegeEscalation, `${field}.allowPrivilegeEscalation`);
  if (escalation === false && privileged === true) r.add(field, "Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true");
  if (escalation === false && added.includes("CAP_SYS_ADMIN")) r.add(field, "Invalid value: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN");
  const procMount = r.string(sc.procMount, `${field}.procMount`);
  if (procMount !== undefined && procMount !== "" && !PROC_MOUNT_TYPES.includes(procMount)) r.add(`${field}.procMount`, supported(procMount, PROC_MOUNT_TYPES));
  checkProfile(r, sc.seccompProfile, `${field}.seccompProfile`, "seccomp");
  checkProfile(r, sc.appArmorProfile, `${field}.appArmorProfile`, "AppArmor");
  r.object(sc.seLinuxOptions, `${field}.seLinuxOptions`);
}

/** `spec.securityContext` and the namespace fields beside it (ValidatePodSecurityContext, validateSysctls). */
export function checkPodSecurityContext(r: FieldReader, spec: JsonObject): void {
  const field = "spec.securityContext";
  const hostNetwork = spec.hostNetwork === true;
  const hostIpc = r.boolean(spec.hostIPC, "spec.hostIPC") === true;
  const hostPid = r.boolean(spec.hostPID, "spec.hostPID") === true;
  const share = r.boolean(spec.shareProcessNamespace, "spec.shareProcessNamespace");
  if (hostPid && share) r.add("spec.securityContext.shareProcessNamespace", "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled");
  const sc = r.object(spec.securityContext, field);
  if (!sc) return;
  r.onlyFields(
    sc, field,
    new Set([
      "runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups", "supplementalGroupsPolicy", "fsGroup", "fsGroupChangePolicy",
      "sysctls", "seccompProfile", "appArmorProfile", "seLinuxOptions", "seLinuxChangePolicy", "windowsOptions",
    ]),
  );
  checkId(r, sc.runAsUser, `${field}.runAsUser`);
  checkId(r, sc.runAsGroup, `${field}.runAsGroup`);
  checkId(r, sc.fsGroup, `${field}.fsGroup`);
  r.boolean(sc.runAsNonRoot, `${field}.runAsNonRoot`);
  r.array(sc.supplementalGroups, `${field}.supplementalGroups`).forEach((g, i) => checkId(r, g, `${field}.supplementalGroups[${i}]`));
  const groupsPolicy = r.string(sc.supplementalGroupsPolicy, `${field}.supplementalGroupsPolicy`);
  if (groupsPolicy !== undefined && !SUPPLEMENTAL_GROUPS_POLICIES.includes(groupsPolicy)) r.add(`${field}.supplementalGroupsPolicy`, supported(groupsPolicy, SUPPLEMENTAL_GROUPS_POLICIES));
  const fsPolicy = r.string(sc.fsGroupChangePolicy, `${field}.fsGroupChangePolicy`);
  if (fsPolicy !== undefined && !FS_GROUP_CHANGE_POLICIES.includes(fsPolicy)) r.add(`${field}.fsGroupChangePolicy`, supported(fsPolicy, FS_GROUP_CHANGE_POLICIES));
  checkProfile(r, sc.seccompProfile, `${field}.seccompProfile`, "seccomp");
  checkProfile(r, sc.appArmorProfile, `${field}.appArmorProfile`, "AppArmor");
  checkSysctls(r, sc.sysctls, `${field}.sysctls`, hostNetwork, hostIpc);
}

/** Whether a sysctl lives in the network namespace (the kubelet's namespace groups). */
export function isNetSysctl(name: string): boolean {
  return name.replace(/\//g, ".").startsWith("net.");
}

/** Whether a sysctl lives in the IPC namespace. */
export function isIpcSysctl(name: string): boolean {
  const n = name.replace(/\//g, ".");
  return n === "kernel.sem" || n.startsWith("kernel.shm") || n.startsWith("kernel.msg") || n.startsWith("fs.mqueue.");
}

function checkSysctls(r: FieldReader, value: unknown, field: string, hostNetwork: boolean, hostIpc: boolean): void {
  const names = new Set<string>();
  r.array(value, field).forEach((item, i) => {
    const path = `${field}[${i}]`;
    const s = isObject(item) ? item : undefined;
    if (!s) {
      r.object(item, path, true);
      return;
    }
    r.onlyFields(s, path, new Set(["name", "value"]));
    const name = r.string(s.name, `${path}.name`) ?? "";
    r.string(s.value, `${path}.value`);
    if (name === "") r.add(`${path}.name`, "Required value");
    else if (name.length > SYSCTL_MAX_LENGTH || !SYSCTL_NAME.test(name)) {
      r.add(`${path}.name`, `Invalid value: "${name}": must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME.source}`);
    }
    if (names.has(name)) r.add(`${path}.name`, `Duplicate value: "${name}"`);
    names.add(name);
    if (hostNetwork && isNetSysctl(name)) r.add(`${path}.name`, `Invalid value: "${name}": may not be specified when 'hostNetwork' is true`);
    if (hostIpc && isIpcSysctl(name)) r.add(`${path}.name`, `Invalid value: "${name}": may not be specified when 'hostIPC' is true`);
  });
}

// `nanolet run --config FILE`: a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) as the
// kubelet reads it. The settings in effect are upstream's defaults, then the file, then the flags
// given on the command line (flags win, as the kubelet's do). The file's fields nanolet does not
// know are warned about; a field written twice is refused. The result is what /configz serves.
import path from "node:path";
import { parseDocument } from "yaml";
import { durationMs, parseGoDuration } from "./go-duration.js";
import { FILE_LIMITS, FileReadError, readBoundedText } from "../files/bounded-file.js";
import { printable } from "../common/log.js";
import { validateNodeShutdown, validateReservations } from "./node-fields.js";
import { validateHardware } from "./hardware-fields.js";
import { ConfigError, type FieldSpec, type KubeletConfiguration } from "./config-types.js";

export { ConfigError, type KubeletConfiguration } from "./config-types.js";
import { fromFile, fromFlag, isZero, shown } from "./field-values.js";

export const CONFIG_API_VERSION = "kubelet.config.k8s.io/v1beta1";
export const CONFIG_KIND = "KubeletConfiguration";


/** imagePullCredentialsVerificationPolicy's values (upstream's names). */
export const VERIFICATION_POLICIES = ["NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages", "AlwaysVerify"] as const;
export type VerificationPolicy = (typeof VERIFICATION_POLICIES)[number];

/** Upstream's default hard eviction thresholds (v1.36 on Linux, read from its /configz). */
export const DEFAULT_EVICTION_HARD_MAP: Record<string, string> = {
  "imagefs.available": "15%",
  "imagefs.inodesFree": "5%",
  "memory.available": "100Mi",
  "nodefs.available": "10%",
  "nodefs.inodesFree": "5%",
};

/** Every KubeletConfiguration field nanolet acts on. */
export const FIELDS: FieldSpec[] = [
  { path: "enableServer", kind: "bool", default: true },
  // Upstream has no default (no static pods); nanolet's first job is static pods, so it reads the
  // directory kubeadm writes them to.
  { path: "staticPodPath", kind: "string", default: "/etc/kubernetes/manifests", flag: "pod-manifest-path" },
  { path: "podLogsDir", kind: "string", default: "/var/log/pods", zeroIsUnset: true, flag: "pod-logs-dir" },
  { path: "address", kind: "string", default: "0.0.0.0", zeroIsUnset: true, flag: "address" },
  { path: "port", kind: "int", default: 10250, zeroIsUnset: true, flag: "port" },
  { path: "readOnlyPort", kind: "int", default: 0, flag: "read-only-port" },
  { path: "tlsCertFile", kind: "string", flag: "tls-cert-file" },
  { path: "tlsPrivateKeyFile", kind: "string", flag: "tls-private-key-file" },
  { path: "rotateCertificates", kind: "bool", default: false, flag: "rotate-certificates" },
  { path: "serverTLSBootstrap", kind: "bool", default: false },
  { path: "authentication.x509.clientCAFile", kind: "string", flag: "client-ca-file" },
  { path: "authentication.webhook.enabled", kind: "bool", default: true, flag: "authentication-token-webhook", flagDefault: false },
  { path: "authentication.anonymous.enabled", kind: "bool", default: false, flag: "anonymous-auth" },
  // Without --config: Webhook with a kubeconfig, AlwaysAllow without (decided in resolve()).
  { path: "authorization.mode", kind: "string", default: "Webhook", zeroIsUnset: true, flag: "authorization-mode" },
  { path: "healthzPort", kind: "int", default: 10248, flag: "healthz-port" },
  { path: "healthzBindAddress", kind: "string", default: "127.0.0.1", zeroIsUnset: true, flag: "healthz-bind-address" },
  { path: "nodeStatusUpdateFrequency", kind: "duration", default: "10s", zeroIsUnset: true },
  { path: "nodeStatusReportFrequency", kind: "duration", default: "5m0s", zeroIsUnset: true },
  { path: "nodeLeaseDurationSeconds", kind: "int", default: 40, zeroIsUnset: true },
  { path: "clusterDomain", kind: "string", default: "", flag: "cluster-domain" },
  { path: "clusterDNS", kind: "list", default: [], flag: "cluster-dns", flagSyntax: "comma-list" },
  { path: "maxPods", kind: "int", default: 110, zeroIsUnset: true, flag: "max-pods" },
  { path: "resolvConf", kind: "string", default: "/etc/resolv.conf", flag: "resolv-conf" },
  { path: "evictionHard", kind: "map", default: DEFAULT_EVICTION_HARD_MAP, flag: "eviction-hard", flagSyntax: "less-than-map" },
  { path: "evictionSoft", kind: "map", default: {}, flag: "eviction-soft", flagSyntax: "less-than-map" },
  { path: "evictionSoftGracePeriod", kind: "map", default: {}, flag: "eviction-soft-grace-period", flagSyntax: "equals-map" },
  { path: "evictionPressureTransitionPeriod", kind: "duration", default: "5m0s", zeroIsUnset: true, flag: "eviction-pressure-transition-period" },
  { path: "evictionMaxPodGracePeriod", kind: "int", default: 0, flag: "eviction-max-pod-grace-period" },
  { path: "evictionMinimumReclaim", kind: "map", default: {}, flag: "eviction-minimum-reclaim", flagSyntax: "equals-map" },
  { path: "mergeDefaultEvictionSettings", kind: "bool", default: false },
  { path: "containerLogMaxSize", kind: "quantity", default: "10Mi", zeroIsUnset: true, flag: "container-log-max-size" },
  { path: "containerLogMaxFiles", kind: "int", default: 5, flag: "container-log-max-files" },
  { path: "containerLogMonitorInterval", kind: "duration", default: "10s", flag: "container-log-monitor-interval" },
  { path: "configMapAndSecretChangeDetectionStrategy", kind: "string", default: "Watch", zeroIsUnset: true, flag: "config-map-and-secret-change-detection-strategy" },
  { path: "allowedUnsafeSysctls", kind: "list", default: [], flag: "allowed-unsafe-sysctls", flagSyntax: "comma-list" },
  { path: "crashLoopBackOff.maxContainerRestartPeriod", kind: "duration", default: "5m0s" },
  { path: "serializeImagePulls", kind: "bool", default: true, flag: "serialize-image-pulls" },
  // Upstream has no default: unlimited when pulls are not serialized.
  { path: "maxParallelImagePulls", kind: "int" },
  { path: "imagePullCredentialsVerificationPolicy", kind: "string", default: "NeverVerifyPreloadedImages", zeroIsUnset: true },
  { path: "preloadedImagesVerificationAllowlist", kind: "list" },
  { path: "imageMinimumGCAge", kind: "duration", default: "2m0s", zeroIsUnset: true, flag: "minimum-image-ttl-duration" },
  { path: "imageMaximumGCAge", kind: "duration", default: "0s" },
  { path: "imageGCHighThresholdPercent", kind: "int", default: 85, zeroIsUnset: true, flag: "image-gc-high-threshold" },
  { path: "imageGCLowThresholdPercent", kind: "int", default: 80, zeroIsUnset: true, flag: "image-gc-low-threshold" },
  { path: "providerID", kind: "string", flag: "provider-id" },
  { path: "staticPodURL", kind: "string", flag: "manifest-url" },
  { path: "staticPodURLHeader", kind: "header-map", flag: "manifest-url-header", flagSyntax: "colon-multimap" },
  { path: "httpCheckFrequency", kind: "duration", default: "20s", zeroIsUnset: true, flag: "http-check-frequency" },
  { path: "systemReserved", kind: "map", flag: "system-reserved", flagSyntax: "equals-map" },
  { path: "kubeReserved", kind: "map", flag: "kube-reserved", flagSyntax: "equals-map" },
  { path: "reservedSystemCPUs", kind: "string", flag: "reserved-cpus" },
  { path: "enforceNodeAllocatable", kind: "list", default: ["pods"], flag: "enforce-node-allocatable", flagSyntax: "comma-list" },
  { path: "systemReservedCgroup", kind: "string", flag: "system-reserved-cgroup" },
  { path: "kubeReservedCgroup", kind: "string", flag: "kube-reserved-cgroup" },
  { path: "cpuManagerPolicy", kind: "string", default: "none", zeroIsUnset: true, flag: "cpu-manager-policy" },
  { path: "cpuManagerPolicyOptions", kind: "map", flag: "cpu-manager-policy-options", flagSyntax: "equals-map" },
  { path: "cpuManagerReconcilePeriod", kind: "duration", default: "10s", zeroIsUnset: true, flag: "cpu-manager-reconcile-period" },
  { path: "memoryManagerPolicy", kind: "string", default: "None", zeroIsUnset: true, flag: "memory-manager-policy" },
  { path: "reservedMemory", kind: "reserved-memory", flag: "reserved-memory", flagSyntax: "reserved-memory" },
  { path: "topologyManagerPolicy", kind: "string", default: "none", zeroIsUnset: true, flag: "topology-manager-policy" },
  { path: "topologyManagerScope", kind: "string", default: "container", zeroIsUnset: true, flag: "topology-manager-scope" },
  { path: "shutdownGracePeriod", kind: "duration", default: "0s" },
  { path: "shutdownGracePeriodCriticalPods", kind: "duration", default: "0s" },
  { path: "shutdownGracePeriodByPodPriority", kind: "priority-periods" },
  { path: "containerRuntimeEndpoint", kind: "string", default: "unix:///run/containerd/containerd.sock", zeroIsUnset: true, flag: "container-runtime-endpoint" },
];

/**
 * Fields of upstream's KubeletConfiguration that nanolet does not act on: read without complaint
 * beyond one warning each, so a file written for the kubelet still loads.
 */
const UPSTREAM_ONLY_FIELDS = new Set([
  "syncFrequency", "fileCheckFrequency", "tlsCipherSuites",
  "tlsMinVersion", "registryPullQPS", "registryBurst",
  "eventRecordQPS", "eventBurst", "enableDebuggingHandlers",
  "enableContentionProfiling", "oomScoreAdj", "streamingConnectionIdleTimeout",
  "volumeStatsAggPeriod",
  "kubeletCgroups", "systemCgroups", "cgroupRoot", "cgroupsPerQOS", "cgroupDriver",
  "singleProcessOOMKill", "topologyManagerPolicyOptions", "qosReserved",
  "runtimeRequestTimeout", "hairpinMode", "podsPerCore", "podCIDR", "podPidsLimit", "cpuCFSQuota",
  "cpuCFSQuotaPeriod", "nodeStatusMaxImages", "maxOpenFiles", "contentType", "kubeAPIQPS", "kubeAPIBurst",
  "enableControllerAttachDetach", "protectKernelDefaults",
  "makeIPTablesUtilChains", "iptablesMasqueradeBit", "iptablesDropBit", "featureGates", "failSwapOn",
  "memorySwap", "containerLogMaxWorkers",
  "showHiddenMetricsForVersion",
  "volumePluginDir", "kernelMemcgNotification", "logging", "enableSystemLogHandler", "enableSystemLogQuery",
  "enableProfilingHandler", "enableDebugFlagsHandler", "seccompDefault", "memoryThrottlingFactor",
  "memoryReservationPolicy", "registerWithTaints", "registerNode", "tracing", "localStorageCapacityIsolation",
  "imageServiceEndpoint", "failCgroupV1", "userNamespaces", "podHousekeepingPeriod",
  "authentication.webhook.cacheTTL", "authorization.webhook", "authorization.webhook.cacheAuthorizedTTL",
  "authorization.webhook.cacheUnauthorizedTTL",
]);


export interface ResolvedConfig {
  config: KubeletConfiguration;
  /** Things a user should see in the log: unknown or ignored fields of the file. */
  warnings: string[];
}


export function getPath(object: Record<string, any>, dotted: string): unknown {
  let at: any = object;
  for (const key of dotted.split(".")) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function setPath(object: Record<string, any>, dotted: string, value: unknown): void {
  const keys = dotted.split(".");
  let at = object;
  for (const key of keys.slice(0, -1)) {
    if (at[key] === null || typeof at[key] !== "object") at[key] = {};
    at = at[key];
  }
  at[keys[keys.length - 1]] = value;
}

/** Reads and checks a configuration file: YAML or JSON, apiVersion and kind, no field twice. */
export function readConfigFile(file: string): { fields: Record<string, any>; warnings: string[] } {
  let text: string;
  try {
    text = readBoundedText(file, FILE_LIMITS.configBytes);
  } catch (error) {
    throw new ConfigError(`--config: cannot read ${file}: ${(error as FileReadError).reason ?? (error as Error).message}`);
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const duplicate = /Map keys must be unique/.test(first.message);
    const where = first.linePos ? ` (line ${first.linePos[0].line})` : "";
    const key = duplicate ? duplicateKeyAt(text, first.pos[0]) : undefined;
    throw new ConfigError(
      duplicate
        ? `--config ${file}: field "${key ?? "?"}" is given twice${where}; refusing to guess which one is meant`
        : `--config ${file}: not valid YAML${where}: ${first.message.split("\n")[0]}`,
    );
  }
  const fields = doc.toJS();
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) throw new ConfigError(`--config ${file}: expected a KubeletConfiguration object`);
  if (fields.kind !== CONFIG_KIND) throw new ConfigError(`--config ${file}: kind is "${fields.kind ?? ""}", expected "${CONFIG_KIND}"`);
  if (fields.apiVersion !== CONFIG_API_VERSION) throw new ConfigError(`--config ${file}: apiVersion is "${fields.apiVersion ?? ""}", expected "${CONFIG_API_VERSION}"`);
  const warnings: string[] = [];
  walkUnknown(fields, "", warnings);
  return { fields, warnings };
}

/** The key at a duplicate-key error's offset (the yaml library reports where, not what). */
function duplicateKeyAt(text: string, offset: number): string | undefined {
  const m = /^\s*["']?([^"':\s]+)/.exec(text.slice(offset));
  return m?.[1];
}

const KNOWN_PATHS = new Set(FIELDS.map((f) => f.path));
const KNOWN_PARENTS = new Set(FIELDS.flatMap((f) => f.path.split(".").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("."))));

function walkUnknown(object: Record<string, any>, prefix: string, warnings: string[]): void {
  for (const [key, value] of Object.entries(object)) {
    const dotted = prefix + key;
    if (prefix === "" && (key === "apiVersion" || key === "kind")) continue;
    if (KNOWN_PATHS.has(dotted)) continue;
    if (UPSTREAM_ONLY_FIELDS.has(dotted)) {
      warnings.push(`field "${dotted}" is not implemented by nanolet and is ignored`);
    } else if (KNOWN_PARENTS.has(dotted) && value !== null && typeof value === "object" && !Array.isArray(value)) {
      walkUnknown(value, dotted + ".", warnings);
    } else if (KNOWN_PARENTS.has(dotted)) {
      // A known section of the wrong shape is a mistake in a field nanolet reads, not an unknown one.
      throw new ConfigError(`invalid configuration: ${dotted}: expected an object, got ${shown(value)}`);
    } else {
      warnings.push(`unknown field "${printable(dotted, 128)}"`);
    }
  }
}

export interface ResolveOptions {
  /** --config, if given. */
  file?: string;
  /** Flags given on the command line, by flag name (absent: not given). */
  flags: Record<string, string | boolean | undefined>;
  /** --kubeconfig was given (the flag-only default of authorization.mode depends on it). */
  hasKubeconfig: boolean;
}

/** Upstream's defaults, then the file, then the flags given; checked as the kubelet checks it. */
export function resolveConfig(options: ResolveOptions): ResolvedConfig {
  const config: KubeletConfiguration = { kind: CONFIG_KIND, apiVersion: CONFIG_API_VERSION };
  const warnings: string[] = [];
  const file = options.file !== undefined ? readConfigFile(path.resolve(options.file)) : undefined;
  if (file) warnings.push(...file.warnings);
  for (const spec of FIELDS) {
    let value = file || spec.flagDefault === undefined ? structuredClone(spec.default) : spec.flagDefault;
    if (!file && spec.path === "authorization.mode") value = options.hasKubeconfig ? "Webhook" : "AlwaysAllow";
    const fromTheFile = file ? getPath(file.fields, spec.path) : undefined;
    if (fromTheFile !== undefined && fromTheFile !== null) {
      const read = fromFile(spec, fromTheFile);
      if (!(spec.zeroIsUnset && isZero(spec, read))) value = read;
    }
    const flag = spec.flag !== undefined ? options.flags[spec.flag] : undefined;
    if (flag !== undefined) value = fromFlag(spec, flag);
    if (value !== undefined) setPath(config, spec.path, value);
  }
  // mergeDefaultEvictionSettings: thresholds the file or flags leave out keep upstream's defaults.
  if (config.mergeDefaultEvictionSettings === true) {
    config.evictionHard = { ...DEFAULT_EVICTION_HARD_MAP, ...config.evictionHard };
  }
  // A file that sets nodeStatusUpdateFrequency alone reports that often (upstream's backward compatibility).
  if (file && getPath(file.fields, "nodeStatusReportFrequency") === undefined && getPath(file.fields, "nodeStatusUpdateFrequency") !== undefined) {
    config.nodeStatusReportFrequency = config.nodeStatusUpdateFrequency;
  }
  const errors = validateConfig(config);
  if (errors.length > 0) throw new ConfigError(errors.join("; "));
  return { config, warnings };
}

/** The configuration's errors in upstream's terms: the field, its flag, the value, the rule. */
export function validateConfig(c: KubeletConfiguration): string[] {
  const errors: string[] = [];
  const bad = (text: string) => errors.push(`invalid configuration: ${text}`);
  const portOk = (n: number) => Number.isInteger(n) && n >= 0 && n <= 65535;
  // nanolet reads port 0 (from a flag) as "no kubelet API"; the file's 0 is the default 10250.
  if (!portOk(c.port)) bad(`port (--port) ${c.port} must be between 1 and 65535, inclusive`);
  if (!portOk(c.readOnlyPort)) bad(`readOnlyPort (--read-only-port) ${c.readOnlyPort} must be between 0 and 65535, inclusive`);
  if (!portOk(c.healthzPort)) bad(`healthzPort (--healthz-port) ${c.healthzPort} must be between 1 and 65535, inclusive`);
  if (c.maxPods < 0) bad(`maxPods (--max-pods) ${c.maxPods} must not be a negative number`);
  if (c.nodeLeaseDurationSeconds <= 0) bad("nodeLeaseDurationSeconds must be greater than 0");
  if (c.evictionMaxPodGracePeriod < 0) bad(`evictionMaxPodGracePeriod (--eviction-max-pod-grace-period) ${c.evictionMaxPodGracePeriod} must not be a negative number`);
  if (c.containerLogMaxFiles <= 1) bad("containerLogMaxFiles must be greater than 1");
  if (msOf(c.containerLogMonitorInterval) < 3000) bad("containerLogMonitorInterval must be a positive time duration greater than or equal to 3s");
  if (parseQuantityBytes(c.containerLogMaxSize) === undefined) bad(`containerLogMaxSize (--container-log-max-size) "${c.containerLogMaxSize}" is not a quantity like 10Mi`);
  const restartMs = msOf(c.crashLoopBackOff.maxContainerRestartPeriod);
  if (restartMs < 1000 || restartMs > 300_000) bad(`CrashLoopBackOff.MaxContainerRestartPeriod (got: ${restartMs / 1000} seconds) must be set between 1s and 300s`);
  for (const field of ["nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "evictionPressureTransitionPeriod"]) {
    if (msOf(c[field]) <= 0) bad(`${field} ${c[field]} must be greater than zero`);
  }
  if (c.imageGCHighThresholdPercent < 0 || c.imageGCHighThresholdPercent > 100) bad(`imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent} must be between 0 and 100, inclusive`);
  if (c.imageGCLowThresholdPercent < 0 || c.imageGCLowThresholdPercent > 100) bad(`imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be between 0 and 100, inclusive`);
  if (c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent) bad(`imageGCLowThresholdPercent (--image-gc-low-threshold) ${c.imageGCLowThresholdPercent} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${c.imageGCHighThresholdPercent}`);
  if (msOf(c.imageMaximumGCAge) > 0 && msOf(c.imageMaximumGCAge) <= msOf(c.imageMinimumGCAge)) bad(`imageMaximumGCAge ${c.imageMaximumGCAge} must be greater than imageMinimumGCAge ${c.imageMinimumGCAge}`);
  if (c.maxParallelImagePulls !== undefined && c.maxParallelImagePulls < 1) bad(`maxParallelImagePulls ${c.maxParallelImagePulls} must be a positive number`);
  if (c.serializeImagePulls && c.maxParallelImagePulls !== undefined && c.maxParallelImagePulls !== 1) bad(`maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false`);
  if (!VERIFICATION_POLICIES.includes(c.imagePullCredentialsVerificationPolicy)) bad(`imagePullCredentialsVerificationPolicy "${c.imagePullCredentialsVerificationPolicy}" must be one of ${VERIFICATION_POLICIES.map((p) => `"${p}"`).join(", ")}`);
  if (c.podLogsDir === "") bad("podLogsDir was not specified");
  else if (!path.isAbsolute(c.podLogsDir)) bad(`pod logs path "${c.podLogsDir}" must be absolute path`);
  else if (path.posix.normalize(c.podLogsDir).replace(/(.)\/$/, "$1") !== c.podLogsDir) bad(`pod logs path "${c.podLogsDir}" must be normalized`);
  if (c.containerRuntimeEndpoint === "") bad("the containerRuntimeEndpoint was not specified or empty");
  if (!["Webhook", "AlwaysAllow"].includes(c.authorization.mode)) bad(`authorization.mode (--authorization-mode) "${c.authorization.mode}" must be one of "Webhook" or "AlwaysAllow"`);
  if (!["Watch", "Cache", "Get"].includes(c.configMapAndSecretChangeDetectionStrategy)) {
    bad(`configMapAndSecretChangeDetectionStrategy (--config-map-and-secret-change-detection-strategy) "${c.configMapAndSecretChangeDetectionStrategy}" must be one of "Watch", "Cache" or "Get"`);
  }
  validateNodeShutdown(c, bad);
  validateReservations(c, bad);
  validateHardware(c, bad);
  for (const field of ["evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"]) {
    for (const [signal, value] of Object.entries(c[field] as Record<string, string>)) {
      // The core reads these as the flags' text: a separator inside would change what they say.
      if (/[,<=]/.test(signal + value)) bad(`${field}: "${signal}": "${value}" may not contain ',', '<' or '='`);
    }
  }
  return errors;
}

/** Milliseconds of a /configz duration, rounded up (a positive one never becomes 0). */
export function msOf(duration: string): number {
  const ns = parseGoDuration(duration);
  return typeof ns === "string" ? NaN : durationMs(ns);
}

/** Bytes of a quantity as containerLogMaxSize takes it: Ki, Mi, Gi (binary) or k, K, M, G (decimal). */
export function parseQuantityBytes(text: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/.exec(String(text).trim());
  if (!m) return undefined;
  const unit: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  const bytes = Number(m[1]) * (m[2] ? unit[m[2]] : 1);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A threshold map as the core's flag-shaped setting reads it ("signal<value,..." or "signal=value,..."). */
export function thresholdText(map: Record<string, string>, separator: "<" | "="): string {
  return Object.entries(map).map(([signal, value]) => `${signal}${separator}${value}`).join(",");
}

/** The flag names that set a field (for the usage text and to tell flags from nanolet-only ones). */
export const CONFIG_FLAGS = new Set(FIELDS.flatMap((f) => (f.flag ? [f.flag] : [])));

// `nanolet run`'s settings: the kubelet's flags (their names, pflag's booleans), the
// configuration file under them, and every check that must pass before the agent starts.
import { parseGoDuration } from "../config/go-duration.js";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadKubeconfig, type ClusterAccess } from "../cluster/kubeconfig.js";
import { DEFAULT_CORE_CONFIG, type CoreConfig } from "../core/core.js";
import { nodeSettings } from "../node/eviction-flags.js";
import { readMachineTopology } from "../hardware/machine-topology.js";
import { hardwareSettings } from "../config/hardware-fields.js";
import { primaryIpv4, readMachineInfo } from "../node/machine.js";
import { StreamLogger, type Level } from "../common/log.js";
import { readServingFiles } from "../server/serving-cert.js";
import { CoreAgent } from "../core/core.js";
import { readResolvConf, type PodRuntimeSettings } from "../pod-runtime/runtime-settings.js";
import { checkAllowedUnsafeSysctls } from "../pod-runtime/ports-and-sysctls.js";
import { msOf, resolveConfig, thresholdText } from "../config/kubelet-config.js";
import { nodeShutdownSettings } from "../config/node-fields.js";
import { nodeResources, type ReservationSettings } from "../node/allocatable.js";

export function parseDurationMs(text: string, flag: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(text.trim());
  if (!m) throw new Error(`${flag}: invalid duration "${text}" (use e.g. 500ms, 1s, 2m)`);
  const n = Number(m[1]);
  const ms = m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
  if (ms <= 0) throw new Error(`${flag}: must be greater than zero`);
  return ms;
}

function defaultNodeName(): string {
  return os.hostname().toLowerCase();
}

/**
 * The node's apiserver access: its kubeconfig, or, with --bootstrap-kubeconfig and no usable
 * kubeconfig yet, the bootstrap's server and CA without credentials (the certificate manager
 * gets them by TLS bootstrap while the agent already runs).
 */
function clusterAccess(kubeconfig: string | undefined, bootstrapFile: string | undefined, log: StreamLogger): { access?: ClusterAccess; bootstrap?: ClusterAccess } {
  if (bootstrapFile !== undefined && kubeconfig === undefined) throw new Error("--bootstrap-kubeconfig needs --kubeconfig: the file the node's own credentials are written to");
  const bootstrap = bootstrapFile !== undefined ? loadKubeconfig(path.resolve(bootstrapFile)) : undefined;
  if (kubeconfig === undefined) return {};
  const file = path.resolve(kubeconfig);
  if (!bootstrap) return { access: loadKubeconfig(file) };
  try {
    if (fs.existsSync(file)) return { access: loadKubeconfig(file), bootstrap };
  } catch (error) {
    log.log("warn", "The node's kubeconfig cannot be used; bootstrapping", { file, error: (error as Error).message });
  }
  return { access: { server: bootstrap.server, caPem: bootstrap.caPem, insecureSkipTlsVerify: bootstrap.insecureSkipTlsVerify }, bootstrap };
}

/** The boolean flags of `run`: each takes `--name`, `--name=true` or `--name=false`, as the kubelet's. */
const RUN_BOOLEAN_FLAGS = new Set(["rotate-certificates", "authentication-token-webhook", "anonymous-auth", "serialize-image-pulls"]);

/**
 * The kubelet's flags (pflag) take a boolean's value after `=` (`--anonymous-auth=false`, the
 * form kubeadm and every guide writes); Node's parser takes none. `--name=<value>` is read with
 * Go's ParseBool words: true becomes `--name`, false is taken out and returned.
 */
export function booleanFlagValues(argv: string[], names: ReadonlySet<string>): { args: string[]; falseFlags: string[] } {
  const args: string[] = [];
  const falseFlags: string[] = [];
  for (const arg of argv) {
    const m = /^--([a-z0-9-]+)=(.*)$/s.exec(arg);
    if (!m || !names.has(m[1])) {
      args.push(arg);
      continue;
    }
    if (["1", "t", "T", "TRUE", "true", "True"].includes(m[2])) args.push(`--${m[1]}`);
    else if (["0", "f", "F", "FALSE", "false", "False"].includes(m[2])) falseFlags.push(m[1]);
    else throw new Error(`invalid argument ${JSON.stringify(m[2].slice(0, 32))} for "--${m[1]}" flag: strconv.ParseBool: parsing ${JSON.stringify(m[2].slice(0, 32))}: invalid syntax`);
  }
  return { args, falseFlags };
}

/** A port the agent must serve: if it cannot listen, the agent stops (exit 1) instead of running half-started. */
export async function listenOrFail<T>(log: StreamLogger, what: string, address: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    log.log("error", "Failed to listen and serve", { server: what, address, error: (error as Error).message });
    throw new StartupError(`cannot serve the ${what} on ${address}: ${(error as Error).message}`);
  }
}

/** A failure after the agent began to start (exit 1), as opposed to a configuration mistake (exit 2). */
export class StartupError extends Error {}

/**
 * Everything `run` is told (flags, --config, the files they name), resolved and checked before
 * anything is waited for (the runtime may not be up yet): a mistake is exit 2 at once, never a
 * retry loop.
 */
export async function runSettings(argv: string[]) {
  const { args, falseFlags } = booleanFlagValues(argv, RUN_BOOLEAN_FLAGS);
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string" },
      "pod-manifest-path": { type: "string" },
      "container-runtime-endpoint": { type: "string" },
      "hostname-override": { type: "string" },
      "root-dir": { type: "string", default: "/var/lib/nanolet" },
      "pod-logs-dir": { type: "string" },
      "relist-period": { type: "string", default: "1s" },
      v: { type: "string", default: "info" },
      record: { type: "string" },
      kubeconfig: { type: "string" },
      "bootstrap-kubeconfig": { type: "string" },
      "rotate-certificates": { type: "boolean" },
      "node-ip": { type: "string" },
      "provider-id": { type: "string" },
      "eviction-hard": { type: "string" },
      "eviction-soft": { type: "string" },
      "eviction-soft-grace-period": { type: "string" },
      "eviction-minimum-reclaim": { type: "string" },
      "eviction-pressure-transition-period": { type: "string" },
      "eviction-max-pod-grace-period": { type: "string" },
      "eviction-monitoring-interval": { type: "string", default: "10s" },
      "imagefs-path": { type: "string", default: "/var/lib/containerd" },
      "cgroup-root": { type: "string", default: "/sys/fs/cgroup" },
      "max-pods": { type: "string" },
      port: { type: "string" },
      address: { type: "string" },
      "tls-cert-file": { type: "string" },
      "tls-private-key-file": { type: "string" },
      "cert-dir": { type: "string" },
      "client-ca-file": { type: "string" },
      "config-map-and-secret-change-detection-strategy": { type: "string" },
      "authentication-token-webhook": { type: "boolean" },
      "anonymous-auth": { type: "boolean" },
      "authorization-mode": { type: "string" },
      "healthz-port": { type: "string" },
      "healthz-bind-address": { type: "string" },
      "read-only-port": { type: "string" },
      "container-log-max-size": { type: "string" },
      "container-log-max-files": { type: "string" },
      "container-log-monitor-interval": { type: "string" },
      "cluster-dns": { type: "string" },
      "cluster-domain": { type: "string" },
      "resolv-conf": { type: "string" },
      "allowed-unsafe-sysctls": { type: "string" },
      "serialize-image-pulls": { type: "boolean" },
      "minimum-image-ttl-duration": { type: "string" },
      "image-gc-high-threshold": { type: "string" },
      "image-gc-low-threshold": { type: "string" },
      "image-gc-period": { type: "string", default: "5m" },
      "pod-infra-container-image": { type: "string" },
      "logind-conf-dir": { type: "string", default: "/etc/systemd/logind.conf.d" },
      "manifest-url": { type: "string" },
      "manifest-url-header": { type: "string", multiple: true },
      "http-check-frequency": { type: "string" },
      "system-reserved": { type: "string" },
      "kube-reserved": { type: "string" },
      "reserved-cpus": { type: "string" },
      "cpu-manager-policy": { type: "string" },
      "cpu-manager-policy-options": { type: "string" },
      "cpu-manager-reconcile-period": { type: "string" },
      "memory-manager-policy": { type: "string" },
      "reserved-memory": { type: "string" },
      "topology-manager-policy": { type: "string" },
      "topology-manager-scope": { type: "string" },
      "enforce-node-allocatable": { type: "string" },
      "system-reserved-cgroup": { type: "string" },
      "kube-reserved-cgroup": { type: "string" },
      // Where the CPU topology is read (tests give a made-up machine).
      "sys-root": { type: "string" },
    },
    strict: true,
  });
  for (const name of falseFlags) (values as Record<string, unknown>)[name] = false;
  const level = values.v as Level;
  if (!["debug", "info", "warn", "error"].includes(level)) throw new Error(`--v: unknown level "${values.v}"`);
  const log = new StreamLogger(process.stderr, level);
  // Upstream's defaults, then --config, then the flags given: what the agent runs with and /configz shows.
  // A repeated --manifest-url-header adds to the one before, as the kubelet's does.
  const flags = { ...values, "manifest-url-header": values["manifest-url-header"]?.join(",") };
  const { config, warnings } = resolveConfig({ file: values.config, flags, hasKubeconfig: values.kubeconfig !== undefined });
  const imageGcPeriod = parseGoDuration(values["image-gc-period"]!);
  if (typeof imageGcPeriod === "string" || imageGcPeriod <= 0n) throw new Error(`--image-gc-period: ${typeof imageGcPeriod === "string" ? imageGcPeriod : "must be greater than 0"}`);
  for (const warning of warnings) log.log("warn", "Configuration file: " + warning, { file: values.config });
  const nodeName = values["hostname-override"] ?? defaultNodeName();
  const maxPods: number = config.maxPods;
  const rootDir = path.resolve(values["root-dir"]!);
  // Port 0 (a flag) turns the kubelet API off, as enableServer: false does.
  const apiPort: number = config.enableServer ? config.port : 0;
  const healthzPort: number = config.healthzPort;
  const readOnlyPort: number = config.readOnlyPort;
  const authorizationMode = config.authorization.mode as "Webhook" | "AlwaysAllow";
  const tokenWebhook: boolean = config.authentication.webhook.enabled;
  if ((authorizationMode === "Webhook" || tokenWebhook) && values.kubeconfig === undefined) {
    throw new Error("authorization mode Webhook and token webhook authentication ask the apiserver: they need --kubeconfig (set authorization.mode: AlwaysAllow and authentication.webhook.enabled: false to run without one)");
  }
  const podLogsDir: string = config.podLogsDir;
  const manifestDir = path.resolve(config.staticPodPath);
  fs.mkdirSync(rootDir, { recursive: true });
  fs.mkdirSync(podLogsDir, { recursive: true });

  // Every flag, field and file the configuration names is checked before anything is waited for
  // (the runtime may not be up yet): a mistake is exit 2 at once, never a retry loop.
  if (net.isIP(config.address) === 0) throw new Error(`invalid configuration: address (--address) ${JSON.stringify(String(config.address).slice(0, 64))} is not a valid IP address`);
  if (net.isIP(config.healthzBindAddress) === 0) throw new Error(`invalid configuration: healthzBindAddress (--healthz-bind-address) ${JSON.stringify(String(config.healthzBindAddress).slice(0, 64))} is not a valid IP address`);
  const relistPeriodMs = parseDurationMs(values["relist-period"]!, "--relist-period");
  const machine = readMachineInfo(rootDir);
  const evictionIntervalMs = parseDurationMs(values["eviction-monitoring-interval"]!, "--eviction-monitoring-interval");
  // Allocatable as upstream computes it: capacity less the reservations and hard eviction thresholds.
  const reservations: ReservationSettings = {
    systemReserved: config.systemReserved ?? {}, kubeReserved: config.kubeReserved ?? {},
    reservedSystemCPUs: config.reservedSystemCPUs ?? "", evictionHard: config.evictionHard, maxPods,
  };
  const resources = nodeResources(machine, reservations);
  const node = nodeSettings(machine, resources, {
    evictionHard: thresholdText(config.evictionHard, "<"),
    evictionSoft: thresholdText(config.evictionSoft, "<"),
    evictionSoftGracePeriod: thresholdText(config.evictionSoftGracePeriod, "="),
    evictionMinimumReclaim: thresholdText(config.evictionMinimumReclaim, "="),
    evictionPressureTransitionPeriodMs: msOf(config.evictionPressureTransitionPeriod),
    evictionMaxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod,
    evictionIntervalMs,
  });
  const cgroupRoot = path.resolve(values["cgroup-root"]!);
  const clusterDns: string[] = config.clusterDNS;
  for (const ip of clusterDns) if (net.isIP(ip) === 0) throw new Error(`invalid configuration: clusterDNS (--cluster-dns): "${ip}" is not an IP address`);
  const allowedUnsafeSysctls: string[] = config.allowedUnsafeSysctls;
  checkAllowedUnsafeSysctls(allowedUnsafeSysctls);
  const resolvConfFile: string = config.resolvConf;
  const resolvConf = readResolvConf(resolvConfFile);
  if (resolvConf === undefined) log.log("warn", "Could not read --resolv-conf; Default pods get no host DNS settings", { file: resolvConfFile });
  // --node-ip: one address, or a dual-stack pair (one IPv4, one IPv6), as upstream parses it.
  const nodeIps = values["node-ip"] !== undefined ? parseNodeIps(values["node-ip"]) : [];
  const nodeIp = nodeIps[0] ?? primaryIpv4();
  const podRuntime: PodRuntimeSettings = {
    dns: { clusterDns, clusterDomain: config.clusterDomain, resolvConf, nodeIps: nodeIps.length > 0 ? nodeIps : nodeIp ? [nodeIp] : [] },
    seccompRoot: path.join(rootDir, "seccomp"),
    nodeHostsFile: "/etc/hosts",
  };
  const { access, bootstrap } = clusterAccess(values.kubeconfig, values["bootstrap-kubeconfig"], log);
  const servingFiles = apiPort > 0 ? readServingFiles(config.tlsCertFile, config.tlsPrivateKeyFile, config.authentication.x509?.clientCAFile) : {};
  // The CPU topology is read only when a manager places over it (none of them by default).
  const placing = config.cpuManagerPolicy !== "none" || config.memoryManagerPolicy !== "None" || config.topologyManagerPolicy !== "none";
  const topology = placing ? readMachineTopology(values["sys-root"] ?? "/sys") : { cpus: [], numaMemory: [] };
  const coreConfig: CoreConfig = {
    nodeName, ...DEFAULT_CORE_CONFIG, maxPods, backoffMaxMs: msOf(config.crashLoopBackOff.maxContainerRestartPeriod), relistPeriodMs, node,
    nodeShutdown: nodeShutdownSettings(config),
    hardware: hardwareSettings(config, topology, machine.cpuCount * 1000 - resources.podsCpuMilli, machine.memoryBytes),
  };
  // The core checks the eviction thresholds with upstream's words: ask it now, not once the
  // runtime answers (a core instance is cheap once its modules are compiled, and is dropped).
  await CoreAgent.create(coreConfig);
  return {
    values, log, config, nodeName, maxPods, rootDir, apiPort, healthzPort, readOnlyPort, authorizationMode, tokenWebhook,
    podLogsDir, manifestDir, relistPeriodMs, machine, evictionIntervalMs, node, cgroupRoot, allowedUnsafeSysctls, nodeIp,
    podRuntime, access, bootstrap, servingFiles, coreConfig, reservations, resources, nodeIps,
  };
}

/** Upstream's parseNodeIP: one IP, or two of different families; neither unspecified when two. */
export function parseNodeIps(text: string): string[] {
  const bad = (why: string) => new Error(`bad --node-ip ${JSON.stringify(text.slice(0, 128))}: ${why}`);
  const ips = text.split(",").map((ip) => ip.trim()).filter((ip) => ip !== "");
  for (const ip of ips) if (net.isIP(ip) === 0) throw bad(`could not parse ${JSON.stringify(ip.slice(0, 64))}`);
  if (ips.length > 2 || (ips.length === 2 && net.isIPv6(ips[0]) === net.isIPv6(ips[1]))) throw bad("must contain either a single IP or a dual-stack pair of IPs");
  if (ips.length === 2 && ips.some((ip) => ip === "0.0.0.0" || ip === "::")) throw bad("dual-stack node IP cannot include '0.0.0.0' or '::'");
  return ips;
}

export type RunSettings = Awaited<ReturnType<typeof runSettings>>;

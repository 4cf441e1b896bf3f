// The nanolet command line: `nanolet run` (the agent) and `nanolet pods` (what it runs).
// Flags follow the kubelet's names where the kubelet has one.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { AgentLoop } from "../agent/agent-loop.js";
import { ApiClient } from "../cluster/api-client.js";
import { ObjectStore, type ChangeDetectionStrategy } from "../volumes/object-store.js";
import { TokenManager } from "../volumes/token-manager.js";
import { VolumeManager } from "../volumes/volume-manager.js";
import { ClusterAgent } from "../cluster/cluster-agent.js";
import { PodCheckpoints } from "../cluster/pod-checkpoints.js";
import { CheckpointStore, type CheckpointProblem } from "../checkpoint/checkpoint-store.js";
import { loadKubeconfig, type ClusterAccess } from "../cluster/kubeconfig.js";
import { CertificateManager } from "../certificates/certificate-manager.js";
import { DEFAULT_CORE_CONFIG, type CoreConfig } from "../core/core.js";
import { CgroupManager } from "../node/cgroup-manager.js";
import { nodeSettings } from "../node/eviction-flags.js";
import { primaryIpv4, readMachineInfo } from "../node/machine.js";
import { StatsCollector } from "../node/stats.js";
import { RuntimeEvents } from "../cri/runtime-events.js";
import { GrpcRuntime } from "../cri/grpc-runtime.js";
import { StreamLogger, type Level } from "../common/log.js";
import { PodTable, formatPodTable, type PodTableSnapshot } from "../agent/pod-table.js";
import { fetchPods, startControlSocket } from "../server/control-socket.js";
import { startHealthzServer } from "../server/kubelet-server.js";
import { startKubeletApi } from "../server/kubelet-api.js";
import { readServingFiles } from "../server/serving-cert.js";
import { readBoundedText } from "../files/bounded-file.js";
import { defaultNodeLabels, plegProblem } from "../cluster/node-object.js";
import { countEviction, statsHandlers } from "../server/stats-endpoints.js";
import { KubeletMetrics } from "../metrics/kubelet-metrics.js";
import { ContainerLogManager } from "../logs/container-log-manager.js";
import { SummaryProvider } from "../node/summary.js";
import { StaticPodSource } from "../sources/static-pods.js";
import { simCommand } from "./sim.js";
import { CoreAgent } from "../core/core.js";
import { DEFAULT_MAX_TRACE_BYTES, FileTraceSink } from "../trace/file-sink.js";
import { RecordingCore, TraceWriter } from "../trace/recording-core.js";
import { readResolvConf, type PodRuntimeSettings } from "../pod-runtime/runtime-settings.js";
import { checkAllowedUnsafeSysctls } from "../pod-runtime/ports-and-sysctls.js";
import { msOf, parseQuantityBytes, resolveConfig, thresholdText } from "../config/kubelet-config.js";
import { ARTIFACT_DIR, BUNDLED } from "../common/asset-paths.js";
import { install, uninstall } from "../install/installer.js";
import { KUBELET_VERSION } from "../cluster/node-object.js";
import { NANOLET_VERSION } from "../common/version.js";

/** How long the agent waits for its pod sources (the apiserver's first list) before acting anyway. */
const SOURCES_READY_TIMEOUT_MS = 30_000;

const USAGE = `Usage:
  nanolet run [flags]      run the node agent
  nanolet pods [flags]     list the pods of a running (or the last) agent
  nanolet sim [flags]      run the core on a simulated node (see nanolet sim --help)
  nanolet version          this build's version
  nanolet install [--root DIR] [--no-enable] [--now]
                           put this artifact in place as a systemd service (root; see docs/running.md)
  nanolet uninstall [--root DIR] [--purge]
                           take it out again (--purge: its config and state too)

Flags of run (a flag given wins over the same setting in --config):
  --config FILE                      a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file; its
                                     fields default as the kubelet's do (see docs/running.md)
  --pod-manifest-path DIR            static pod manifests (default /etc/kubernetes/manifests)
  --container-runtime-endpoint URL   CRI socket (default unix:///run/containerd/containerd.sock)
  --hostname-override NAME           node name (default: the host name)
  --root-dir DIR                     agent state and control socket (default /var/lib/nanolet)
  --pod-logs-dir DIR                 container logs (default /var/log/pods)
  --relist-period DURATION           PLEG relist period (default 1s)
  --v LEVEL                          log level: debug, info, warn, error (default info)
  --kubeconfig FILE                  join the cluster this kubeconfig names, as node
                                     system:node:<name> (without it: static pods only)
  --bootstrap-kubeconfig FILE        without a usable --kubeconfig (none yet, or its certificate
                                     expired): get a client certificate by a CSR with these
                                     credentials and write --kubeconfig to use it (TLS bootstrap)
  --rotate-certificates              request a new client certificate at 70-90% of its life
  --node-ip IP                       the node's InternalIP (default: the first IPv4 address)
  --eviction-hard LIST               hard eviction thresholds (default
                                     memory.available<100Mi,nodefs.available<10%,
                                     nodefs.inodesFree<5%,imagefs.available<15%,
                                     imagefs.inodesFree<5%)
  --eviction-soft LIST               soft thresholds, each with a grace period (default none)
  --eviction-soft-grace-period LIST  e.g. memory.available=1m30s
  --eviction-minimum-reclaim LIST    e.g. memory.available=0Mi,nodefs.available=500Mi
  --eviction-pressure-transition-period DURATION  how long a pressure condition stays (default 5m)
  --eviction-max-pod-grace-period SECONDS  grace for pods evicted under soft thresholds (default 0)
  --eviction-monitoring-interval DURATION  stats pass and eviction interval (default 10s)
  --imagefs-path DIR                 the runtime's image store, for imagefs.* (default /var/lib/containerd)
  --cgroup-root DIR                  cgroup file system (default /sys/fs/cgroup)
  --max-pods N                       pods this node runs at most; more are refused as OutOfpods
                                     (default 110)
  --port N                           the kubelet API (HTTPS: logs, exec, attach, port-forward,
                                     pods, stats, metrics); 0 turns it off (default 10250)
  --address IP                       where the kubelet API listens (default 0.0.0.0)
  --tls-cert-file FILE               its serving certificate; without it and --tls-private-key-file,
  --tls-private-key-file FILE        a self-signed one in --cert-dir (kubelet.crt, kubelet.key)
  --cert-dir DIR                     default <root-dir>/pki
  --config-map-and-secret-change-detection-strategy Watch|Cache|Get
                                     how configMaps and secrets of pods are kept up to date
                                     (Watch: one watch per object; Cache: a GET kept 1 min;
                                     Get: a GET each time; default Watch)
  --client-ca-file FILE              client certificates signed by this CA authenticate (CN user,
                                     O groups)
  --authentication-token-webhook     bearer tokens authenticate by the apiserver's TokenReview
  --anonymous-auth                   requests without an identity are system:anonymous (default
                                     off: 401)
  --authorization-mode MODE          Webhook (SubjectAccessReview; the default with --kubeconfig)
                                     or AlwaysAllow (the default without)
  --healthz-port N                   plain-HTTP /healthz; 0 turns it off (default 10248)
  --healthz-bind-address IP          default 127.0.0.1
  --read-only-port N                 unauthenticated plain HTTP with the read-only endpoints; off
                                     unless set (default 0)
  --container-log-max-size SIZE      a container's log is rotated past this (default 10Mi)
  --container-log-max-files N        log files kept per container, the live one included
                                     (default 5; older ones are gzipped)
  --container-log-monitor-interval DURATION  how often log sizes are checked (default 10s)
  --cluster-dns IP[,IP]              the cluster's DNS servers, for ClusterFirst pods (none: such
                                     pods fall back to the node's resolv.conf, with an event)
  --cluster-domain DOMAIN            the cluster's domain (search paths, subdomain hostnames)
  --resolv-conf FILE                 the node's resolver config for Default pods (default
                                     /etc/resolv.conf; "" for none)
  --allowed-unsafe-sysctls LIST      sysctls (or prefixes ending in *) pods may set beyond the safe
                                     ones; others are refused as SysctlForbidden
  --record FILE                      write every input the core is given to FILE (a trace for
                                     'nanolet sim --replay'); stops at 256 MiB

Flags of pods:
  --root-dir DIR                     as given to run
  -o json                            print JSON instead of a table
`;

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

/** `--help` or `-h` anywhere in a subcommand's flags: the usage, and exit 0. */
function wantsHelp(argv: string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/** The boolean flags of `run`: each takes `--name`, `--name=true` or `--name=false`, as the kubelet's. */
const RUN_BOOLEAN_FLAGS = new Set(["rotate-certificates", "authentication-token-webhook", "anonymous-auth"]);

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
async function listenOrFail<T>(log: StreamLogger, what: string, address: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    log.log("error", "Failed to listen and serve", { server: what, address, error: (error as Error).message });
    throw new StartupError(`cannot serve the ${what} on ${address}: ${(error as Error).message}`);
  }
}

/** A failure after the agent began to start (exit 1), as opposed to a configuration mistake (exit 2). */
class StartupError extends Error {}

async function run(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
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
    },
    strict: true,
  });
  for (const name of falseFlags) (values as Record<string, unknown>)[name] = false;
  const level = values.v as Level;
  if (!["debug", "info", "warn", "error"].includes(level)) throw new Error(`--v: unknown level "${values.v}"`);
  const log = new StreamLogger(process.stderr, level);
  // Upstream's defaults, then --config, then the flags given: what the agent runs with and /configz shows.
  const { config, warnings } = resolveConfig({ file: values.config, flags: values, hasKubeconfig: values.kubeconfig !== undefined });
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
  const node = nodeSettings(machine, {
    evictionHard: thresholdText(config.evictionHard, "<"),
    evictionSoft: thresholdText(config.evictionSoft, "<"),
    evictionSoftGracePeriod: thresholdText(config.evictionSoftGracePeriod, "="),
    evictionMinimumReclaim: thresholdText(config.evictionMinimumReclaim, "="),
    evictionPressureTransitionPeriodMs: msOf(config.evictionPressureTransitionPeriod),
    evictionMaxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod,
    evictionIntervalMs,
  });
  const cgroupRoot = path.resolve(values["cgroup-root"]!);
  // The cluster side is made after the loop but sees every action the loop emits.
  let cluster: ClusterAgent | undefined;
  const clusterDns: string[] = config.clusterDNS;
  for (const ip of clusterDns) if (net.isIP(ip) === 0) throw new Error(`invalid configuration: clusterDNS (--cluster-dns): "${ip}" is not an IP address`);
  const allowedUnsafeSysctls: string[] = config.allowedUnsafeSysctls;
  checkAllowedUnsafeSysctls(allowedUnsafeSysctls);
  const resolvConfFile: string = config.resolvConf;
  const resolvConf = readResolvConf(resolvConfFile);
  if (resolvConf === undefined) log.log("warn", "Could not read --resolv-conf; Default pods get no host DNS settings", { file: resolvConfFile });
  const nodeIp = values["node-ip"] ?? primaryIpv4();
  const podRuntime: PodRuntimeSettings = {
    dns: { clusterDns, clusterDomain: config.clusterDomain, resolvConf, nodeIps: nodeIp ? [nodeIp] : [] },
    seccompRoot: path.join(rootDir, "seccomp"),
    nodeHostsFile: "/etc/hosts",
  };
  const { access, bootstrap } = clusterAccess(values.kubeconfig, values["bootstrap-kubeconfig"], log);
  const servingFiles = apiPort > 0 ? readServingFiles(config.tlsCertFile, config.tlsPrivateKeyFile, config.authentication.x509?.clientCAFile) : {};
  const coreConfig: CoreConfig = { nodeName, ...DEFAULT_CORE_CONFIG, maxPods, backoffMaxMs: msOf(config.crashLoopBackOff.maxContainerRestartPeriod), relistPeriodMs, node };
  // The core checks the eviction thresholds with upstream's words: ask it now, not once the
  // runtime answers (a core instance is cheap once its modules are compiled, and is dropped).
  await CoreAgent.create(coreConfig);

  const metrics = new KubeletMetrics();
  const runtime = new GrpcRuntime({
    endpoint: config.containerRuntimeEndpoint,
    onCall: (method, durationMs, failed) => metrics.runtimeCall(method, durationMs, failed),
    onRetry: (call, attempt, error) => log.log("warn", "Runtime not ready, retrying", { call, attempt, error }),
    onReconnected: (downForMs) => log.log("info", "Container runtime is back", { endpoint: config.containerRuntimeEndpoint, unreachableForMs: downForMs }),
  });
  // The runtime's name for container IDs (`containerd://<id>`), as it says it once it answers.
  let runtimeName = "containerd";
  try {
    const v = await runtime.version();
    runtimeName = v.runtimeName || runtimeName;
    log.log("info", "Connected to container runtime", { runtime: v.runtimeName, version: v.runtimeVersion, api: v.runtimeApiVersion });
  } catch (error) {
    log.log("error", "Container runtime not reachable; will keep trying", { endpoint: config.containerRuntimeEndpoint, error: (error as Error).message });
  }

  const podTable = new PodTable(nodeName, path.join(rootDir, "pods.json"));
  podTable.onPodStarted = (seconds) => metrics.podStartDuration.observe({}, seconds);
  const recording =
    values.record !== undefined
      ? new FileTraceSink(path.resolve(values.record), {
          periodicFlush: true,
          maxBytes: DEFAULT_MAX_TRACE_BYTES,
          onFull: (bytes) => log.log("warn", "Recording stopped: the trace reached its size limit", { file: values.record, bytes }),
        })
      : undefined;
  let createCore: ((config: CoreConfig) => Promise<RecordingCore>) | undefined;
  if (recording) {
    const trace = new TraceWriter(recording.sink);
    trace.header(Date.now(), { node: nodeName, recordedBy: "nanolet run" });
    createCore = async (config) => RecordingCore.wrap(await CoreAgent.create(config), trace, Date.now(), config);
    log.log("info", "Recording core inputs", { file: path.resolve(values.record!) });
  }
  // While a TLS bootstrap gets the node its certificate, nothing is sent without one (it would
  // only be refused as system:anonymous); the pods the node knows keep running meanwhile.
  const client = access ? new ApiClient(access, { awaitCredentials: bootstrap !== undefined && !access.certPem && !access.token }) : undefined;
  // A kubeconfig with a bearer token has no certificate to bootstrap or rotate (upstream counts it valid).
  const certificates =
    client && access && !access.token && (bootstrap || (config.rotateCertificates && access.certPem))
      ? new CertificateManager({
          nodeName, certDir: path.resolve(values["cert-dir"] ?? path.join(rootDir, "pki")), kubeconfigPath: path.resolve(values.kubeconfig!),
          bootstrap, client, currentCertPem: access.certPem, access, rotate: config.rotateCertificates, log,
        })
      : undefined;
  certificates?.start();
  let servingCertificates: CertificateManager | undefined;
  const strategy = config.configMapAndSecretChangeDetectionStrategy as ChangeDetectionStrategy;
  // What a node restarted without its apiserver needs to run its pods again (docs/cluster.md: Offline).
  const checkpointDir = path.join(rootDir, "checkpoints");
  const checkpointProblem = (problem: CheckpointProblem) =>
    cluster?.events.recordNode("Warning", "CheckpointCorrupt", `Skipped checkpoint ${problem.file}: ${problem.reason}`);
  const checkpointStore = (kind: string, dir: string) => new CheckpointStore(path.join(checkpointDir, dir), kind, log, checkpointProblem);
  const objects = client ? new ObjectStore({ client, log, strategy, checkpoints: checkpointStore("object", "objects") }) : undefined;
  const tokens = client ? new TokenManager(client, Date.now, checkpointStore("token", "tokens")) : undefined;
  const podsDir = path.join(rootDir, "pods");
  const volumes = new VolumeManager({ podsDir, log, objects, tokens, client, allocatableMemoryBytes: () => node.allocatableMemoryBytes });
  const loop = new AgentLoop({
    backOffCheckpoints: checkpointStore("back-off", "back-off"),
    volumes,
    objects,
    tokens,
    onAction: (action) => {
      countEviction(metrics, action);
      cluster?.onAction(action);
    },
    onRelist: (startMs, endMs, snapshot) => metrics.relisted(startMs, endMs, snapshot),
    onCoreReplaced: () => cluster?.statuses.resetVersions(),
    createCore,
    runtime,
    log,
    podTable,
    podLogsDir,
    core: coreConfig,
    cgroupRoot,
    cgroups: new CgroupManager(cgroupRoot),
    stats: new StatsCollector({
      cgroupRoot,
      nodefsPath: rootDir,
      imagefsPath: fs.existsSync(values["imagefs-path"]!) ? values["imagefs-path"]! : rootDir,
      allocatableMemoryBytes: node.allocatableMemoryBytes,
    }),
    statsIntervalMs: evictionIntervalMs,
    nodeIp,
    podsDir,
    podRuntime,
    allowedUnsafeSysctls,
    serviceEnv: values.kubeconfig !== undefined ? (namespace, links) => cluster?.serviceEnvironment(namespace, links) : undefined,
    // The Node's labels as the apiserver has them (an admin may add some), else the kubelet's own.
    nodeLabels: () => cluster?.node.labels ?? defaultNodeLabels(nodeName, machine.architecture),
  });
  // No relist before every source said what it wants (upstream's sourcesReady): the static files
  // and, with a cluster, the apiserver's first pod list.
  loop.holdUntilSourcesReady(SOURCES_READY_TIMEOUT_MS);
  await loop.start();
  // Changes the runtime pushes are relisted at once; the periodic relist stays as the safety net
  // (every five minutes while the CRI event stream brings every change).
  const runtimeEvents = new RuntimeEvents(runtime, {
    onExit: (containerId, exit) => loop.runtimeEvent(containerId, exit),
    onOomKill: (containerId) => loop.oomKill(containerId),
    onChange: (containerId, kind) => loop.runtimeChange(containerId, kind),
    onEventStream: (streaming) => loop.eventStream(streaming),
    onSource: (source, reason) => log.log(reason === "streaming" || source === "none" ? "info" : "debug", "Runtime event source", { source, reason }),
  });
  runtimeEvents.start();
  const server = await startControlSocket(path.join(rootDir, "nanolet.sock"), podTable);
  if (client && access) {
    cluster = new ClusterAgent({
      client, nodeName, log, loop, runtime, rootDir, nodeIp: values["node-ip"],
      evictionMemoryBytes: node.memoryCapacityBytes - node.allocatableMemoryBytes,
      maxPods,
      kubeletPort: apiPort,
      nodeStatusUpdateMs: msOf(config.nodeStatusUpdateFrequency),
      nodeStatusReportMs: msOf(config.nodeStatusReportFrequency),
      leaseDurationSeconds: config.nodeLeaseDurationSeconds,
      checkpoints: new PodCheckpoints(checkpointStore("pod", "pods")),
      serviceCheckpoints: checkpointStore("services", "services"),
      onApiPodsListed: (uids) => {
        objects?.sweepCheckpoints();
        tokens?.sweepCheckpoints(uids);
      },
    });
    cluster.start();
    log.log("info", "Joining the cluster", { server: access.server, node: nodeName });
  }
  const syncLoopProblem = () => plegProblem(loop.lastRelistOkMs, Date.now(), loop.plegThresholdMs);
  const podsView = {
    pods: () => loop.accepted.all(),
    context: () => ({ nodeIp: nodeIp ?? "127.0.0.1", runtimeName, imageRefOf: (id: string) => loop.imageRefOf(id), podIpOf: (id: string) => loop.podIpOf(id) }),
  };
  const api = await listenOrFail(log, "kubelet API", `${config.address}:${apiPort}`, () => startKubeletApi({
    runtime, log, podTable, podsView, podLogsDir, nodeName, client, syncLoopProblem,
    port: apiPort, address: config.address, readOnlyPort,
    tlsCertFile: config.tlsCertFile, tlsKeyFile: config.tlsPrivateKeyFile,
    certDir: path.resolve(values["cert-dir"] ?? path.join(rootDir, "pki")),
    clientCaFile: config.authentication.x509?.clientCAFile, tokenWebhook,
    anonymous: config.authentication.anonymous.enabled, authorizationMode, nodeIp: values["node-ip"],
    configz: () => config,
    serverTlsBootstrap: config.serverTLSBootstrap,
    onCertificateManager: (manager) => (servingCertificates = manager),
    extraHandlers: statsHandlers({
      metrics,
      snapshot: () => loop.snapshot,
      summary: new SummaryProvider({
        cgroupRoot, nodeName, podLogsDir, nodefsPath: rootDir,
        imagefsPath: fs.existsSync(values["imagefs-path"]!) ? values["imagefs-path"]! : rootDir,
      }),
    }),
    servingFiles,
  }));
  const logManager = new ContainerLogManager({
    runtime, podLogsDir, log, snapshot: () => loop.snapshot,
    maxSizeBytes: parseQuantityBytes(config.containerLogMaxSize)!,
    maxFiles: config.containerLogMaxFiles,
    periodMs: msOf(config.containerLogMonitorInterval),
  });
  logManager.start();
  const healthz = healthzPort > 0 ? await listenOrFail(log, "healthz", `${config.healthzBindAddress}:${healthzPort}`, () => startHealthzServer(healthzPort, config.healthzBindAddress, syncLoopProblem)) : undefined;
  const source = new StaticPodSource(
    manifestDir,
    nodeName,
    (scan) => {
      if (cluster) cluster.setStaticPods(scan);
      else {
        loop.setPods(scan);
        loop.markSourcesReady();
      }
    },
    undefined,
    (error, pods) =>
      error === undefined
        ? log.log("info", "Manifest directory readable again", { dir: manifestDir, pods })
        : log.log("error", "Cannot read the manifest directory; keeping the pods of the last good scan", { dir: manifestDir, error, pods }),
  );
  source.start();
  log.log("info", "nanolet started", { node: nodeName, manifests: manifestDir, root: rootDir, cluster: values.kubeconfig ?? "none" });

  return new Promise((resolve) => {
    const shutdown = (signal: string) => {
      // Like the kubelet, stopping the agent leaves the pods running; a restart adopts them.
      log.log("info", "Shutting down; pods keep running", { signal });
      source.stop();
      certificates?.stop();
      servingCertificates?.stop();
      cluster?.stop();
      objects?.stop();
      runtimeEvents.stop();
      loop.stop();
      podTable.writeNow();
      podTable.stop();
      server.close();
      api?.close();
      logManager.stop();
      healthz?.close();
      runtime.close();
      recording?.close();
      resolve(0);
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
}

async function pods(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({
    args: argv,
    options: { "root-dir": { type: "string", default: "/var/lib/nanolet" }, o: { type: "string", short: "o" } },
    strict: true,
  });
  const rootDir = path.resolve(values["root-dir"]!);
  let snapshot: PodTableSnapshot;
  let stale = false;
  try {
    snapshot = (await fetchPods(path.join(rootDir, "nanolet.sock"))) as PodTableSnapshot;
  } catch {
    const file = path.join(rootDir, "pods.json");
    if (!fs.existsSync(file)) {
      process.stderr.write(`nanolet pods: no agent is answering at ${rootDir}/nanolet.sock and there is no ${file}\n`);
      return 1;
    }
    snapshot = JSON.parse(readBoundedText(file, 16 * 1024 * 1024));
    stale = true;
  }
  if (values.o === "json") {
    process.stdout.write(JSON.stringify(snapshot, null, 2) + "\n");
  } else {
    if (stale) process.stdout.write(`(agent not running; last state written ${new Date(snapshot.writtenAtMs).toISOString()})\n`);
    process.stdout.write(formatPodTable(snapshot));
  }
  return 0;
}

/** The version of this build (package.json's), the kubelet it follows, and where it runs. */
function versionText(): string {
  return `nanolet ${NANOLET_VERSION} (kubelet ${KUBELET_VERSION}; node ${process.version} ${process.platform}/${process.arch}${BUNDLED ? "" : "; from the source tree"})\n`;
}

function installCommand(argv: string[]): number {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({ args: argv, options: { root: { type: "string", default: "/" }, "no-enable": { type: "boolean", default: false }, now: { type: "boolean", default: false } }, strict: true });
  if (!ARTIFACT_DIR) throw new Error("install copies the artifact it runs from: build one with `npm run artifact` and run its bin/nanolet install");
  if (path.resolve(values.root!) === "/" && process.getuid?.() !== 0) throw new Error("install writes /opt, /etc and /usr/local/bin: run it as root");
  install({ artifactDir: ARTIFACT_DIR, root: values.root!, enable: !values["no-enable"], now: values.now, log: (line) => process.stdout.write(line + "\n") });
  return 0;
}

function uninstallCommand(argv: string[]): number {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({ args: argv, options: { root: { type: "string", default: "/" }, purge: { type: "boolean", default: false } }, strict: true });
  if (path.resolve(values.root!) === "/" && process.getuid?.() !== 0) throw new Error("uninstall removes files under /opt, /etc and /usr/local/bin: run it as root");
  uninstall({ root: values.root!, purge: values.purge!, log: (line) => process.stdout.write(line + "\n") });
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "version" || command === "--version") {
      process.stdout.write(versionText());
      return 0;
    }
    if (command === "install") return installCommand(rest);
    if (command === "uninstall") return uninstallCommand(rest);
    if (command === "run") return await run(rest);
    if (command === "pods") return await pods(rest);
    if (command === "sim") return await simCommand(rest);
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      process.stdout.write(USAGE);
      return 0;
    }
    // The word is shown cut and escaped: it is input, and may be anything.
    process.stderr.write(`nanolet: unknown command ${JSON.stringify(command.slice(0, 64))}\n\n${USAGE}`);
    return 2;
  } catch (error) {
    process.stderr.write(`nanolet: ${(error as Error).message}\n`);
    return error instanceof StartupError ? 1 : 2;
  }
}

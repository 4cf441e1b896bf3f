// `nanolet run`: the agent. Its settings resolved and checked (run-settings.ts), it connects to
// the runtime and puts the node together: the loop around the core, the pod sources, the
// cluster side with a kubeconfig, the kubelet API and healthz, logs; until SIGTERM or SIGINT.
import type { ImageCollector } from "../images/image-collector.js";
import { startImageCollector } from "./image-gc-settings.js";
import { ImageManager } from "../images/image-manager.js";
import { PulledRecords } from "../images/pulled-records.js";
import fs from "node:fs";
import path from "node:path";
import { AgentLoop } from "../agent/agent-loop.js";
import { ApiClient } from "../cluster/api-client.js";
import { ObjectStore, type ChangeDetectionStrategy } from "../volumes/object-store.js";
import { TokenManager } from "../volumes/token-manager.js";
import { VolumeManager } from "../volumes/volume-manager.js";
import { ClusterAgent } from "../cluster/cluster-agent.js";
import { PodCheckpoints } from "../cluster/pod-checkpoints.js";
import { CheckpointStore, type CheckpointProblem } from "../checkpoint/checkpoint-store.js";
import { CertificateManager } from "../certificates/certificate-manager.js";
import { type CoreConfig } from "../core/core.js";
import { CgroupManager } from "../node/cgroup-manager.js";
import { StatsCollector } from "../node/stats.js";
import { RuntimeEvents } from "../cri/runtime-events.js";
import { GrpcRuntime } from "../cri/grpc-runtime.js";
import { PodTable } from "../agent/pod-table.js";
import { startControlSocket } from "../server/control-socket.js";
import { startHealthzServer } from "../server/kubelet-server.js";
import { startKubeletApi } from "../server/kubelet-api.js";
import { defaultNodeLabels, plegProblem } from "../cluster/node-object.js";
import { countEviction, statsHandlers } from "../server/stats-endpoints.js";
import { KubeletMetrics } from "../metrics/kubelet-metrics.js";
import { ContainerLogManager } from "../logs/container-log-manager.js";
import { ContainerLogLinks } from "../logs/log-links.js";
import { SummaryProvider } from "../node/summary.js";
import { StaticPodSource } from "../sources/static-pods.js";
import { CoreAgent } from "../core/core.js";
import { DEFAULT_MAX_TRACE_BYTES, FileTraceSink } from "../trace/file-sink.js";
import { RecordingCore, TraceWriter } from "../trace/recording-core.js";
import { msOf, parseQuantityBytes } from "../config/kubelet-config.js";
import { USAGE, wantsHelp } from "./usage.js";
import { listenOrFail, runSettings } from "./run-settings.js";
import { startNodeShutdown } from "../node-shutdown/start.js";
import { RuntimeClasses } from "../cluster/runtime-classes.js";
import { OomWatcher, systemOomEvent } from "../node/oom-watcher.js";
import { StaticPodSets, UrlPodSource } from "../sources/url-pods.js";
import { createHash } from "node:crypto";
import type { NodeShutdownManager } from "../node-shutdown/shutdown-manager.js";
import { DeviceManager } from "../devices/device-manager.js";
import { PluginWatcher } from "../devices/plugin-watcher.js";
import { CsiDrivers } from "../csi/csi-drivers.js";
import { HardwareHost } from "../hardware/hardware-host.js";

/** How long the agent waits for its pod sources (the apiserver's first list) before acting anyway. */
const SOURCES_READY_TIMEOUT_MS = 30_000;

export async function runCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const {
    values, log, config, nodeName, rootDir, apiPort, healthzPort, readOnlyPort, authorizationMode, tokenWebhook,
    podLogsDir, manifestDir, machine, evictionIntervalMs, node, cgroupRoot, allowedUnsafeSysctls, nodeIp,
    podRuntime, access, bootstrap, servingFiles, coreConfig, reservations, resources, nodeIps,
  } = await runSettings(argv);
  // The cluster side is made after the loop but sees every action the loop emits.
  let cluster: ClusterAgent | undefined;
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
  const client = access
    ? new ApiClient(access, {
        awaitCredentials: bootstrap !== undefined && !access.certPem && !access.token,
        // A lost or downgraded apiserver connection is worth a line: requests fail until the next dial.
        http2: { onNotice: (message, fields) => log.log("info", message, fields) },
      })
    : undefined;
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
  // Device plugins (kubelet.sock and plugins_registry), CSI drivers, and the CPU and memory managers' files.
  let loopRef: AgentLoop | undefined;
  const devices = new DeviceManager({ dir: path.join(rootDir, "device-plugins"), log, onDevices: (resource, list) => loopRef?.handleDevices(resource, list) });
  await devices.start();
  const csi = new CsiDrivers({ rootDir, nodeName, log, client });
  const pluginWatcher = new PluginWatcher({
    dir: path.join(rootDir, "plugins_registry"), log,
    handlers: {
      DevicePlugin: { register: (info, socket) => devices.register({ version: "v1beta1", endpoint: "", resourceName: info.name }, socket), unregister: (name) => devices.unregister(name) },
      CSIPlugin: csi,
    },
  });
  const hardware = new HardwareHost({
    core: () => loopRef?.currentCore, runtime, log, rootDir, devices,
    cpuPolicy: config.cpuManagerPolicy, memoryPolicy: config.memoryManagerPolicy,
  });
  const volumes = new VolumeManager({ podsDir, log, objects, tokens, client, csi, allocatableMemoryBytes: () => node.allocatableMemoryBytes });
  const pulledRecords = new PulledRecords(path.join(rootDir, "image_manager"), config.imagePullCredentialsVerificationPolicy, config.preloadedImagesVerificationAllowlist ?? [], log);
  // Made once the loop runs (it asks the loop's core), used by the loop's eviction reclaim.
  let imageCollector: ImageCollector | undefined;
  let nodeShutdown: NodeShutdownManager | undefined;
  // RuntimeClasses need the apiserver: standalone, a pod's runtimeClassName is not looked up (as upstream).
  const runtimeClasses = client ? new RuntimeClasses({ client, log }) : undefined;
  const loop = new AgentLoop({
    hardware,
    runtimeHandler: runtimeClasses ? (name) => runtimeClasses.handlerFor(name) : undefined,
    onRuntimeClassesInUse: (inUse) => runtimeClasses?.inUse(inUse),
    backOffCheckpoints: checkpointStore("back-off", "back-off"),
    volumes,
    objects,
    logLinks: new ContainerLogLinks(log),
    onShutdownInhibitLock: (hold) => {
      void nodeShutdown?.lock(hold);
      // The cancellation is applied: the Ready condition says so at once.
      if (hold) cluster?.syncNodeStatus();
    },
    reclaimNodeResources: () => void imageCollector?.collect(true).catch((error) => log.log("warn", "Reclaiming node-level resources failed", { error: (error as Error).message })),
    images: new ImageManager({
      runtime, log, rootDir,
      serializeImagePulls: config.serializeImagePulls,
      maxParallelImagePulls: config.maxParallelImagePulls,
      records: pulledRecords,
    }),
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
    // Node allocatable enforced on the pods' cgroup (enforceNodeAllocatable: pods, the default).
    cgroups: new CgroupManager(cgroupRoot, (config.enforceNodeAllocatable as string[]).includes("pods") ? { memoryBytes: resources.podsMemoryLimitBytes, cpuMilli: resources.podsCpuMilli } : undefined),
    stats: new StatsCollector({
      cgroupRoot,
      nodefsPath: rootDir,
      imagefsPath: fs.existsSync(values["imagefs-path"]!) ? values["imagefs-path"]! : rootDir,
      allocatableMemoryBytes: node.allocatableMemoryBytes,
    }),
    statsIntervalMs: evictionIntervalMs,
    nodeIp,
    nodeIps: nodeIps.length > 1 ? nodeIps : undefined,
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
  loopRef = loop;
  await loop.start();
  pluginWatcher.start();
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
  imageCollector = startImageCollector({
    config, values, runtime, log, loop,
    nodeEvent: (type, reason, message) => cluster?.events.recordNode(type, reason, message),
    // Records of who pulled an image go with the image (upstream prunes them after each collection).
    onImagesPresent: (ids, listedAtMs) => pulledRecords.prune(ids, listedAtMs),
  });
  // The kernel's OOM kills: a SystemOOM node event for each outside the pods' cgroups, as upstream.
  const oomWatcher = new OomWatcher({
    log, stateFile: path.join(rootDir, "oom_watcher", "position"),
    onOom: (instance) => {
      const event = systemOomEvent(instance);
      log.log(event ? "warn" : "info", event ? "System OOM encountered" : "A container's memory limit killed a process", { process: instance.processName.slice(0, 64), pid: instance.pid, memcg: instance.victimContainerName.slice(0, 256) });
      if (event) cluster?.events.recordNode("Warning", event.reason, event.message);
    },
  });
  oomWatcher.start();
  // Graceful node shutdown: logind's lock and signals; the core stops the pods (host/node-shutdown).
  nodeShutdown = startNodeShutdown({
    log, delayMs: loop.nodeShutdownDelayMs, confDir: path.resolve(values["logind-conf-dir"]!),
    onShutdownEvent: (active) => {
      loop.nodeShutdown(active);
      if (active) cluster?.syncNodeStatus();
    },
    nodeEvent: (type, reason, message) => cluster?.events.recordNode(type, reason, message),
  });
  const server = await startControlSocket(path.join(rootDir, "nanolet.sock"), podTable);
  if (client && access) {
    cluster = new ClusterAgent({
      client, nodeName, log, loop, runtime, rootDir, nodeIps, providerId: config.providerID || undefined,
      reservations,
      extendedResources: () => devices.counts(),
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
    anonymous: config.authentication.anonymous.enabled, authorizationMode, nodeIp: nodeIps[0],
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
  // The static pods: the manifest directory's and, with --manifest-url, a web server's, as one set
  // once both have spoken (a URL that cannot be read counts as spoken, with what it served last).
  const staticPods = new StaticPodSets(config.staticPodURL ? ["file", "http"] : ["file"], (scan) => {
    if (cluster) cluster.setStaticPods(scan);
    else {
      loop.setPods(scan);
      loop.markSourcesReady();
    }
  });
  const urlSource = config.staticPodURL
    ? new UrlPodSource({
        url: config.staticPodURL, headers: config.staticPodURLHeader ?? {}, nodeName, log,
        periodMs: msOf(config.httpCheckFrequency),
        cacheFile: path.join(rootDir, "manifest-url", `${createHash("sha256").update(config.staticPodURL).digest("hex").slice(0, 16)}.last`),
        onScan: (scan) => staticPods.set("http", scan),
      })
    : undefined;
  urlSource?.start();
  const source = new StaticPodSource(
    manifestDir,
    nodeName,
    (scan) => staticPods.set("file", scan),
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
      urlSource?.stop();
      certificates?.stop();
      servingCertificates?.stop();
      cluster?.stop();
      objects?.stop();
      runtimeEvents.stop();
      imageCollector?.stop();
      nodeShutdown?.stop();
      runtimeClasses?.stop();
      pluginWatcher.stop();
      devices.stop();
      oomWatcher.stop();
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


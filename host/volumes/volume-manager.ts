// The mounting half of the kubelet's VolumeManager (the core decides when): each volume of a pod
// set up under `<root-dir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>` as upstream lays it
// out, the CRI mounts of a container (readOnly, subPath, subPathExpr, propagation), the tear-down
// of a stopped pod, and the clean-up of directories whose pod is gone.
import fs from "node:fs";
import path from "node:path";
import type { ApiClient } from "../cluster/api-client.js";
import { ApiStatusError } from "../cluster/api-client.js";
import type { CriMount } from "../cri/runtime.js";
import { expand, quantityValue, type PodFacts } from "../env/container-env.js";
import type { Logger } from "../common/log.js";
import { pathUnder, safeComponent } from "../common/safe-path.js";
import { descendingPathProblem } from "../sources/volume-fields.js";
import { writeAtomically, type Payload } from "./atomic-writer.js";
import { mountTmpfs, mountsUnder, removeUnmountedTree, unmountAll } from "./mounts.js";
import { VolumeMountError } from "./volume-errors.js";
import { bindSubPath, cleanSubPaths, safeMakeDir, type SubPathMount } from "./subpath.js";
import { applyFsGroup, diskUsageBytes } from "./volume-ownership.js";
import { checkHostPath } from "./host-path.js";
import type { ObjectGetter } from "./object-store.js";
import { DEFAULT_FILE_MODE, VolumeSetUpError, downwardPayload, objectPayload, projectedPayload } from "./payloads.js";
import type { TokenManager } from "./token-manager.js";
import { ephemeralVolumeHandle, type CsiDrivers, type CsiVolumeSource } from "../csi/csi-drivers.js";

export { applyFsGroup, diskUsageBytes } from "./volume-ownership.js";
export { checkHostPath } from "./host-path.js";
export { VolumeMountError } from "./volume-errors.js";

export const VOLUMES_DIR = "volumes";
/** upstream's plugin directory names (`kubernetes.io~<plugin>`), by volume field. */
export const PLUGIN_DIRS: Record<string, string> = {
  emptyDir: "kubernetes.io~empty-dir",
  configMap: "kubernetes.io~configmap",
  secret: "kubernetes.io~secret",
  downwardAPI: "kubernetes.io~downward-api",
  projected: "kubernetes.io~projected",
};
/** Types whose files the kubelet owns: mounted read-only into containers (upstream attributes). */
const READ_ONLY_TYPES = new Set(["configMap", "secret", "downwardAPI", "projected"]);
const PROPAGATION: Record<string, CriMount["propagation"]> = { None: "private", HostToContainer: "host-to-container", Bidirectional: "bidirectional" };

export interface VolumeManagerOptions {
  /** `<root-dir>/pods`. */
  podsDir: string;
  log: Logger;
  /** ConfigMaps and Secrets; absent without an apiserver. */
  objects?: ObjectGetter;
  tokens?: TokenManager;
  /** PersistentVolumeClaims and PersistentVolumes; absent without an apiserver. */
  client?: ApiClient;
  /** The CSI drivers registered on the node; absent: CSI volumes fail to set up. */
  csi?: CsiDrivers;
  /** The node's allocatable memory, the largest a memory-backed emptyDir may be. */
  allocatableMemoryBytes?: () => number;
}

type VolumeObject = Record<string, any>;

function volumeType(volume: VolumeObject): string {
  return Object.keys(volume).find((k) => k !== "name" && volume[k] !== null && volume[k] !== undefined) ?? "";
}

/** The pod's memory limit as upstream's PodLimits sums it (0 when no container has one). */
function podMemoryLimitBytes(facts: PodFacts): number {
  let sum = 0;
  for (const c of facts.containers) {
    const limit = c.limits.find((q) => q.name === "memory");
    if (limit) sum += quantityValue(limit.quantity) || 0;
  }
  return sum;
}

export class VolumeManager {
  /** The emptyDirs with a sizeLimit that are set up, by pod uid then volume name: their directories. */
  private limited = new Map<string, Map<string, string>>();
  /** Where a hostPath or claim volume is on the node, by pod uid then volume name. */
  private resolved = new Map<string, Map<string, { hostPath: string; readOnly: boolean }>>();

  constructor(private options: VolumeManagerOptions) {}

  /** `<root-dir>/pods/<uid>/volumes`. */
  volumesDir(uid: string): string {
    if (!safeComponent(uid)) throw new VolumeSetUpError(`pod uid ${JSON.stringify(uid)} cannot name a directory`);
    return path.join(pathUnder(this.options.podsDir, uid), VOLUMES_DIR);
  }

  private pluginDir(uid: string, type: string, name: string): string {
    if (!safeComponent(name)) throw new VolumeSetUpError(`volume name ${JSON.stringify(name)} cannot name a directory`);
    return path.join(this.volumesDir(uid), PLUGIN_DIRS[type], name);
  }

  /** Sets up (or refreshes) the named volumes of the pod, in order; the first failure throws with upstream's event words. */
  async setUp(facts: PodFacts, names: string[]): Promise<void> {
    const volumes: VolumeObject[] = Array.isArray(facts.spec?.volumes) ? facts.spec!.volumes : [];
    for (const name of names) {
      const volume = volumes.find((v) => v?.name === name);
      try {
        if (!volume) throw new VolumeSetUpError("the pod has no such volume");
        await this.setUpOne(facts, volume);
      } catch (error) {
        const reason = error instanceof VolumeSetUpError || error instanceof ApiStatusError ? error.message : (error as Error).message;
        throw new VolumeSetUpError(`MountVolume.SetUp failed for volume "${name}" : ${reason}`);
      }
    }
  }

  private async setUpOne(facts: PodFacts, volume: VolumeObject): Promise<void> {
    const type = volumeType(volume);
    const source = volume[type] ?? {};
    const fsGroup = typeof facts.spec?.securityContext?.fsGroup === "number" ? facts.spec.securityContext.fsGroup : undefined;
    switch (type) {
      case "emptyDir":
        return this.setUpEmptyDir(facts, volume.name, source, fsGroup);
      case "hostPath":
        this.remember(facts.uid, volume.name, checkHostPath(String(source.path), String(source.type ?? "")), false);
        return;
      case "configMap":
      case "secret":
      case "downwardAPI":
      case "projected": {
        const dir = this.pluginDir(facts.uid, type, volume.name);
        // Secrets, the downward API and projections (tokens) live in memory, as upstream's wrappers
        // put them: a memory-backed emptyDir, sized as one without a sizeLimit.
        if (type !== "configMap") mountTmpfs(dir, this.memoryVolumeBytes(facts, undefined));
        else fs.mkdirSync(dir, { recursive: true });
        prepareVolumeRoot(dir, fsGroup, type !== "configMap");
        const payload = await this.payloadOf(facts, type, source);
        const changed = writeAtomically(dir, payload, { gid: fsGroup, readOnly: true });
        if (changed) this.options.log.log("debug", "Volume files written", { pod: `${facts.namespace}/${facts.name}`, volume: volume.name, files: payload.size });
        return;
      }
      case "persistentVolumeClaim": {
        const { hostPath, readOnly, csi } = await this.claimPath(facts.namespace, String(source.claimName));
        const ro = readOnly || source.readOnly === true;
        if (csi) {
          const target = await this.csiDrivers().setUp(path.dirname(this.volumesDir(facts.uid)), volume.name, { ...csi, readOnly: ro || csi.readOnly });
          this.remember(facts.uid, volume.name, target, ro);
          return;
        }
        this.remember(facts.uid, volume.name, hostPath, ro);
        return;
      }
      case "csi": {
        // An inline ephemeral volume: its handle made from the pod and the volume, as upstream's.
        const attributes: Record<string, string> = { ...(source.volumeAttributes ?? {}), "csi.storage.k8s.io/ephemeral": "true" };
        const target = await this.csiDrivers().setUp(path.dirname(this.volumesDir(facts.uid)), volume.name, {
          driver: String(source.driver), volumeHandle: ephemeralVolumeHandle(facts.uid, volume.name), readOnly: source.readOnly === true,
          fsType: String(source.fsType ?? ""), volumeContext: attributes, persistent: false,
        });
        this.remember(facts.uid, volume.name, target, source.readOnly === true);
        return;
      }
      default:
        throw new VolumeSetUpError(`volume type ${JSON.stringify(type)} is not supported by nanolet`);
    }
  }

  private remember(uid: string, name: string, hostPath: string, readOnly: boolean): void {
    let pod = this.resolved.get(uid);
    if (!pod) this.resolved.set(uid, (pod = new Map()));
    pod.set(name, { hostPath, readOnly });
  }

  private async payloadOf(facts: PodFacts, type: string, source: VolumeObject): Promise<Payload> {
    const defaultMode = typeof source.defaultMode === "number" ? source.defaultMode : DEFAULT_FILE_MODE;
    const { objects, tokens } = this.options;
    if (type === "projected") return projectedPayload(source, defaultMode, facts, objects, tokens);
    const payload: Payload = new Map();
    if (type === "downwardAPI") downwardPayload(source.items, facts, defaultMode, payload);
    else await objectPayload(objects, type === "configMap" ? "configmaps" : "secrets", facts.namespace, source, defaultMode, payload);
    return payload;
  }

  /** upstream calculateEmptyDirMemorySize: allocatable, else the pod's limit, else a smaller sizeLimit. */
  private memoryVolumeBytes(facts: PodFacts, sizeLimitQuantity: unknown): number {
    let size = this.options.allocatableMemoryBytes?.() ?? 0;
    const podLimit = podMemoryLimitBytes(facts);
    if (podLimit > 0) size = podLimit;
    const sizeLimit = sizeLimitQuantity === undefined || sizeLimitQuantity === null ? NaN : quantityValue(String(sizeLimitQuantity));
    if (sizeLimit > 0 && (size === 0 || sizeLimit < size)) size = sizeLimit;
    return size;
  }

  private setUpEmptyDir(facts: PodFacts, name: string, source: VolumeObject, fsGroup: number | undefined): void {
    const dir = this.pluginDir(facts.uid, "emptyDir", name);
    if (source.medium === "Memory") {
      mountTmpfs(dir, this.memoryVolumeBytes(facts, source.sizeLimit));
    } else {
      fs.mkdirSync(dir, { recursive: true });
    }
    prepareVolumeRoot(dir, fsGroup, source.medium === "Memory");
    if (source.sizeLimit !== undefined && source.sizeLimit !== null) {
      let pod = this.limited.get(facts.uid);
      if (!pod) this.limited.set(facts.uid, (pod = new Map()));
      pod.set(name, dir);
    }
    if (fsGroup !== undefined) applyFsGroup(dir, fsGroup, String(facts.spec?.securityContext?.fsGroupChangePolicy ?? "Always"));
  }

  private csiDrivers(): CsiDrivers {
    if (!this.options.csi) throw new VolumeSetUpError("this node has no CSI plugin directory");
    return this.options.csi;
  }

  /** Unpublishes the pod's CSI volumes through their drivers (before the unmount sweep). */
  async tearDownCsi(uid: string): Promise<void> {
    await this.options.csi?.tearDownPod(path.dirname(this.volumesDir(uid)));
  }

  /** A claim's PersistentVolume on this node: `local`, `hostPath`, or a CSI driver's. */
  private async claimPath(namespace: string, claimName: string): Promise<{ hostPath: string; readOnly: boolean; csi?: CsiVolumeSource }> {
    const client = this.options.client;
    if (!client) throw new VolumeSetUpError(`cannot get persistentvolumeclaim "${claimName}": this node has no apiserver`);
    let claim: any;
    try {
      claim = await client.request("GET", `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(claimName)}`);
    } catch (error) {
      if (error instanceof ApiStatusError && error.code === 404) throw new VolumeSetUpError(`persistentvolumeclaim "${claimName}" not found`);
      throw error;
    }
    const volumeName = claim?.spec?.volumeName;
    if (claim?.status?.phase !== "Bound" || typeof volumeName !== "string" || !volumeName) {
      throw new VolumeSetUpError(`error processing PVC ${namespace}/${claimName}: PVC is not bound`);
    }
    const pv = await client.request("GET", `/api/v1/persistentvolumes/${encodeURIComponent(volumeName)}`);
    const modes: string[] = pv?.spec?.accessModes ?? [];
    const csi = pv?.spec?.csi;
    if (csi && typeof csi.driver === "string" && typeof csi.volumeHandle === "string") {
      return { hostPath: "", readOnly: false, csi: {
        driver: csi.driver, volumeHandle: csi.volumeHandle, readOnly: csi.readOnly === true || (modes.length > 0 && modes.every((m) => m === "ReadOnlyMany")),
        fsType: String(csi.fsType ?? ""), volumeContext: csi.volumeAttributes ?? {}, persistent: true,
      } };
    }
    const local = pv?.spec?.local?.path ?? pv?.spec?.hostPath?.path;
    if (typeof local !== "string" || !local.startsWith("/")) {
      throw new VolumeSetUpError(`persistentvolume "${volumeName}" is neither local nor hostPath: nanolet has no driver for it`);
    }
    if (pv?.spec?.hostPath) checkHostPath(local, String(pv.spec.hostPath.type ?? ""));
    else if (!fs.existsSync(local)) throw new VolumeSetUpError(`path "${local}" does not exist`);
    return { hostPath: local, readOnly: modes.length > 0 && modes.every((m) => m === "ReadOnlyMany") };
  }

  /** Where volume `name` of the pod is on the node, with whether it is read-only by nature. */
  private sourceOf(facts: PodFacts, name: string): { hostPath: string; readOnly: boolean } {
    const volumes: VolumeObject[] = Array.isArray(facts.spec?.volumes) ? facts.spec!.volumes : [];
    const volume = volumes.find((v) => v?.name === name);
    if (!volume) throw new VolumeMountError(`cannot find volume "${name}" to mount into container`);
    const type = volumeType(volume);
    if (PLUGIN_DIRS[type]) return { hostPath: this.pluginDir(facts.uid, type, name), readOnly: READ_ONLY_TYPES.has(type) };
    const known = this.resolved.get(facts.uid)?.get(name);
    if (known) return known;
    if (type === "hostPath") return { hostPath: String(volume.hostPath.path), readOnly: false };
    throw new VolumeMountError(`volume "${name}" is not set up`);
  }

  /** The CRI mounts of one container (upstream makeMounts); `env` expands subPathExpr. */
  mountsFor(facts: PodFacts, containerName: string, env: { name: string; value: string }[]): CriMount[] {
    const spec = facts.spec ?? {};
    const raw = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].find((c: VolumeObject) => c?.name === containerName);
    const mounts: VolumeObject[] = Array.isArray(raw?.volumeMounts) ? raw.volumeMounts : [];
    const values = new Map(env.map((e) => [e.name, e.value]));
    return mounts.map((m, index) => {
      const source = this.sourceOf(facts, String(m.name));
      let hostPath = source.hostPath;
      const subPath = m.subPathExpr ? expand(String(m.subPathExpr), (n) => values.get(n)) : String(m.subPath ?? "");
      if (subPath) hostPath = this.subPathOf(facts, { volumePath: hostPath, subPath, volumeName: String(m.name), containerName, mountIndex: index });
      return {
        containerPath: String(m.mountPath),
        hostPath,
        readonly: m.readOnly === true || source.readOnly,
        propagation: PROPAGATION[String(m.mountPropagation ?? "None")] ?? "private",
      };
    });
  }

  /**
   * A subPath inside its volume, as upstream makes it: missing directories made safely with the
   * volume's mode, then the opened path bind-mounted at a private target, which is what the
   * runtime mounts. The pod's error says which mount failed; the log says why (upstream keeps
   * host paths out of what the pod's status shows).
   */
  private subPathOf(facts: PodFacts, request: Omit<SubPathMount, "podDir">): string {
    const { volumeName, containerName, subPath } = request;
    const problem = descendingPathProblem(subPath);
    if (problem) throw new VolumeMountError(`failed to prepare subPath for volumeMount "${volumeName}" of container "${containerName}": subPath "${subPath}" ${problem}`);
    const pod = `${facts.namespace}/${facts.name}`;
    const full = path.join(request.volumePath, subPath);
    let exists = true;
    try {
      fs.statSync(full);
    } catch {
      exists = false;
    }
    if (!exists) {
      try {
        safeMakeDir(request.volumePath, subPath, fs.statSync(request.volumePath).mode & 0o7777);
      } catch (error) {
        this.options.log.log("warn", "Failed to create subPath directory for volumeMount of the container", { pod, container: containerName, volume: volumeName, error: (error as Error).message });
        throw new VolumeMountError(`failed to create subPath directory for volumeMount "${volumeName}" of container "${containerName}"`);
      }
    }
    try {
      return bindSubPath({ ...request, podDir: path.dirname(this.volumesDir(facts.uid)) });
    } catch (error) {
      this.options.log.log("warn", "Failed to prepare subPath for volumeMount of the container", { pod, container: containerName, volume: volumeName, error: (error as Error).message });
      throw new VolumeMountError(`failed to prepare subPath for volumeMount "${volumeName}" of container "${containerName}"`);
    }
  }

  /** Unmounts and removes every volume of pod `uid` (its containers have stopped). */
  tearDown(uid: string): void {
    this.resolved.delete(uid);
    this.limited.delete(uid);
    const dir = this.volumesDir(uid);
    // The subPath binds first: they may lead into these volumes (or a hostPath) and nothing
    // below may be removed while one is mounted.
    cleanSubPaths(path.dirname(dir));
    unmountAll(dir);
    removeUnmountedTree(dir);
  }

  /**
   * Pod directories whose pod is neither desired nor in the runtime (upstream
   * cleanupOrphanedPodDirs): their volumes are torn down and the directory removed. Returns the
   * uids cleaned.
   */
  cleanupOrphans(keep: ReadonlySet<string>): string[] {
    let entries: string[];
    try {
      entries = fs.readdirSync(this.options.podsDir);
    } catch {
      return [];
    }
    const cleaned: string[] = [];
    for (const uid of entries) {
      if (keep.has(uid) || !safeComponent(uid)) continue;
      try {
        this.tearDown(uid);
        removeUnmountedTree(pathUnder(this.options.podsDir, uid));
        cleaned.push(uid);
      } catch (error) {
        this.options.log.log("warn", "Could not clean up an orphaned pod directory", { uid, error: (error as Error).message });
      }
    }
    return cleaned;
  }

  /**
   * What each set-up emptyDir with a sizeLimit holds (upstream measures them for its local
   * storage eviction): a tmpfs by its used blocks, a directory by its files' allocated blocks.
   */
  emptyDirUsage(): { podUid: string; volume: string; usedBytes: bigint }[] {
    const out: { podUid: string; volume: string; usedBytes: bigint }[] = [];
    for (const [podUid, volumes] of this.limited) {
      for (const [volume, dir] of volumes) {
        try {
          out.push({ podUid, volume, usedBytes: BigInt(diskUsageBytes(dir)) });
        } catch (error) {
          this.options.log.log("warn", "Could not measure an emptyDir", { uid: podUid, volume, error: (error as Error).message });
        }
      }
    }
    return out;
  }

  /** Mount points left under the pods directory (tests: nothing of a stopped pod stays mounted). */
  mountsLeft(uid?: string): string[] {
    return mountsUnder(uid ? pathUnder(this.options.podsDir, uid) : this.options.podsDir);
  }
}

/**
 * A volume's own directory as upstream's emptyDir (which every file-backed type wraps) leaves it:
 * anyone in the pod may write (0777 on disk; a tmpfs root keeps its sticky bit, 1777); with
 * fsGroup the group owns it and new files inherit it (setgid).
 */
function prepareVolumeRoot(dir: string, fsGroup: number | undefined, tmpfs: boolean): void {
  const mode = (tmpfs ? 0o1777 : 0o777) | (fsGroup !== undefined ? 0o2000 : 0);
  if (fsGroup !== undefined) fs.chownSync(dir, -1, fsGroup);
  fs.chmodSync(dir, mode);
}

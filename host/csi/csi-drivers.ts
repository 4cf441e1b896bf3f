// The CSI drivers registered on the node (through the plugin watcher) and the volume work done
// with them, laid out as upstream's CSI plugin lays it out: a pod's volume published at
// `<root>/pods/<uid>/volumes/kubernetes.io~csi/<volume>/mount` with `vol_data.json` beside it, a
// PersistentVolume staged at `<root>/plugins/kubernetes.io/csi/<driver>/<sha256 of its handle>/globalmount`.
// Each registered driver is listed in the node's CSINode.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { ApiClient } from "../cluster/api-client.js";
import { ApiStatusError } from "../cluster/api-client.js";
import type { Logger } from "../common/log.js";
import { printable } from "../common/log.js";
import { readBoundedText } from "../files/bounded-file.js";
import type { PluginHandler, PluginInfo } from "../devices/plugin-watcher.js";
import { CsiClient, type NodeInfo } from "./csi-client.js";

export const CSI_PLUGIN_DIR = "kubernetes.io~csi";
const VOL_DATA = "vol_data.json";
/** Drivers on one node: a local writer cannot grow the agent past this. */
const MAX_DRIVERS = 32;

interface Driver {
  name: string;
  client: CsiClient;
  info: NodeInfo;
  stages: boolean;
}

export interface CsiDriversOptions {
  rootDir: string;
  nodeName: string;
  log: Logger;
  /** The apiserver, for the CSINode; absent on a node without one. */
  client?: ApiClient;
}

/** What a pod's CSI volume is set up from. */
export interface CsiVolumeSource {
  driver: string;
  volumeHandle: string;
  readOnly: boolean;
  fsType: string;
  volumeContext: Record<string, string>;
  /** PersistentVolume volumes are staged first when the driver stages. */
  persistent: boolean;
}

/** upstream's handle of an inline ephemeral volume: `csi-` and the sha256 of pod uid and volume name. */
export function ephemeralVolumeHandle(podUid: string, volumeName: string): string {
  return `csi-${crypto.createHash("sha256").update(`${podUid}${volumeName}`).digest("hex")}`;
}

export class CsiDrivers implements PluginHandler {
  private drivers = new Map<string, Driver>();

  constructor(private options: CsiDriversOptions) {}

  async register(info: PluginInfo, socket: string): Promise<string> {
    if (!(info.supportedVersions ?? []).some((v) => /^v?1(\.\d+){0,2}$/.test(v))) {
      return `none of the CSI versions ${JSON.stringify((info.supportedVersions ?? []).slice(0, 8))} is supported (1.x)`;
    }
    const name = String(info.name ?? "");
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 63) return `the CSI driver name ${JSON.stringify(printable(name, 64))} is invalid`;
    if (!this.drivers.has(name) && this.drivers.size >= MAX_DRIVERS) return `more than ${MAX_DRIVERS} CSI drivers`;
    const client = new CsiClient(socket);
    try {
      const nodeInfo = await client.nodeGetInfo();
      if (!nodeInfo.nodeId) throw new Error("NodeGetInfo answered no node_id");
      const stages = await client.stagesVolumes();
      this.drivers.get(name)?.client.close();
      this.drivers.set(name, { name, client, info: nodeInfo, stages });
    } catch (error) {
      client.close();
      return `error during CSI driver registration: ${printable((error as Error).message, 256)}`;
    }
    this.options.log.log("info", "Registered CSI driver", { driver: name, endpoint: socket });
    await this.updateCsiNode();
    return "";
  }

  unregister(name: string): void {
    const driver = this.drivers.get(name);
    if (!driver) return;
    driver.client.close();
    this.drivers.delete(name);
    this.options.log.log("info", "Unregistered CSI driver", { driver: name });
    void this.updateCsiNode();
  }

  names(): string[] {
    return [...this.drivers.keys()].sort();
  }

  private driver(name: string): Driver {
    const driver = this.drivers.get(name);
    if (!driver) throw new Error(`kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name ${printable(name, 64)} not found in the list of registered CSI drivers`);
    return driver;
  }

  /** Publishes the volume for the pod; returns where it is on the node. */
  async setUp(podDir: string, volumeName: string, source: CsiVolumeSource): Promise<string> {
    const driver = this.driver(source.driver);
    const volumeDir = path.join(podDir, "volumes", CSI_PLUGIN_DIR, volumeName);
    const targetPath = path.join(volumeDir, "mount");
    fs.mkdirSync(volumeDir, { recursive: true, mode: 0o750 });
    fs.writeFileSync(path.join(volumeDir, VOL_DATA), JSON.stringify({
      driverName: source.driver, volumeHandle: source.volumeHandle, specVolID: volumeName, nodeName: this.options.nodeName,
      volumeLifecycleMode: source.persistent ? "Persistent" : "Ephemeral", attachmentID: "",
    }), { mode: 0o640 });
    let stagingTargetPath: string | undefined;
    if (source.persistent && driver.stages) {
      stagingTargetPath = this.stagingPath(source.driver, source.volumeHandle);
      fs.mkdirSync(path.dirname(stagingTargetPath), { recursive: true, mode: 0o750 });
      await driver.client.stage({ volumeId: source.volumeHandle, targetPath: "", stagingTargetPath, readonly: source.readOnly, fsType: source.fsType, volumeContext: source.volumeContext });
    }
    await driver.client.publish({ volumeId: source.volumeHandle, targetPath, stagingTargetPath, readonly: source.readOnly, fsType: source.fsType, volumeContext: source.volumeContext });
    return targetPath;
  }

  private stagingPath(driver: string, volumeHandle: string): string {
    const digest = crypto.createHash("sha256").update(volumeHandle).digest("hex");
    return path.join(this.options.rootDir, "plugins", "kubernetes.io", "csi", driver, digest, "globalmount");
  }

  /** Unpublishes (and unstages) every CSI volume of the pod directory; the first failure throws. */
  async tearDownPod(podDir: string): Promise<void> {
    const base = path.join(podDir, "volumes", CSI_PLUGIN_DIR);
    let names: string[] = [];
    try {
      names = fs.readdirSync(base);
    } catch {
      return;
    }
    for (const volumeName of names) {
      const volumeDir = path.join(base, volumeName);
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(readBoundedText(path.join(volumeDir, VOL_DATA), 64 * 1024));
      } catch {
        continue; // not published by nanolet (or already gone): the unmount sweep handles what is left
      }
      const driverName = String(data.driverName ?? "");
      const handle = String(data.volumeHandle ?? "");
      const driver = this.driver(driverName);
      await driver.client.unpublish(handle, path.join(volumeDir, "mount"));
      if (data.volumeLifecycleMode === "Persistent" && driver.stages) await driver.client.unstage(handle, this.stagingPath(driverName, handle));
      // What the driver left (an empty target) goes with the pod's volumes in the unmount sweep.
      fs.rmSync(path.join(volumeDir, VOL_DATA), { force: true });
    }
  }

  /** The CSINode's drivers: every registered one with its node ID and topology keys. */
  private async updateCsiNode(): Promise<void> {
    const client = this.options.client;
    if (!client) return;
    const name = this.options.nodeName;
    const drivers = [...this.drivers.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((d) => ({
      name: d.name, nodeID: d.info.nodeId, topologyKeys: Object.keys(d.info.topologySegments).sort(),
      ...(d.info.maxVolumesPerNode > 0 ? { allocatable: { count: d.info.maxVolumesPerNode } } : {}),
    }));
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const current = await client.request("GET", `/apis/storage.k8s.io/v1/csinodes/${encodeURIComponent(name)}`);
        await client.request("PUT", `/apis/storage.k8s.io/v1/csinodes/${encodeURIComponent(name)}`, { ...current, spec: { drivers } });
        return;
      } catch (error) {
        // 409: someone else wrote it between the read and the write; read again. 404: not made yet.
        if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) {
          await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
          continue;
        }
        this.options.log.log("warn", "CSINode not updated", { node: name, error: printable((error as Error).message, 256) });
        return;
      }
    }
  }
}

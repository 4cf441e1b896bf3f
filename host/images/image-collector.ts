// The image garbage collector's eyes and hands (upstream's realImageGCManager runs every 5
// minutes): it lists the runtime's images and containers, remembers when it first saw each image
// and when a container last used it, measures the image filesystem (CRI ImageFsInfo's mount
// point, statfs), asks the core which images go (WIT image-gc `plan`), and removes them. When
// it cannot free enough it says so with upstream's node event, FreeDiskSpaceFailed.
import fs from "node:fs";
import type { Logger } from "../common/log.js";
import type { GcPlan } from "../core/types.js";
import { ImageGcRefusal, type ImageGcRequest } from "../core/core.js";
import type { Runtime } from "../cri/runtime.js";
import { ImageRecords, imagesInUse, type GcPolicyMs } from "./image-records.js";

/** Upstream's ImageGCPeriod. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;


export interface ImageCollectorOptions {
  runtime: Runtime;
  log: Logger;
  policy: GcPolicyMs;
  /** The core's decision (undefined while no core runs: the pass is skipped). */
  plan: (request: ImageGcRequest) => GcPlan | undefined;
  /** Images never removed besides those in use and pinned: the sandbox image (--pod-infra-container-image). */
  keepImages?: string[];
  /** A node event (upstream: FreeDiskSpaceFailed, InvalidDiskCapacity). */
  onNodeEvent?: (type: "Warning", reason: string, message: string) => void;
  /** After each pass: the IDs of the images left (pulled-image records of others are pruned). */
  onImagesPresent?: (ids: Set<string>, listedAtMs: number) => void;
  /** Capacity and free bytes of the filesystem at a path (statfs by default). */
  filesystem?: (mountpoint: string) => { capacityBytes: number; availableBytes: number };
  now?: () => number;
}

/** What one pass did. */
export interface ImageGcPass {
  removed: string[];
  freedBytes: number;
  bytesToFree: number;
  usagePercent: number;
}

function statfs(mountpoint: string): { capacityBytes: number; availableBytes: number } {
  const s = fs.statfsSync(mountpoint);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
}

export class ImageCollector {
  private readonly records = new ImageRecords();
  private readonly now: () => number;
  private readonly beganMs: number;
  private running?: Promise<ImageGcPass | undefined>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: ImageCollectorOptions) {
    this.now = options.now ?? Date.now;
    this.beganMs = this.now();
  }

  /** A pass now and every `periodMs` after (upstream: at start, then every 5 minutes). */
  start(periodMs = IMAGE_GC_PERIOD_MS): void {
    const tick = () => {
      this.collect()
        .catch((error) => this.options.log.log("warn", "Image garbage collection failed", { error: (error as Error).message }))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, periodMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * One pass; `reclaimAll` frees every eligible image (the eviction manager's reclaim under disk
   * pressure). Passes never overlap: a call during one gets that one's result.
   */
  collect(reclaimAll = false): Promise<ImageGcPass | undefined> {
    this.running ??= this.pass(reclaimAll).finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(reclaimAll: boolean): Promise<ImageGcPass | undefined> {
    const { runtime, log } = this.options;
    const nowMs = this.now();
    const [images, containers, filesystems] = await Promise.all([runtime.listImages(), runtime.listContainers({}), runtime.imageFsInfo()]);
    // The sandbox image is never removed: pinned by containerd 2.x, named by 1.x's config.
    const sandboxImage = await runtime.sandboxImage?.().catch(() => undefined);
    const keep = new Set([...(this.options.keepImages ?? []), ...(sandboxImage ? [sandboxImage] : [])]);
    const mountpoint = filesystems[0]?.mountpoint;
    const usage = mountpoint ? (this.options.filesystem ?? statfs)(mountpoint) : { capacityBytes: 0, availableBytes: 0 };
    const request = this.records.request(images, imagesInUse(containers), keep, usage, this.options.policy, nowMs, this.beganMs, reclaimAll);
    let plan: GcPlan | undefined;
    try {
      plan = this.options.plan(request);
    } catch (error) {
      if (!(error instanceof ImageGcRefusal)) throw error;
      log.log("error", "Image garbage collection failed", { error: error.message });
      if (request.capacityBytes === 0) this.options.onNodeEvent?.("Warning", "InvalidDiskCapacity", error.message);
      return undefined;
    }
    if (!plan) return undefined;
    const removed: string[] = [];
    let freedBytes = 0;
    const sizes = new Map(images.map((i) => [i.id, i.sizeBytes]));
    for (const [id, why] of [...plan.removeForAge.map((id) => [id, "max age"] as const), ...plan.removeForSpace.map((id) => [id, "space"] as const)]) {
      try {
        await runtime.removeImage(id);
        removed.push(id);
        freedBytes += why === "space" ? (sizes.get(id) ?? 0) : 0;
        this.records.forget(id);
        log.log("info", "Removing image to free bytes", { imageID: id, size: sizes.get(id) ?? 0, reason: why });
      } catch (error) {
        log.log("warn", "Image not removed", { imageID: id, error: (error as Error).message });
      }
    }
    const gone = new Set(removed);
    this.options.onImagesPresent?.(new Set(images.map((i) => i.id).filter((id) => !gone.has(id))), nowMs);
    const bytesToFree = Number(plan.bytesToFree);
    if (!reclaimAll && bytesToFree > 0 && freedBytes < bytesToFree) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${bytesToFree} bytes, but only found ${freedBytes} bytes eligible to free.`;
      log.log("warn", message, { usage: plan.usagePercent, highThreshold: this.options.policy.highThresholdPercent });
      this.options.onNodeEvent?.("Warning", "FreeDiskSpaceFailed", message);
    }
    return { removed, freedBytes, bytesToFree, usagePercent: plan.usagePercent };
  }
}

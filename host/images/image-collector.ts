// The image garbage collector's eyes and hands (upstream's realImageGCManager runs every 5
// minutes): it lists the runtime's images and containers, remembers when it first saw each image
// and when a container last used it, measures the image filesystem (CRI ImageFsInfo's mount
// point, statfs), asks the core which images go (WIT image-gc `plan`), and removes them. When
// it cannot free enough it says so with upstream's node event, FreeDiskSpaceFailed.
import fs from "node:fs";
import type { Logger } from "../common/log.js";
import type { GcPlan } from "../core/types.js";
import { ImageGcRefusal, type ImageGcRequest } from "../core/core.js";
import type { ImageInfo, Runtime } from "../cri/runtime.js";

/** Upstream's ImageGCPeriod. */
export const IMAGE_GC_PERIOD_MS = 5 * 60_000;

export interface ImageGcPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minimumAgeMs: number;
  maximumAgeMs: number;
}

export interface ImageCollectorOptions {
  runtime: Runtime;
  log: Logger;
  policy: ImageGcPolicy;
  /** The core's decision (undefined while no core runs: the pass is skipped). */
  plan: (request: ImageGcRequest) => GcPlan | undefined;
  /** Images never removed besides those in use and pinned: the sandbox image (--pod-infra-container-image). */
  keepImages?: string[];
  /** A node event (upstream: FreeDiskSpaceFailed, InvalidDiskCapacity). */
  onNodeEvent?: (type: "Warning", reason: string, message: string) => void;
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
  /** By image ID: when first seen and last used (ms); forgotten when the image is gone. */
  private readonly records = new Map<string, { firstDetectedMs: number; lastUsedMs: number }>();
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
    const used = new Set<string>();
    for (const c of containers) {
      if (c.imageRef) used.add(c.imageRef);
      if (c.image) used.add(c.image);
    }
    // The sandbox image is never removed: pinned by containerd 2.x, named by 1.x's config.
    const sandboxImage = await runtime.sandboxImage?.().catch(() => undefined);
    const keep = new Set([...(this.options.keepImages ?? []), ...(sandboxImage ? [sandboxImage] : [])]);
    const request: ImageGcRequest = {
      images: images.map((image) => this.observe(image, nowMs, used)).map(({ image, record }) => ({
        id: image.id, sizeBytes: image.sizeBytes, inUse: this.named(image, used), pinned: image.pinned === true || this.named(image, keep),
        firstDetectedMs: record.firstDetectedMs, lastUsedMs: record.lastUsedMs,
      })),
      capacityBytes: 0,
      availableBytes: 0,
      policy: this.options.policy,
      nowMs,
      beganMs: this.beganMs,
      reclaimAll,
    };
    for (const id of this.records.keys()) if (!images.some((i) => i.id === id)) this.records.delete(id);
    const mountpoint = filesystems[0]?.mountpoint;
    if (mountpoint) Object.assign(request, (this.options.filesystem ?? statfs)(mountpoint));
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
        this.records.delete(id);
        log.log("info", "Removing image to free bytes", { imageID: id, size: sizes.get(id) ?? 0, reason: why });
      } catch (error) {
        log.log("warn", "Image not removed", { imageID: id, error: (error as Error).message });
      }
    }
    const bytesToFree = Number(plan.bytesToFree);
    if (!reclaimAll && bytesToFree > 0 && freedBytes < bytesToFree) {
      const message = `Failed to garbage collect required amount of images. Attempted to free ${bytesToFree} bytes, but only found ${freedBytes} bytes eligible to free.`;
      log.log("warn", message, { usage: plan.usagePercent, highThreshold: this.options.policy.highThresholdPercent });
      this.options.onNodeEvent?.("Warning", "FreeDiskSpaceFailed", message);
    }
    return { removed, freedBytes, bytesToFree, usagePercent: plan.usagePercent };
  }

  /** The image's record, made on first sight; its last use moves to now while a container uses it. */
  private observe(image: ImageInfo, nowMs: number, used: Set<string>) {
    let record = this.records.get(image.id);
    if (!record) this.records.set(image.id, (record = { firstDetectedMs: nowMs, lastUsedMs: nowMs }));
    if (this.named(image, used)) record.lastUsedMs = nowMs;
    return { image, record };
  }

  /** Whether the image is in `names` by its ID, a tag or a digest. */
  private named(image: ImageInfo, names: Set<string>): boolean {
    return names.has(image.id) || image.repoTags.some((t) => names.has(t)) || image.repoDigests.some((d) => names.has(d));
  }
}

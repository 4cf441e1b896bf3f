// What the image collector remembers between passes, as upstream's image GC manager does: when it
// first saw each image and when a container last used it; and how one pass's request to the
// core is made from the runtime's lists. Synchronous, so that the host's collector and the
// simulator's make the same requests from the same lists.
import type { ImageGcRequest } from "../core/core.js";
import type { ImageInfo } from "../cri/runtime.js";

export interface GcPolicyMs {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minimumAgeMs: number;
  maximumAgeMs: number;
}

/** The images containers use, by every name a container gives (its image and its image's ID). */
export function imagesInUse(containers: { image: string; imageRef?: string }[]): Set<string> {
  const used = new Set<string>();
  for (const c of containers) {
    if (c.imageRef) used.add(c.imageRef);
    if (c.image) used.add(c.image);
  }
  return used;
}

/** Whether the image is in `names` by its ID, a tag or a digest. */
export function imageNamed(image: ImageInfo, names: Set<string>): boolean {
  return names.has(image.id) || image.repoTags.some((t) => names.has(t)) || image.repoDigests.some((d) => names.has(d));
}

export class ImageRecords {
  /** By image ID, forgotten when the image is gone. */
  private readonly records = new Map<string, { firstDetectedMs: number; lastUsedMs: number }>();

  /**
   * The request of one pass at `nowMs`: each image's record made on first sight, its last use
   * moved to now while a container (`used`) has it; `keep` names images never removed.
   */
  request(images: ImageInfo[], used: Set<string>, keep: Set<string>, fs: { capacityBytes: number; availableBytes: number }, policy: GcPolicyMs, nowMs: number, beganMs: number, reclaimAll: boolean): ImageGcRequest {
    const present = new Set(images.map((i) => i.id));
    for (const id of [...this.records.keys()]) if (!present.has(id)) this.records.delete(id);
    return {
      images: images.map((image) => {
        let record = this.records.get(image.id);
        if (!record) this.records.set(image.id, (record = { firstDetectedMs: nowMs, lastUsedMs: nowMs }));
        const inUse = imageNamed(image, used);
        if (inUse) record.lastUsedMs = nowMs;
        return { id: image.id, sizeBytes: image.sizeBytes, inUse, pinned: image.pinned === true || imageNamed(image, keep), firstDetectedMs: record.firstDetectedMs, lastUsedMs: record.lastUsedMs };
      }),
      capacityBytes: fs.capacityBytes,
      availableBytes: fs.availableBytes,
      policy,
      nowMs,
      beganMs,
      reclaimAll,
    };
  }

  /** An image removed: its record goes. */
  forget(id: string): void {
    this.records.delete(id);
  }
}

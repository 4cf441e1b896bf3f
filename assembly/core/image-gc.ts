// Which images the image garbage collector removes (upstream's realImageGCManager): unused,
// unpinned images in least-recently-used order (ties: first detected earlier), first those
// unused past the maximum age, then, when the image filesystem is at or over the high threshold,
// enough of the rest to bring it down to the low one, skipping any seen less than the minimum
// age ago. The host measures and removes; this decides.

export class GcImage {
  id: string = "";
  sizeBytes: u64 = 0;
  inUse: bool = false;
  pinned: bool = false;
  firstDetectedMs: u64 = 0;
  lastUsedMs: u64 = 0;
}

export class GcPolicy {
  highThresholdPercent: u32 = 85;
  lowThresholdPercent: u32 = 80;
  minimumAgeMs: u64 = 120_000;
  maximumAgeMs: u64 = 0;
}

export class GcPlan {
  removeForAge: string[] = [];
  removeForSpace: string[] = [];
  usagePercent: u32 = 0;
  bytesToFree: u64 = 0;
  bytesFreed: u64 = 0;
  /// Non-empty: the input was refused (upstream's words where it has them).
  error: string = "";
}

function evictionOrder(a: GcImage, b: GcImage): i32 {
  if (a.lastUsedMs != b.lastUsedMs) return a.lastUsedMs < b.lastUsedMs ? -1 : 1;
  if (a.firstDetectedMs != b.firstDetectedMs) return a.firstDetectedMs < b.firstDetectedMs ? -1 : 1;
  // Equal times: by ID, so that the same input always gives the same plan.
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function refused(message: string): GcPlan {
  const plan = new GcPlan();
  plan.error = message;
  return plan;
}

export function planImageGc(images: GcImage[], capacityBytes: u64, availableBytes: u64, policy: GcPolicy, nowMs: u64, beganMs: u64, reclaimAll: bool): GcPlan {
  if (policy.highThresholdPercent > 100) return refused("policy.high-threshold-percent: must be between 0 and 100, inclusive");
  if (policy.lowThresholdPercent >= policy.highThresholdPercent) return refused("policy.low-threshold-percent: must be less than policy.high-threshold-percent");
  const seen = new Set<string>();
  const candidates: GcImage[] = [];
  for (let i = 0; i < images.length; i++) {
    const image = images[i];
    if (image.id.length == 0) return refused("images[" + i.toString() + "].id: Required value");
    if (seen.has(image.id)) return refused("images[" + i.toString() + "].id: Duplicate value: \"" + image.id + "\"");
    seen.add(image.id);
    if (!image.inUse && !image.pinned) candidates.push(image);
  }
  if (capacityBytes == 0) return refused("invalid capacity 0 on image filesystem");
  candidates.sort(evictionOrder);

  const plan = new GcPlan();
  let available = availableBytes > capacityBytes ? capacityBytes : availableBytes;
  plan.usagePercent = <u32>100 - <u32>((available * 100) / capacityBytes);
  // Age first, and only once the maximum age has passed since the collector began: images it
  // has not watched that long have no trustworthy "last used".
  const remaining: GcImage[] = [];
  const ageOn = policy.maximumAgeMs > 0 && nowMs > beganMs && nowMs - beganMs > policy.maximumAgeMs;
  for (let i = 0; i < candidates.length; i++) {
    const image = candidates[i];
    if (ageOn && nowMs > image.lastUsedMs && nowMs - image.lastUsedMs > policy.maximumAgeMs) {
      plan.removeForAge.push(image.id);
      available += image.sizeBytes;
    } else {
      remaining.push(image);
    }
  }
  if (available > capacityBytes) available = capacityBytes;
  const usage: u32 = <u32>100 - <u32>((available * 100) / capacityBytes);
  if (reclaimAll) plan.bytesToFree = u64.MAX_VALUE;
  else if (usage >= policy.highThresholdPercent) {
    const target = (capacityBytes * <u64>(100 - policy.lowThresholdPercent)) / 100;
    plan.bytesToFree = target > available ? target - available : 0;
  }
  if (plan.bytesToFree == 0) return plan;
  for (let i = 0; i < remaining.length; i++) {
    const image = remaining[i];
    // Used now (a container started since the list), or too new: may be about to be used.
    if (image.lastUsedMs >= nowMs) continue;
    if (image.firstDetectedMs > nowMs || nowMs - image.firstDetectedMs < policy.minimumAgeMs) continue;
    plan.removeForSpace.push(image.id);
    plan.bytesFreed += image.sizeBytes;
    if (plan.bytesFreed >= plan.bytesToFree) break;
  }
  return plan;
}

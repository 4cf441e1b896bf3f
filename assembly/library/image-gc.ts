// Export shim of wit/image-gc.wit over the agent's image collector decision.
import { GcImage, GcPolicy, planImageGc } from "../core/image-gc";
import { liftListParts, liftString, lowerList, lowerStringElement, resetArgumentArena } from "../abi/memory";
import { LIBRARY_RETURN_AREA, lowerError, lowerOkTag } from "../abi/library-types";

// gc-image { id @0, size-bytes u64 @8, in-use u8 @16, pinned u8 @17, first-detected-ms u64 @24,
//   last-used-ms u64 @32 }: size 40, align 8.
const GC_IMAGE_SIZE: usize = 40;
// result<gc-plan, string>: tag @0, payload @8. gc-plan { remove-for-age @0, remove-for-space @8,
//   usage-percent u32 @16, bytes-to-free u64 @24, bytes-freed u64 @32 }: size 40, align 8.
const PLAN_PAYLOAD: usize = 8;

function liftGcImage(ptr: usize): GcImage {
  const image = new GcImage();
  image.id = liftString(ptr);
  image.sizeBytes = load<u64>(ptr, 8);
  image.inUse = load<u8>(ptr, 16) != 0;
  image.pinned = load<u8>(ptr, 17) != 0;
  image.firstDetectedMs = load<u64>(ptr, 24);
  image.lastUsedMs = load<u64>(ptr, 32);
  return image;
}

export function imageGcPlan(
  imagesPtr: usize, imagesLen: u32, capacityBytes: u64, availableBytes: u64, highPercent: u32, lowPercent: u32,
  minimumAgeMs: u64, maximumAgeMs: u64, nowMs: u64, beganMs: u64, reclaimAll: i32,
): usize {
  const images = liftListParts<GcImage>(imagesPtr, imagesLen, GC_IMAGE_SIZE, liftGcImage);
  resetArgumentArena();
  const policy = new GcPolicy();
  policy.highThresholdPercent = highPercent;
  policy.lowThresholdPercent = lowPercent;
  policy.minimumAgeMs = minimumAgeMs;
  policy.maximumAgeMs = maximumAgeMs;
  const plan = planImageGc(images, capacityBytes, availableBytes, policy, nowMs, beganMs, reclaimAll != 0);
  if (plan.error.length > 0) return lowerError(LIBRARY_RETURN_AREA, PLAN_PAYLOAD, plan.error);
  const at = lowerOkTag(LIBRARY_RETURN_AREA) + PLAN_PAYLOAD;
  lowerList<string>(at, plan.removeForAge, 8, lowerStringElement);
  lowerList<string>(at + 8, plan.removeForSpace, 8, lowerStringElement);
  store<u32>(at, plan.usagePercent, 16);
  store<u32>(at, 0, 20);
  store<u64>(at, plan.bytesToFree, 24);
  store<u64>(at, plan.bytesFreed, 32);
  return LIBRARY_RETURN_AREA;
}

// `run`'s image garbage collector from its settings: upstream's policy fields, its rule that a
// high threshold of 100 turns image GC off, and nanolet's own `--image-gc-period` (upstream's is
// fixed at 5 minutes; tests shorten it).
import type { Logger } from "../common/log.js";
import { msOf, type KubeletConfiguration } from "../config/kubelet-config.js";
import { parseGoDuration } from "../config/go-duration.js";
import type { Runtime } from "../cri/runtime.js";
import type { GcPlan } from "../core/types.js";
import type { ImageGcRequest } from "../core/core.js";
import { ImageCollector } from "../images/image-collector.js";

export interface ImageCollectorSettings {
  config: KubeletConfiguration;
  values: Record<string, unknown>;
  runtime: Runtime;
  log: Logger;
  loop: { planImageGc(request: ImageGcRequest): GcPlan | undefined };
  nodeEvent: (type: "Warning", reason: string, message: string) => void;
  /** After each pass: the IDs of the images left. */
  onImagesPresent?: (ids: Set<string>, listedAtMs: number) => void;
}

/**
 * The collector: running every period unless image GC is off (imageGCHighThresholdPercent 100);
 * either way there for the eviction manager's reclaim, as upstream's is.
 */
export function startImageCollector(settings: ImageCollectorSettings): ImageCollector {
  const { config, values, runtime, log, loop, nodeEvent, onImagesPresent } = settings;
  const period = parseGoDuration(String(values["image-gc-period"] ?? "5m"));
  if (typeof period === "string" || period <= 0n) throw new Error(`--image-gc-period: ${typeof period === "string" ? period : "must be greater than 0"}`);
  const infra = values["pod-infra-container-image"];
  const collector = new ImageCollector({
    runtime, log,
    policy: {
      highThresholdPercent: config.imageGCHighThresholdPercent,
      lowThresholdPercent: config.imageGCLowThresholdPercent,
      minimumAgeMs: msOf(config.imageMinimumGCAge),
      maximumAgeMs: msOf(config.imageMaximumGCAge),
    },
    plan: (request) => loop.planImageGc(request),
    keepImages: typeof infra === "string" && infra !== "" ? [infra] : [],
    onNodeEvent: nodeEvent,
    onImagesPresent,
  });
  if (config.imageGCHighThresholdPercent === 100) log.log("info", "ImageGCHighThresholdPercent is set 100, Disable image GC");
  else collector.start(Number(period / 1_000_000n));
  return collector;
}

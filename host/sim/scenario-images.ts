// A scenario's image filesystem and image GC settings (`images.gc`), as the kubelet's
// configuration names them; see tests/sim/README.md.
import type { Reader } from "./field-reader.js";
import type { ScenarioImageGc } from "./scenario-types.js";

type Obj = Record<string, unknown>;

export function readImageGc(r: Reader, value: unknown): ScenarioImageGc | undefined {
  if (value === undefined) return undefined;
  const g = r.object(value, "images.gc") as Obj;
  r.only(g, "images.gc", ["capacity", "used", "sizes", "defaultSize", "highThreshold", "lowThreshold", "minimumAge", "maximumAge", "period"]);
  const sizes = g.sizes === undefined ? {} : (r.object(g.sizes, "images.gc.sizes") as Obj);
  const gc: ScenarioImageGc = {
    capacityBytes: r.bytes(g.capacity ?? "10Gi", "images.gc.capacity"),
    otherBytes: r.bytes(g.used ?? "0", "images.gc.used"),
    sizes: Object.fromEntries(Object.entries(sizes).map(([image, size]) => [image, r.bytes(size, `images.gc.sizes.${image}`)])),
    defaultSizeBytes: r.bytes(g.defaultSize ?? "10Mi", "images.gc.defaultSize"),
    highThresholdPercent: r.int(g.highThreshold ?? 85, "images.gc.highThreshold", 0, 100),
    lowThresholdPercent: r.int(g.lowThreshold ?? 80, "images.gc.lowThreshold", 0, 100),
    minimumAgeMs: r.duration(g.minimumAge ?? "2m", "images.gc.minimumAge"),
    maximumAgeMs: r.duration(g.maximumAge ?? "0s", "images.gc.maximumAge"),
    periodMs: r.duration(g.period ?? "5m", "images.gc.period"),
  };
  if (gc.capacityBytes <= 0) r.fail("images.gc.capacity", "must be greater than 0");
  if (gc.lowThresholdPercent >= gc.highThresholdPercent) r.fail("images.gc.lowThreshold", "must be less than highThreshold");
  if (gc.periodMs <= 0) r.fail("images.gc.period", "must be greater than 0");
  return gc;
}

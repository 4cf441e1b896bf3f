// Images in the simulator: the image filesystem (a capacity, what its images take, what else it
// holds), the kubelet's image collector at its period and on the eviction manager's reclaim, and
// the checks every plan the core makes must pass: nothing in use, pinned or too young removed for
// space, least recently used first, nothing removed for space under the high threshold, and
// enough freed when enough was eligible. The requests are made by the host's own ImageRecords.
import type { Core, ImageGcRequest } from "../core/core.js";
import type { GcPlan } from "../core/types.js";
import type { ImageInfo } from "../cri/runtime.js";
import { ImageRecords, imagesInUse } from "../images/image-records.js";
import type { TraceWriter } from "../trace/recording-core.js";
import type { EventQueue } from "./event-queue.js";
import type { Invariants } from "./invariants.js";
import type { ScenarioImageGc } from "./scenario-types.js";
import type { SimRuntime } from "./sim-runtime.js";

export interface SimImagesContext {
  now(): number;
  queue: EventQueue;
  runtime: SimRuntime;
  invariants: Invariants;
  trace?: TraceWriter;
  coreUp(): boolean;
  call<T>(fn: (core: Core) => T): T | undefined;
}

export class SimImages {
  private readonly records = new ImageRecords();
  private readonly beganMs: number;
  passes = 0;
  removed = 0;

  constructor(private ctx: SimImagesContext, private gc: ScenarioImageGc) {
    this.beganMs = ctx.now();
  }

  /** The timeline's `diskUsed`: what the filesystem holds besides images, from now on. */
  setOtherBytes(bytes: number): void {
    this.gc = { ...this.gc, otherBytes: bytes };
  }

  private sizeOf(image: string): number {
    return this.gc.sizes[image] ?? this.gc.defaultSizeBytes;
  }

  /** The collector's pass at its period (upstream: at start, then every 5 minutes). */
  periodic(): void {
    this.ctx.queue.push(this.ctx.now() + this.gc.periodMs, "image-gc", () => this.periodic());
    this.pass(false);
  }

  /** The eviction manager's reclaim: every eligible image. */
  reclaim(): void {
    this.pass(true);
  }

  private pass(reclaimAll: boolean): void {
    if (!this.ctx.coreUp()) return;
    const { runtime } = this.ctx;
    const nowMs = this.ctx.now();
    const images: ImageInfo[] = [...runtime.images].sort().map((name) => ({ id: name, repoTags: [name], repoDigests: [], sizeBytes: this.sizeOf(name) }));
    const used = imagesInUse([...runtime.containers.values()]);
    const taken = images.reduce((sum, i) => sum + i.sizeBytes, 0) + this.gc.otherBytes;
    const filesystem = { capacityBytes: this.gc.capacityBytes, availableBytes: Math.max(0, this.gc.capacityBytes - taken) };
    const policy = { highThresholdPercent: this.gc.highThresholdPercent, lowThresholdPercent: this.gc.lowThresholdPercent, minimumAgeMs: this.gc.minimumAgeMs, maximumAgeMs: this.gc.maximumAgeMs };
    const request = this.records.request(images, used, new Set(), filesystem, policy, nowMs, this.beganMs, reclaimAll);
    const plan = this.ctx.call((core) => core.planImageGc?.(request));
    if (!plan) return;
    this.passes++;
    this.check(request, plan, nowMs);
    for (const id of [...plan.removeForAge, ...plan.removeForSpace]) {
      runtime.images.delete(id);
      this.records.forget(id);
      this.removed++;
    }
    this.ctx.trace?.sim(nowMs, "image-gc", { reclaimAll, usage: plan.usagePercent, age: plan.removeForAge, space: plan.removeForSpace });
  }

  private check(request: ImageGcRequest, plan: GcPlan, nowMs: number): void {
    const violate = (invariant: string, message: string) => this.ctx.invariants.violate(nowMs, invariant, message);
    const byId = new Map(request.images.map((i) => [i.id, i]));
    const removed = [...plan.removeForAge, ...plan.removeForSpace];
    for (const id of removed) {
      const image = byId.get(id);
      if (!image) violate("image-gc-known-images", `the plan removes ${id}, which the runtime does not hold`);
      else if (image.inUse || image.pinned) violate("image-gc-keeps-used", `the plan removes ${id}, which is ${image.inUse ? "in use" : "pinned"}`);
    }
    if (new Set(removed).size !== removed.length) violate("image-gc-once", `the plan removes an image twice: ${removed.join(", ")}`);
    const lru = (a: { lastUsedMs: number; firstDetectedMs: number; id: string }, b: typeof a) =>
      a.lastUsedMs - b.lastUsedMs || a.firstDetectedMs - b.firstDetectedMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const space = plan.removeForSpace.map((id) => byId.get(id)!).filter(Boolean);
    for (const image of space) {
      if (nowMs - image.firstDetectedMs < request.policy.minimumAgeMs) violate("image-gc-minimum-age", `${image.id} was first seen ${nowMs - image.firstDetectedMs} ms ago, under the minimum age`);
    }
    for (let i = 1; i < space.length; i++) if (lru(space[i - 1], space[i]) > 0) violate("image-gc-lru", `${space[i - 1].id} removed before ${space[i].id}, which was used less recently`);
    const toFree = Number(plan.bytesToFree);
    const freed = space.reduce((sum, i) => sum + i.sizeBytes, 0);
    if (!request.reclaimAll && toFree === 0 && space.length > 0) violate("image-gc-threshold", `images removed for space while under the high threshold (${plan.usagePercent}%)`);
    // Eligible images left while short of the goal: the plan stopped too early.
    const eligible = request.images.filter((i) => !i.inUse && !i.pinned && !removed.includes(i.id) && i.lastUsedMs < nowMs && nowMs - i.firstDetectedMs >= request.policy.minimumAgeMs);
    if (toFree > 0 && freed < toFree && eligible.length > 0) violate("image-gc-enough", `${freed} of ${toFree} bytes freed while ${eligible.map((i) => i.id).join(", ")} could have gone`);
  }
}

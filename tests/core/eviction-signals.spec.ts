// Thresholds met, grace periods and pressure conditions, as upstream's eviction helpers.
import { parseThresholdConfig } from "../../assembly/core/eviction-config";
import {
  SignalObservation,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
} from "../../assembly/core/eviction-signals";

const MI: i64 = 1024 * 1024;

describe("thresholds met", () => {
  it("a quantity or a percentage of capacity, below which the signal meets it; minimum reclaim widens it once enforced", () => {
    const c = parseThresholdConfig("memory.available<100Mi,nodefs.available<10%", "", "", "memory.available=50Mi");
    const observations = [new SignalObservation("memory.available", 120 * MI, 1024 * MI), new SignalObservation("nodefs.available", 9 * MI, 100 * MI)];
    const met = thresholdsMet(c.thresholds, observations, false);
    expect(met.length).toBe(1);
    expect(met[0].signal).toBe("nodefs.available");
    const enforced = thresholdsMet(c.thresholds, observations, true);
    expect(enforced.length).toBe(2); // 120Mi < 100Mi + 50Mi
    expect(thresholdsMet(c.thresholds, [new SignalObservation("memory.available", 100 * MI, 1024 * MI)], false).length).toBe(0); // equal is not below
    expect(thresholdsMet(c.thresholds, [], true).length).toBe(0); // unobserved signals are not met
  });

  it("a soft threshold acts only after its grace period", () => {
    const c = parseThresholdConfig("", "memory.available<300Mi", "memory.available=1m", "");
    const met = thresholdsMet(c.thresholds, [new SignalObservation("memory.available", 200 * MI, 1024 * MI)], false);
    let observed = thresholdsFirstObservedAt(met, [], 1000);
    expect(thresholdsMetGracePeriod(observed, 30_000).length).toBe(0);
    observed = thresholdsFirstObservedAt(met, observed, 61_000);
    expect(observed[0].firstMs).toBe(1000);
    expect(thresholdsMetGracePeriod(observed, 61_000).length).toBe(1);
  });
});

describe("pressure conditions", () => {
  it("a condition stays for the transition period after its threshold was last met", () => {
    const c = parseThresholdConfig("memory.available<100Mi,pid.available<100,imagefs.available<15%", "", "", "");
    let seen = nodeConditionsLastObservedAt(c.thresholds, [], 0);
    expect(nodeConditionsObservedSince(seen, 300_000, 0).join(",")).toBe("DiskPressure,MemoryPressure,PIDPressure");
    seen = nodeConditionsLastObservedAt([c.thresholds[0]], seen, 200_000);
    expect(nodeConditionsObservedSince(seen, 300_000, 310_000).join(",")).toBe("MemoryPressure");
    expect(nodeConditionsObservedSince(seen, 300_000, 500_000).length).toBe(0);
  });
});

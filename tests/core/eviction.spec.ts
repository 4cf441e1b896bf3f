// Eviction configuration parsing and pod ranking, as upstream's helpers.go, table by table.
import { parseGoDurationMs, parseThresholdConfig } from "../../assembly/core/eviction-config";
import { PodUsage, rankForPidPressure, rankForUsagePressure } from "../../assembly/core/eviction-rank";

const MI: i64 = 1024 * 1024;

function errorOf(hard: string, soft: string = "", grace: string = "", reclaim: string = ""): string {
  return parseThresholdConfig(hard, soft, grace, reclaim).error;
}

function order(pods: PodUsage[]): string {
  const names: string[] = [];
  for (let i = 0; i < pods.length; i++) names.push(pods[i].uid);
  return names.join(",");
}

describe("eviction thresholds (ParseThresholdConfig)", () => {
  it("parses the kubelet defaults: quantities and percentages, hard", () => {
    const c = parseThresholdConfig("memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%", "", "", "");
    expect(c.error).toBe("");
    expect(c.thresholds.length).toBe(4);
    expect(c.thresholds[0].signal).toBe("memory.available");
    expect(c.thresholds[0].value.isPercentage).toBe(false);
    expect(c.thresholds[0].value.quantity).toBe(100 * MI);
    expect(c.thresholds[0].isHard).toBe(true);
    expect(c.thresholds[1].value.isPercentage).toBe(true);
    expect(c.thresholds[1].value.fraction).toBeCloseTo(<f32>0.1);
  });

  it("soft thresholds take their grace periods; minimum reclaim applies to every threshold of the signal", () => {
    const c = parseThresholdConfig("memory.available<100Mi", "memory.available<300Mi", "memory.available=1m30s", "memory.available=50Mi");
    expect(c.error).toBe("");
    expect(c.thresholds.length).toBe(2);
    expect(c.thresholds[1].gracePeriodMs).toBe(90_000);
    expect(c.thresholds[1].isHard).toBe(false);
    expect(c.thresholds[0].hasMinReclaim).toBe(true);
    expect(c.thresholds[1].minReclaim.quantity).toBe(50 * MI);
  });

  it("ignores 0% and 100%; a later value for a signal replaces an earlier one", () => {
    const c = parseThresholdConfig("nodefs.available<0%,imagefs.available<100%,memory.available<1Gi,memory.available<2Gi", "", "", "");
    expect(c.thresholds.length).toBe(1);
    expect(c.thresholds[0].value.quantity).toBe(2048 * MI);
  });

  it("refuses bad configurations with upstream's words", () => {
    expect(errorOf("memory.free<1Gi")).toBe("unsupported eviction signal memory.free");
    expect(errorOf("memory.available=1Gi")).toBe("malformed pair, expect string<string");
    expect(errorOf("memory.available<0")).toBe("eviction threshold memory.available must be positive: 0");
    expect(errorOf("memory.available<-1Gi")).toBe("eviction threshold memory.available must be positive: -1Gi");
    expect(errorOf("nodefs.available<110%")).toBe("eviction percentage threshold nodefs.available must be <= 100%: 110%");
    expect(errorOf("nodefs.available<-5%")).toBe("eviction percentage threshold nodefs.available must be >= 0%: -5%");
    expect(errorOf("nodefs.available<ten%")).toBe('strconv.ParseFloat: parsing "ten": invalid syntax');
    // A prefix that reads as a number is not a number, as Go's ParseFloat says.
    expect(errorOf("memory.available<10..5%")).toBe('strconv.ParseFloat: parsing "10..5": invalid syntax');
    expect(errorOf("memory.available<5-5%")).toBe('strconv.ParseFloat: parsing "5-5": invalid syntax');
    expect(errorOf("memory.available<1.2.3%")).toBe('strconv.ParseFloat: parsing "1.2.3": invalid syntax');
    expect(errorOf("memory.available<1e%")).toBe('strconv.ParseFloat: parsing "1e": invalid syntax');
    expect(errorOf("memory.available<.%")).toBe('strconv.ParseFloat: parsing ".": invalid syntax');
    expect(errorOf("memory.available<2.5e1%")).toBe("");
    expect(errorOf("memory.available<.5%")).toBe("");
    expect(errorOf("memory.available<lots")).toBe("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect(errorOf("", "memory.available<300Mi")).toBe("grace period must be specified for the soft eviction threshold memory.available");
    expect(errorOf("", "memory.available<300Mi", "memory.available=-1m")).toBe("invalid eviction grace period specified: -1m, must be a positive value");
    expect(errorOf("", "memory.available<300Mi", "memory.available=soon")).toBe('time: invalid duration "soon"');
    expect(errorOf("", "", "", "nodefs.available=0%")).toBe("eviction percentage minimum reclaim nodefs.available must be positive: 0%");
    expect(errorOf("", "", "", "nodefs.available=-1Gi")).toBe("negative eviction minimum reclaim specified for nodefs.available");
  });

  it("a soft threshold with a grace under a millisecond stays soft (upstream compares nanoseconds)", () => {
    const c = parseThresholdConfig("", "memory.available<300Mi", "memory.available=10ns", "");
    expect(c.error).toBe("");
    expect(c.thresholds[0].isHard).toBe(false);
    expect(c.thresholds[0].gracePeriodMs).toBe(1);
    // A grace of 0 is a hard threshold, upstream's isHardEvictionThreshold.
    expect(parseThresholdConfig("", "memory.available<300Mi", "memory.available=0s", "").thresholds[0].isHard).toBe(true);
  });

  it("reads Go durations", () => {
    const errors: string[] = [];
    expect(parseGoDurationMs("1h30m", errors)).toBe(5_400_000);
    expect(parseGoDurationMs("1.5s", errors)).toBe(1500);
    expect(parseGoDurationMs("1.1s", errors)).toBe(1100);
    expect(parseGoDurationMs("1.0000001s", errors)).toBe(1001);
    expect(parseGoDurationMs("10ns", errors)).toBe(1);
    expect(parseGoDurationMs("2m0.5ms", errors)).toBe(120_001);
    expect(parseGoDurationMs("0", errors)).toBe(0);
    expect(errors.length).toBe(0);
    parseGoDurationMs("10", errors);
    expect(errors[0]).toBe('time: missing unit in duration "10"');
  });
});

describe("eviction ranking (rankMemoryPressure, rankDiskPressure, rankPIDPressure)", () => {
  it("memory: no stats first, then over request, then lower priority, then most above request", () => {
    const pods: PodUsage[] = [
      new PodUsage("guaranteed-under", 0, true, 100 * MI, 200 * MI),
      new PodUsage("besteffort-small", 0, true, 10 * MI, 0),
      new PodUsage("besteffort-big", 0, true, 500 * MI, 0),
      new PodUsage("high-priority-over", 1000, true, 900 * MI, 0),
      new PodUsage("no-stats", 1000, false, 0, 0),
      new PodUsage("burstable-over", 0, true, 300 * MI, 100 * MI),
    ];
    expect(order(rankForUsagePressure(pods))).toBe("no-stats,besteffort-big,burstable-over,besteffort-small,high-priority-over,guaranteed-under");
  });

  it("pods equal in every respect keep the order of their uids, whatever order they came in", () => {
    const a = [new PodUsage("b", 0, true, 10, 0), new PodUsage("a", 0, true, 10, 0), new PodUsage("c", 0, true, 10, 0)];
    expect(order(rankForUsagePressure(a))).toBe("a,b,c");
  });

  it("PID: lower priority first, then the most processes", () => {
    const pods: PodUsage[] = [
      new PodUsage("few", 0, true, 3, 0),
      new PodUsage("many", 0, true, 300, 0),
      new PodUsage("critical-many", 2000000000, true, 5000, 0),
      new PodUsage("unknown", 0, false, 0, 0),
    ];
    expect(order(rankForPidPressure(pods))).toBe("unknown,many,few,critical-many");
  });
});

// Who is admitted under pressure, as upstream's eviction manager decides.
import { admitUnderPressure } from "../../assembly/core/eviction-admission";
import { QosClass } from "../../assembly/core/qos";

describe("admission under pressure", () => {
  it("no pressure: everyone; critical pods: always", () => {
    expect(admitUnderPressure([], QosClass.BestEffort, false, false).admit).toBe(true);
    expect(admitUnderPressure(["DiskPressure"], QosClass.BestEffort, true, false).admit).toBe(true);
  });
  it("memory pressure refuses BestEffort pods unless they tolerate the taint", () => {
    expect(admitUnderPressure(["MemoryPressure"], QosClass.Burstable, false, false).admit).toBe(true);
    expect(admitUnderPressure(["MemoryPressure"], QosClass.BestEffort, false, true).admit).toBe(true);
    const refused = admitUnderPressure(["MemoryPressure"], QosClass.BestEffort, false, false);
    expect(refused.admit).toBe(false);
    expect(refused.reason).toBe("Evicted");
    expect(refused.message).toBe("The node had condition: [MemoryPressure]. ");
  });
  it("disk or PID pressure refuses every pod that is not critical", () => {
    expect(admitUnderPressure(["DiskPressure"], QosClass.Guaranteed, false, false).admit).toBe(false);
    const both = admitUnderPressure(["DiskPressure", "MemoryPressure"], QosClass.Guaranteed, false, true);
    expect(both.admit).toBe(false);
    expect(both.message).toBe("The node had condition: [DiskPressure MemoryPressure]. ");
  });
});

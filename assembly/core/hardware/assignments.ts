// What the hardware managers gave each container, in the shapes their state files keep.

/// CPUs a container holds exclusively (the CPU manager's entries).
export class CpuAssignment {
  constructor(public podUid: string = "", public container: string = "", public cpus: i32[] = []) {}
}

/// Devices of one resource a container holds (the device manager's checkpoint entries).
export class DeviceAssignment {
  constructor(public podUid: string = "", public container: string = "", public resource: string = "", public ids: string[] = []) {}
}

/// Memory a container holds on NUMA nodes (the memory manager's entries).
export class MemoryAssignment {
  constructor(public podUid: string = "", public container: string = "", public numaNodes: i32[] = [], public bytes: i64 = 0) {}
}

/// An admission refusal: upstream's reason (`TopologyAffinityError`, `UnexpectedAdmissionError`,
/// `SMTAlignmentError`) and message.
export class HardwareRefusal {
  constructor(public reason: string = "", public message: string = "") {}
}

export const UNEXPECTED_ADMISSION = "UnexpectedAdmissionError";

/// upstream's unexpectedAdmissionError wording around a manager's error.
export function unexpected(error: string): HardwareRefusal {
  return new HardwareRefusal(UNEXPECTED_ADMISSION, "Allocate failed due to " + error + ", which is unexpected");
}

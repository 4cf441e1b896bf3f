// Admission under node pressure (pkg/kubelet/eviction/eviction_manager.go Admit): with no
// pressure every pod is admitted, and critical pods always are; under memory pressure alone a pod
// that is not BestEffort is admitted, and a BestEffort one only if it tolerates the
// memory-pressure taint; any other pressure refuses the rest.
import { QosClass } from "./qos";

export class AdmitResult {
  constructor(public admit: bool = true, public reason: string = "", public message: string = "") {}
}

/// `conditions`: the node's pressure conditions now (MemoryPressure, DiskPressure, PIDPressure).
export function admitUnderPressure(conditions: string[], qos: QosClass, critical: bool, toleratesMemoryPressure: bool): AdmitResult {
  if (conditions.length == 0 || critical) return new AdmitResult();
  const onlyMemory = conditions.length == 1 && conditions[0] == "MemoryPressure";
  if (onlyMemory && (qos != QosClass.BestEffort || toleratesMemoryPressure)) return new AdmitResult();
  // Upstream formats the list with %v: [A B].
  return new AdmitResult(false, "Evicted", "The node had condition: [" + conditions.join(" ") + "]. ");
}

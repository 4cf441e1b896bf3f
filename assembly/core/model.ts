// AssemblyScript mirrors of the WIT types, one file per WIT type interface (pod-spec,
// runtime-state, pod-status, actions, node) beside this one; this module hands all of them on,
// so that the core imports its types from one place. The probe family is in probe-types.ts.

export * from "./model-pod-spec";
export * from "./model-runtime-state";
export * from "./model-pod-status";
export * from "./model-actions";
export * from "./model-node";
export { ContainerPort, GrpcAction, HandlerTag, HookRequest, HookType, HttpGetAction, HttpHeader, Probe, ProbeHandler, ProbeOutcome, ProbeRequest, ProbeResult, ProbeType, ReadinessGate, TcpSocketAction } from "./probe-types";

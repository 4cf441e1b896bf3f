// Map from the AssemblyScript export names of assembly/exports.ts to the component-model export
// names the WIT world asks for. One row per export; cabi_post_* rows name the post-return shim.
const AGENT = "nanolet:core/agent-api@0.1.0";
const CHECK = "nanolet:core/abi-check@0.1.0";
const lib = (name) => `nanolet:core/${name}@0.1.0`;

export const EXPORT_NAMES = [
  ["agentConstructor", `${AGENT}#[constructor]agent`],
  ["agentDtor", `${AGENT}#[dtor]agent`],
  ["agentHandlePods", `${AGENT}#[method]agent.handle-pods`, "postReturn"],
  ["agentHandleRelist", `${AGENT}#[method]agent.handle-relist`],
  ["agentHandleRelistPacked", `${AGENT}#[method]agent.handle-relist-packed`],
  ["agentConfigureNode", `${AGENT}#[method]agent.configure-node`, "postReturn"],
  ["agentHandleNodeStats", `${AGENT}#[method]agent.handle-node-stats`],
  ["agentHandleNodeStatsPacked", `${AGENT}#[method]agent.handle-node-stats-packed`],
  ["agentHandleActionResults", `${AGENT}#[method]agent.handle-action-results`],
  ["agentHandleProbeResults", `${AGENT}#[method]agent.handle-probe-results`],
  ["agentPollActions", `${AGENT}#[method]agent.poll-actions`, "postReturn"],
  ["agentPollDeadline", `${AGENT}#[method]agent.poll-deadline`],
  ["agentBackOffs", `${AGENT}#[method]agent.back-offs`, "postReturn"],
  ["agentRestoreBackOffs", `${AGENT}#[method]agent.restore-back-offs`],
  ["agentHandleRuntimeEvent", `${AGENT}#[method]agent.handle-runtime-event`],
  ["agentHandleEventStream", `${AGENT}#[method]agent.handle-event-stream`],
  ["agentConfigureNodeShutdown", `${AGENT}#[method]agent.configure-node-shutdown`],
  ["agentHandleNodeShutdown", `${AGENT}#[method]agent.handle-node-shutdown`],
  ["agentNodeShuttingDown", `${AGENT}#[method]agent.node-shutting-down`],
  ["echoPods", `${CHECK}#echo-pods`, "postReturn"],
  ["echoRejections", `${CHECK}#echo-rejections`, "postReturn"],
  ["echoSnapshot", `${CHECK}#echo-snapshot`, "postReturn"],
  ["echoResults", `${CHECK}#echo-results`, "postReturn"],
  ["echoActions", `${CHECK}#echo-actions`, "postReturn"],
  ["echoProbeResults", `${CHECK}#echo-probe-results`, "postReturn"],
  ["echoNodeStats", `${CHECK}#echo-node-stats`, "postReturn"],
  ["echoDeadline", `${CHECK}#echo-deadline`],
  ["plegRelistEvents", `${lib("pleg")}#relist-events`, "postReturn"],
  ["evictionParseThresholds", `${lib("eviction")}#parse-thresholds`, "postReturn"],
  ["evictionThresholdsMet", `${lib("eviction")}#thresholds-met`, "postReturn"],
  ["evictionRankPods", `${lib("eviction")}#rank-pods`, "postReturn"],
  ["qosPodQosClass", `${lib("qos")}#pod-qos-class`, "postReturn"],
  ["qosOomScoreAdjust", `${lib("qos")}#oom-score-adjust`, "postReturn"],
  ["cgroupsContainerCgroup", `${lib("cgroups")}#container-cgroup`, "postReturn"],
  ["cgroupsPodCgroup", `${lib("cgroups")}#pod-cgroup`, "postReturn"],
  ["cgroupsPodCgroupParent", `${lib("cgroups")}#pod-cgroup-parent`, "postReturn"],
  ["statusPodPhaseOf", `${lib("status")}#pod-phase-of`, "postReturn"],
  ["restartShouldRestart", `${lib("restart")}#should-restart`, "postReturn"],
  ["restartBackOffStep", `${lib("restart")}#back-off-step`, "postReturn"],
  ["restartInBackOff", `${lib("restart")}#in-back-off`, "postReturn"],
  ["probeTick", `${lib("probe")}#tick`, "postReturn"],
  ["probeRecordOutcome", `${lib("probe")}#record-outcome`, "postReturn"],
  ["probeFirstTickAt", `${lib("probe")}#first-tick-at`, "postReturn"],
  ["probeNextTickAt", `${lib("probe")}#next-tick-at`, "postReturn"],
  ["imageGcPlan", `${lib("image-gc")}#plan`, "postReturn"],
];

/// Exports that exist only for wiring inside the module and must not reach the component.
export const INTERNAL_EXPORTS = ["coreAbort", "postReturn"];

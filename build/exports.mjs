// Map from the AssemblyScript export names of assembly/exports.ts to the component-model export
// names the WIT world asks for. One row per export; cabi_post_* rows name the post-return shim.
const AGENT = "nanolet:core/agent-api@0.1.0";
const CHECK = "nanolet:core/abi-check@0.1.0";

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
  ["agentPollActions", `${AGENT}#[method]agent.poll-actions`, "postReturn"],
  ["agentPollDeadline", `${AGENT}#[method]agent.poll-deadline`],
  ["echoPods", `${CHECK}#echo-pods`, "postReturn"],
  ["echoRejections", `${CHECK}#echo-rejections`, "postReturn"],
  ["echoSnapshot", `${CHECK}#echo-snapshot`, "postReturn"],
  ["echoResults", `${CHECK}#echo-results`, "postReturn"],
  ["echoActions", `${CHECK}#echo-actions`, "postReturn"],
  ["echoNodeStats", `${CHECK}#echo-node-stats`, "postReturn"],
  ["echoDeadline", `${CHECK}#echo-deadline`],
];

/// Exports that exist only for wiring inside the module and must not reach the component.
export const INTERNAL_EXPORTS = ["coreAbort", "postReturn"];

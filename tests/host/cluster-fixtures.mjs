// What the cluster tests share: the node, the fake apiserver's tokens, a quiet log, a wait for a
// state, a pod to seed and a core status to publish.
export const NODE = "n1";
export const quiet = { log() {} };
export const tokens = {
  node: { name: `system:node:${NODE}`, groups: ["system:nodes"] },
  admin: { name: "admin", groups: ["system:masters"] },
};

export async function until(what, fn, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const pod = (name, nodeName = NODE) => ({ metadata: { name, namespace: "default" }, spec: { nodeName, containers: [{ name: "app", image: "busybox" }] } });

export function coreStatus(version, overrides = {}) {
  return {
    phase: "running", reason: "", message: "", sandboxId: "sb",
    containerStatuses: [{
      name: "app", containerId: "abc", image: "busybox", state: "running", reason: "", message: "", exitCode: 0, restartCount: 2,
      ready: true, startedAtNs: 1_764_000_000_000_000_000n, finishedAtNs: 0n, started: true,
      lastState: { containerId: "old", exitCode: 3, reason: "Error", message: "", startedAtNs: 1_763_999_990_000_000_000n, finishedAtNs: 1_763_999_999_000_000_000n },
      allocatedResources: [{ name: "memory", quantity: "64Mi" }],
      resourceRequests: [{ name: "memory", quantity: "32Mi" }],
      resourceLimits: [{ name: "memory", quantity: "64Mi" }, { name: "cpu", quantity: "500m" }],
    }],
    version,
    conditions: [{ conditionType: "ready", status: true, reason: "", message: "", lastTransitionMs: 1_764_000_000_000n }],
    startTimeMs: 1_764_000_000_000n,
    finished: false,
    ...overrides,
  };
}

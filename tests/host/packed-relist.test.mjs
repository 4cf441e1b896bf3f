// The packed relist (handle-relist-packed, fed by the host's packer) and the typed one
// (handle-relist) are the same input: two agents given the same relists in the two forms decide
// exactly the same actions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CoreAgent, DEFAULT_CORE_CONFIG } from "../../dist/core/core.js";
import { assembleSnapshot, packContainer, packSandbox, packSnapshot } from "../../dist/core/snapshot-packing.js";

const pod = (uid, policy) => ({
  uid, namespace: "default", name: `pod-${uid}`, restartPolicy: policy, terminationGracePeriodSeconds: 3n, hostNetwork: true,
  containers: [{ name: "app", image: "busybox", command: [], args: [], env: [], workingDir: undefined, requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "" }],
  priority: 0, staticPod: false, toleratesMemoryPressure: false, readinessGates: [], initContainers: [], volumes: [], ephemeralContainers: [],
});

/** A tiny runtime that applies actions to plain objects (both agents see identical runtimes). */
class Node {
  sandboxes = [];
  containers = [];
  next = 1;
  apply(now, action) {
    const k = action.kind;
    const ns = BigInt(now) * 1_000_000n;
    if (k.tag === "run-sandbox") {
      const id = `sandbox-${this.next++}-${"a".repeat(50)}`;
      this.sandboxes.push({ id, podUid: k.val.podUid, podName: k.val.podName, podNamespace: k.val.podNamespace, attempt: k.val.attempt, state: "ready", createdAtNs: ns, terminationGracePeriodSeconds: k.val.terminationGracePeriodSeconds });
      return id;
    }
    if (k.tag === "create-container") {
      const id = `container-${this.next++}-${"b".repeat(48)}`;
      this.containers.push({ id, sandboxId: k.val.sandboxId, podUid: k.val.sandbox.podUid, name: k.val.container.name, attempt: k.val.attempt, state: "created", image: k.val.container.image, specHash: k.val.specHash, exitCode: 0, reason: "", message: "", createdAtNs: ns, startedAtNs: 0n, finishedAtNs: 0n });
      return id;
    }
    const c = this.containers.find((x) => x.id === k.val?.containerId);
    if (k.tag === "start-container") Object.assign(c, { state: "running", startedAtNs: ns });
    if (k.tag === "stop-container" && c.state === "running") Object.assign(c, { state: "exited", exitCode: 137, reason: "Error", finishedAtNs: ns });
    if (k.tag === "remove-container") this.containers = this.containers.filter((x) => x.id !== k.val.containerId);
    if (k.tag === "stop-sandbox") this.sandboxes.find((s) => s.id === k.val).state = "not-ready";
    if (k.tag === "remove-sandbox") this.sandboxes = this.sandboxes.filter((s) => s.id !== k.val);
    return "";
  }
  exitAll(now, code) {
    for (const c of this.containers) if (c.state === "running") Object.assign(c, { state: "exited", exitCode: code, reason: code ? "Error" : "Completed", message: EXIT_MESSAGE, finishedAtNs: BigInt(now) * 1_000_000n });
  }
  snapshot(now) {
    return { listedAtMs: BigInt(now), sandboxes: this.sandboxes.map((s) => ({ ...s })), containers: this.containers.map((c) => ({ ...c })), uninspectedPodUids: [] };
  }
}

/** Beyond ASCII, long and short: the packed text is UTF-8, the typed one the core's own strings. */
const EXIT_MESSAGE = `exit ✗ — ünï ${"é".repeat(20)} 🚀`;

const strip = (actions) => JSON.stringify(actions, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

test("typed and packed relists drive the core to identical actions", async () => {
  const typed = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG });
  const packed = await CoreAgent.create({ nodeName: "n", ...DEFAULT_CORE_CONFIG });
  const nodeA = new Node();
  const nodeB = new Node();
  let now = 1_000_000;
  const pods = [pod("u1", "Always"), pod("u2", "Never"), pod("u3", "OnFailure")];
  typed.handlePods(now, pods);
  packed.handlePods(now, pods);
  let compared = 0;
  let sawMessage = false;
  for (let step = 0; step < 400; step++) {
    now += 250;
    if (step === 40) {
      nodeA.exitAll(now, 1);
      nodeB.exitAll(now, 1);
    }
    if (step === 200) {
      typed.handlePods(now, [pods[0]]);
      packed.handlePods(now, [pods[0]]);
    }
    for (const [agent, node, usePacked] of [[typed, nodeA, false], [packed, nodeB, true]]) {
      const actions = agent.pollActions(now);
      agent.last = actions;
      const results = [];
      let relist = false;
      for (const a of actions) {
        if (a.kind.tag === "relist") relist = true;
        else if (["run-sandbox", "stop-sandbox", "remove-sandbox", "create-container", "start-container", "stop-container", "remove-container"].includes(a.kind.tag)) {
          results.push({ actionId: a.id, outcome: { tag: "ok", val: node.apply(now, a) } });
        }
      }
      if (results.length) agent.handleActionResults(now, results);
      if (relist) {
        const snap = node.snapshot(now);
        if (usePacked) agent.handleRelistPacked(now, packSnapshot(snap));
        else agent.handleRelist(now, snap);
      }
    }
    assert.equal(strip(packed.last), strip(typed.last), `step ${step}`);
    compared += typed.last.length;
    if (strip(packed.last).includes(EXIT_MESSAGE)) sawMessage = true;
  }
  assert.ok(sawMessage, "a status carried the exit message read from the packed text");
  assert.ok(compared > 30, `the scenario produced ${compared} actions`);
  assert.equal(nodeB.sandboxes.length, 1, "only the kept pod remains");
});

test("packing objects one by one and laying them end to end gives the bytes of a whole-relist pack", () => {
  const sandboxes = [
    { id: "s".repeat(64), podUid: "uid-1", podName: "web-ü", podNamespace: "default", attempt: 2, state: "ready", createdAtNs: 1_700_000_000_000_000_000n, terminationGracePeriodSeconds: 30n },
    { id: "s2", podUid: "uid-2", podName: "", podNamespace: "kube-system", attempt: 0, state: "not-ready", createdAtNs: 5n, terminationGracePeriodSeconds: undefined },
  ];
  const containers = [
    { id: "c".repeat(64), sandboxId: "s".repeat(64), podUid: "uid-1", name: "app", attempt: 3, state: "exited", image: "docker.io/library/busybox:latest", specHash: "1a2b", exitCode: -1, reason: "OOMKilled", message: "a long message with emoji 🎉 and more than twenty-four units", createdAtNs: 1n, startedAtNs: 2n, finishedAtNs: 3n },
    { id: "c2", sandboxId: "s2", podUid: "uid-2", name: "x", attempt: 0, state: "unknown", image: "", specHash: "", exitCode: 0, reason: "", message: "", createdAtNs: 0n, startedAtNs: 0n, finishedAtNs: 0n },
  ];
  const whole = packSnapshot({ listedAtMs: 9n, sandboxes, containers, uninspectedPodUids: ["uid-2"] });
  const laid = assembleSnapshot(9n, sandboxes.map(packSandbox), containers.map(packContainer), ["uid-2"]);
  for (const key of ["text", "sandboxes", "sandboxNumbers", "containers", "containerNumbers"]) assert.deepEqual([...laid[key]], [...whole[key]], key);
  assert.equal(new TextDecoder().decode(whole.text.slice(whole.containers[14], whole.containers[14] + whole.containers[15])), containers[0].message);
});

test("the packer keeps every state, any exit code and text beyond ASCII, short or long", () => {
  const long = `message ${"é".repeat(30)} 🚀 end`;
  const containers = ["created", "running", "exited", "unknown"].map((state, i) => ({
    id: `c${i}`, sandboxId: "s", podUid: "u", name: i === 3 ? "ünï" : `n${i}`, attempt: i, state, image: "img", specHash: "h",
    exitCode: [-1, 0, 255, 300][i], reason: "", message: i === 2 ? long : "", createdAtNs: 1n, startedAtNs: 2n, finishedAtNs: 3n,
  }));
  const packed = packSnapshot({ listedAtMs: 1n, sandboxes: [], containers, uninspectedPodUids: [] });
  const text = (start, length) => new TextDecoder().decode(packed.text.subarray(start, start + length));
  assert.deepEqual([0, 1, 2, 3].map((i) => packed.containers[i * 18 + 17]), [0, 1, 2, 3]);
  assert.deepEqual([0, 1, 2, 3].map((i) => packed.containerNumbers[i * 4]), [-1n, 0n, 255n, 300n]);
  assert.equal(text(packed.containers[2 * 18 + 14], packed.containers[2 * 18 + 15]), long);
  assert.equal(text(packed.containers[3 * 18 + 6], packed.containers[3 * 18 + 7]), "ünï");
});

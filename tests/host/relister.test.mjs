// The Relister's exits announced ahead of the CRI (containerd 1.6's task-exit events, see
// Relister.pushExit) on the in-memory FakeRuntime: listed exited until the CRI shows the exit,
// then the CRI's own details; believed running again only after a minute.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { Relister } from "../../dist/relist/relister.js";
import { LABEL_MANAGED_BY, LABEL_POD_UID } from "../../dist/cri/runtime.js";

function node() {
  let nowMs = 1_000_000;
  const runtime = new FakeRuntime();
  const labels = { [LABEL_MANAGED_BY]: "true", [LABEL_POD_UID]: "uid-1" };
  runtime.sandboxes.set("sb1", { id: "sb1", podUid: "uid-1", podName: "p", podNamespace: "default", attempt: 0, state: "ready", createdAtNs: 1n, labels, annotations: {}, config: {} });
  const container = (id) => {
    runtime.containers.set(id, {
      id, sandboxId: "sb1", name: id, attempt: 0, image: "busybox", state: "running", createdAtNs: 2n, labels, annotations: {},
      startedAtNs: 3n, finishedAtNs: 0n, exitCode: 0, reason: "", message: "",
    });
  };
  const relister = new Relister(runtime, () => nowMs);
  const listed = async (id) => (await relister.relist()).snapshot.containers.find((c) => c.id === id);
  return { runtime, relister, container, listed, advance: (ms) => (nowMs += ms) };
}

test("an announced exit is listed until the CRI shows it, then the CRI's own details are", async () => {
  const n = node();
  n.container("c1");
  n.container("c2");
  assert.equal((await n.listed("c1")).state, "running");
  n.runtime.exitUnseen("c1", 137, "OOMKilled");
  n.relister.pushExit(await n.runtime.containerStatus("c1"), { exitCode: 137, finishedAtNs: 9n, oomKilled: true });
  const pushed = await n.listed("c1");
  assert.deepEqual([pushed.state, pushed.exitCode, pushed.reason, pushed.startedAtNs, pushed.finishedAtNs], ["exited", 137, "OOMKilled", 3n, 9n]);
  assert.equal((await n.listed("c2")).state, "running", "the others as listed");
  const statusCalls = () => n.runtime.calls.filter((c) => c === "ContainerStatus c1").length;
  const before = statusCalls();
  n.runtime.showExit("c1");
  const shown = await n.listed("c1");
  assert.equal(shown.state, "exited");
  assert.equal(shown.finishedAtNs, n.runtime.containers.get("c1").finishedAtNs, "the CRI's own exit time now");
  assert.equal(statusCalls(), before + 1, "the CRI's details read once the CRI lists the exit");
});

test("a CRI still listing the container running a minute after the announced exit is believed", async () => {
  const n = node();
  n.container("c1");
  await n.listed("c1");
  n.relister.pushExit(await n.runtime.containerStatus("c1"), { exitCode: 1, finishedAtNs: 9n, oomKilled: false });
  n.advance(59_000);
  const early = await n.listed("c1");
  assert.deepEqual([early.state, early.reason], ["exited", "Error"]);
  n.advance(2_000);
  assert.equal((await n.listed("c1")).state, "running");
  n.advance(1_000);
  assert.equal((await n.listed("c1")).state, "running", "the announcement is gone for good");
});

test("an announced exit of a container no longer listed is forgotten", async () => {
  const n = node();
  n.container("c1");
  await n.listed("c1");
  n.relister.pushExit(await n.runtime.containerStatus("c1"), { exitCode: 0, finishedAtNs: 9n, oomKilled: false });
  const saved = n.runtime.containers.get("c1");
  n.runtime.containers.delete("c1");
  assert.equal(await n.listed("c1"), undefined);
  // The same ID listed again (a runtime's own business): as the CRI lists it.
  n.runtime.containers.set("c1", saved);
  assert.equal((await n.listed("c1")).state, "running");
});

test("image references and pod IPs come from the relists that listed them", async () => {
  const n = node();
  n.container("c1");
  n.container("c2");
  n.runtime.containers.get("c1").imageRef = "sha256:0123abcd";
  await n.relister.relist();
  assert.equal(n.relister.imageRefOf("c1"), "sha256:0123abcd");
  assert.equal(n.relister.imageRefOf("c2"), undefined, "no image_ref listed");
  assert.equal(n.relister.imageRefOf("nope"), undefined);
  // A ready sandbox's IP is asked once, then known while it is listed.
  const asks = () => n.runtime.calls.filter((c) => c === "PodSandboxStatus sb1").length;
  assert.equal(n.relister.sandboxIp("sb1"), "");
  await n.relister.relist();
  assert.equal(asks(), 1);
  n.runtime.containers.delete("c1");
  const sandbox = n.runtime.sandboxes.get("sb1");
  n.runtime.sandboxes.delete("sb1");
  await n.relister.relist();
  assert.equal(n.relister.imageRefOf("c1"), undefined, "gone with the container");
  assert.equal(n.relister.sandboxIp("sb1"), undefined, "forgotten with the sandbox");
  n.runtime.sandboxes.set("sb1", sandbox);
  await n.relister.relist();
  assert.equal(asks(), 2, "asked again once listed again");
});

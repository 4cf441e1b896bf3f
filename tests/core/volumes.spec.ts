// The deciding half of the volume manager through the agent on the fake node: no sandbox before
// every volume is set up, FailedMount with upstream's back-off, a refresh every sync period and on
// a new source version, tear-down once the pod has stopped, and volume names checked.
import { Agent } from "../../assembly/core/agent";
import { ActionTag, NodeStats, PodPhase, PodSpec, SignalObservation, VolumeKind, VolumeSpec, VolumeUsage } from "../../assembly/core/model";
import { VOLUME_REFRESH_PERIOD_MS } from "../../assembly/core/volume-manager";
import { FakeNode, config, spec } from "./fake-node";

function withVolumes(uid: string, kinds: i32[]): PodSpec {
  const p = spec(uid, "Always", ["app"]);
  for (let i = 0; i < kinds.length; i++) p.volumes.push(new VolumeSpec("vol-" + i.toString(), kinds[i], ""));
  return p;
}

/// The index in the log of the first action of `tag` for pod `uid`; -1 if none.
function firstOf(node: FakeNode, uid: string, tag: i32): i32 {
  for (let i = 0; i < node.log.length; i++) if (node.log[i].podUid == uid && node.log[i].kind.tag == tag) return i;
  return -1;
}

function events(node: FakeNode, reason: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < node.log.length; i++) {
    const a = node.log[i];
    if (a.kind.tag == ActionTag.PodEvent && a.kind.event!.reason == reason) out.push(a.kind.event!.message);
  }
  return out;
}

describe("volumes", () => {
  it("are set up, all of them by name, before the pod's sandbox; a pod without volumes asks for none", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handlePods(node.nowMs, [withVolumes("u1", [VolumeKind.EmptyDir, VolumeKind.ConfigMap]), spec("u2", "Always", ["app"])]);
    node.runUntil(node.nowMs + 2_000);
    const setUp = firstOf(node, "u1", ActionTag.SetUpVolumes);
    expect(setUp).toBeGreaterThanOrEqual(0);
    expect(node.log[setUp].kind.names.join(",")).toBe("vol-0,vol-1");
    expect(firstOf(node, "u1", ActionTag.RunSandbox)).toBeGreaterThan(setUp);
    expect(firstOf(node, "u2", ActionTag.SetUpVolumes)).toBe(-1);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Running);
  });

  it("a failed set-up keeps the pod ContainerCreating, sends FailedMount, and is tried again with a doubling back-off", () => {
    const node = new FakeNode(new Agent(config()));
    node.volumeFailure = 'MountVolume.SetUp failed for volume "vol-0" : configmap "cfg" not found';
    node.agent.handlePods(node.nowMs, [withVolumes("u1", [VolumeKind.ConfigMap]), spec("u2", "Always", ["app"])]);
    const startMs = node.nowMs;
    node.runUntil(startMs + 4_000);
    expect(firstOf(node, "u1", ActionTag.RunSandbox)).toBe(-1);
    const status = node.statuses.get("u1");
    expect(status.phase).toBe(PodPhase.Pending);
    expect(status.containerStatuses[0].reason).toBe("ContainerCreating");
    expect(events(node, "FailedMount")[0]).toBe('MountVolume.SetUp failed for volume "vol-0" : configmap "cfg" not found');
    // Tries at 0, +0.5 s, +1.5 s, +3.5 s (500 ms doubling), not a tight loop.
    expect(node.volumeSetUps.length).toBe(4);
    // The other pod is not held up.
    expect(node.statuses.get("u2").phase).toBe(PodPhase.Running);
    // Once the object exists, the next try sets it up and the pod starts.
    node.volumeFailure = "";
    node.runUntil(node.nowMs + 10_000);
    expect(node.mounted.has("u1")).toBe(true);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Running);
  });

  it("a running pod's configMap, secret and projected volumes are refreshed every sync period, emptyDirs never", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handlePods(node.nowMs, [withVolumes("u1", [VolumeKind.Secret]), withVolumes("u2", [VolumeKind.EmptyDir])]);
    node.runUntil(node.nowMs + 2_000);
    const before = node.volumeSetUps.length;
    node.runUntil(node.nowMs + VOLUME_REFRESH_PERIOD_MS * 3);
    let u1 = 0;
    let u2 = 0;
    for (let i = before; i < node.volumeSetUps.length; i++) {
      if (node.volumeSetUps[i].startsWith("u1@")) u1++;
      else u2++;
    }
    expect(u1).toBe(3);
    expect(u2).toBe(0);
  });

  it("a new source version (labels a downward API volume shows) refreshes at once", () => {
    const node = new FakeNode(new Agent(config()));
    const p = withVolumes("u1", [VolumeKind.DownwardApi]);
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 2_000);
    const before = node.volumeSetUps.length;
    const changed = withVolumes("u1", [VolumeKind.DownwardApi]);
    changed.volumes[0].sourceVersion = "labels-v2";
    node.agent.handlePods(node.nowMs, [changed]);
    node.runUntil(node.nowMs + 1_000);
    expect(node.volumeSetUps.length).toBe(before + 1);
    // The containers kept running: a refresh is not a restart.
    expect(firstOf(node, "u1", ActionTag.StopContainer)).toBe(-1);
  });

  it("a removed pod's volumes are torn down after its containers stopped and before its cgroup goes", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handlePods(node.nowMs, [withVolumes("u1", [VolumeKind.Secret])]);
    node.runUntil(node.nowMs + 2_000);
    node.agent.handlePods(node.nowMs, []);
    node.runUntil(node.nowMs + 40_000);
    const tearDown = firstOf(node, "u1", ActionTag.TearDownVolumes);
    expect(tearDown).toBeGreaterThan(firstOf(node, "u1", ActionTag.StopSandbox));
    expect(tearDown).toBeLessThan(firstOf(node, "u1", ActionTag.RemovePodCgroup));
    expect(node.mounted.has("u1")).toBe(false);
    expect(node.volumeTearDowns.length).toBe(1);
  });

  it("a finished pod that stays desired has its volumes torn down once", () => {
    const node = new FakeNode(new Agent(config()));
    const p = withVolumes("u1", [VolumeKind.EmptyDir]);
    p.restartPolicy = "Never";
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 2_000);
    node.exit("app", 0);
    node.runUntil(node.nowMs + 30_000);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Succeeded);
    expect(node.volumeTearDowns.length).toBe(1);
    expect(node.mounted.has("u1")).toBe(false);
  });

  it("volume names: required, DNS labels, used once", () => {
    const node = new FakeNode(new Agent(config()));
    const p = withVolumes("u1", [VolumeKind.EmptyDir, VolumeKind.EmptyDir]);
    p.volumes[1].name = "vol-0";
    const q = withVolumes("u2", [VolumeKind.EmptyDir]);
    q.volumes[0].name = "Bad_Name";
    const rejections = node.agent.handlePods(node.nowMs, [p, q]);
    expect(rejections.length).toBe(2);
    expect(rejections[0].field).toBe("spec.volumes[1].name");
    expect(rejections[0].message).toBe('Duplicate value: "vol-0"');
    expect(rejections[1].field).toBe("spec.volumes[0].name");
    expect(rejections[1].message.startsWith('Invalid value: "Bad_Name": a lowercase RFC 1123 label')).toBe(true);
  });

  it("an emptyDir holding more than its sizeLimit has its pod evicted at once, whatever the node's pressure", () => {
    const node = new FakeNode(new Agent(config()));
    const p = withVolumes("u1", [VolumeKind.EmptyDir, VolumeKind.EmptyDir]);
    p.volumes[0].sizeLimit = "1Mi";
    const q = withVolumes("u2", [VolumeKind.EmptyDir]);
    q.volumes[0].sizeLimit = "1Mi";
    node.agent.handlePods(node.nowMs, [p, q]);
    node.runUntil(node.nowMs + 2_000);
    const stats = new NodeStats();
    stats.signals.push(new SignalObservation("memory.available", 3 * 1024 * 1024 * 1024, 4 * 1024 * 1024 * 1024));
    stats.volumes.push(new VolumeUsage("u1", "vol-1", 50 * 1024 * 1024)); // no limit on this one
    stats.volumes.push(new VolumeUsage("u2", "vol-0", 1024 * 1024)); // at the limit: not over it
    node.agent.handleNodeStats(node.nowMs, stats);
    node.runUntil(node.nowMs + 5_000);
    expect(node.statuses.get("u1").phase).toBe(PodPhase.Running);
    expect(node.statuses.get("u2").phase).toBe(PodPhase.Running);
    const over = new NodeStats();
    over.volumes.push(new VolumeUsage("u1", "vol-0", 1024 * 1024 + 1));
    over.volumes.push(new VolumeUsage("u2", "vol-0", 2 * 1024 * 1024));
    node.agent.handleNodeStats(node.nowMs, over);
    node.runUntil(node.nowMs + 5_000);
    // Both at once: a pod's own limit is not the node's pressure, one per interval does not apply.
    for (let i = 0; i < 2; i++) {
      const status = node.statuses.get(i == 0 ? "u1" : "u2");
      expect(status.phase).toBe(PodPhase.Failed);
      expect(status.reason).toBe("Evicted");
      expect(status.message).toBe('Usage of EmptyDir volume "vol-0" exceeds the limit "1Mi". ');
    }
    expect(events(node, "Evicted").length).toBe(2);
  });

  it("a refresh that falls due while the pod waits out a crash-loop back-off waits with it (no busy loop)", () => {
    const node = new FakeNode(new Agent(config()));
    node.agent.handlePods(node.nowMs, [withVolumes("u1", [VolumeKind.Secret])]);
    node.runUntil(node.nowMs + 2_000);
    // Crash until the back-off (10 s doubling) is longer than the refresh period.
    for (let i = 0; i < 5; i++) {
      node.exit("app", 1);
      node.runUntil(node.nowMs + 200_000);
    }
    const before = node.steps;
    node.exit("app", 1);
    node.runUntil(node.nowMs + 300_000);
    // A few rounds per relist period at most; a core asking to be called at once would take
    // one round per millisecond of the back-off.
    expect(node.steps - before).toBeLessThan(5_000);
    expect(node.agent.pollDeadline()).toBeGreaterThan(node.nowMs);
  });
});

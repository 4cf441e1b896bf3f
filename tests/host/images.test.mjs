// The image manager's parts on their own: the pull queue, who may use a pulled image, the node's
// credential files, and the Pulled event's wording.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { PullQueue } from "../../dist/images/pull-queue.js";
import { PulledRecords, imageName } from "../../dist/images/pulled-records.js";
import { readNodeCredentials, nodeCredentialFiles } from "../../dist/images/node-credentials.js";
import { ImageManager } from "../../dist/images/image-manager.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-images-"));
const secret = (name, hash, uid = `${name}-uid`) => ({ uid, namespace: "default", name, credentialHash: hash });

test("pulls run one at a time when serialized, and up to the limit otherwise", async () => {
  for (const limit of [1, 2]) {
    const queue = new PullQueue(limit);
    let running = 0;
    let most = 0;
    const pull = () => queue.run(async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
    });
    await Promise.all([pull(), pull(), pull(), pull()]);
    assert.equal(most, limit);
  }
});

test("an image's name without tag or digest, with its registry", () => {
  assert.equal(imageName("busybox"), "docker.io/library/busybox");
  assert.equal(imageName("127.0.0.1:5000/team/app:1"), "127.0.0.1:5000/team/app");
  assert.equal(imageName(`registry.example.com/app@sha256:${"a".repeat(64)}`), "registry.example.com/app");
});

test("who may use a pulled image: the secret that pulled it, the same credential elsewhere, everyone after an anonymous pull", () => {
  const records = new PulledRecords(tempDir());
  const image = "reg.example.com/team/app:1";
  // Preloaded (never pulled by the agent): not verified under the default policy.
  assert.equal(records.mustAttemptPull(image, "sha256:one", [], 0), false);
  records.recordIntent(image);
  records.recordPulled(image, "sha256:one", secret("a", "hash-a"), 1);
  assert.equal(records.mustAttemptPull(image, "sha256:one", [secret("a", "hash-a")], 2), false, "the secret that pulled it");
  assert.equal(records.mustAttemptPull(image, "sha256:one", [secret("b", "hash-b")], 2), true, "another credential must pull");
  assert.equal(records.mustAttemptPull(image, "sha256:one", [], 2), true, "no credential must pull");
  assert.equal(records.mustAttemptPull(image, "sha256:one", [secret("copy", "hash-a")], 2), false, "the same credential in another secret");
  assert.equal(records.mustAttemptPull("reg.example.com/team/app:2", "sha256:one", [secret("a", "hash-a")], 2), false, "another tag of the same image and name");
  // An anonymous pull opens it to every pod on the node.
  records.recordPulled(image, "sha256:one", undefined, 3);
  assert.equal(records.mustAttemptPull(image, "sha256:one", [], 4), false);
});

test("pulled-image records survive a restart; an unreadable one makes the pod pull", () => {
  const dir = tempDir();
  const image = "reg.example.com/app:1";
  new PulledRecords(dir).recordPulled(image, "sha256:two", secret("a", "hash-a"), 1);
  const again = new PulledRecords(dir);
  assert.equal(again.mustAttemptPull(image, "sha256:two", [secret("b", "hash-b")], 2), true);
  assert.equal(again.mustAttemptPull(image, "sha256:two", [secret("a", "hash-a")], 2), false);
  const [file] = fs.readdirSync(path.join(dir, "pulled"));
  fs.writeFileSync(path.join(dir, "pulled", file), "{not json");
  const lines = [];
  const broken = new PulledRecords(dir, "NeverVerifyPreloadedImages", [], { log: (level, msg, fields) => lines.push(`${msg} ${JSON.stringify(fields)}`) });
  assert.equal(broken.mustAttemptPull(image, "sha256:two", [secret("a", "hash-a")], 2), true);
  assert.match(lines.join("\n"), /Pulled-image record unreadable.*not valid JSON/);
  // A pull in flight when the agent stopped: the image is the agent's, verified.
  const crashed = new PulledRecords(tempDir());
  crashed.recordIntent("reg.example.com/other:1");
  assert.equal(crashed.mustAttemptPull("reg.example.com/other:1", "sha256:three", [], 5), true);
});

test("the verification policies: NeverVerify, AlwaysVerify, NeverVerifyAllowlistedImages", () => {
  const image = "reg.example.com/team/app:1";
  assert.equal(new PulledRecords(undefined, "AlwaysVerify").mustAttemptPull(image, "sha256:x", [], 0), true);
  const never = new PulledRecords(undefined, "NeverVerify");
  never.recordPulled(image, "sha256:x", secret("a", "hash-a"), 0);
  assert.equal(never.mustAttemptPull(image, "sha256:x", [], 0), false);
  const allow = (list) => new PulledRecords(undefined, "NeverVerifyAllowlistedImages", list).mustAttemptPull(image, "sha256:x", [], 0);
  assert.equal(allow(["reg.example.com/team/*"]), false);
  assert.equal(allow(["reg.example.com/team/app"]), false);
  assert.equal(allow(["reg.example.com/other/*"]), true);
});

test("the node's credentials: config.json in the kubelet's places first, .dockercfg after; a bad file is skipped by name, never quoted", () => {
  const root = tempDir();
  const home = tempDir();
  const cwd = tempDir();
  const places = nodeCredentialFiles(root, cwd, home);
  assert.deepEqual(places.map((p) => p.file), [
    path.join(root, "config.json"), path.join(cwd, "config.json"), path.join(home, ".docker/config.json"), "/.docker/config.json",
    path.join(root, ".dockercfg"), path.join(cwd, ".dockercfg"), path.join(home, ".dockercfg"), "/.dockercfg",
  ]);
  const lines = [];
  const log = { log: (level, msg, fields) => lines.push(`${level} ${msg} ${JSON.stringify(fields)}`) };
  // A fifo where the first file would be, a secret-bearing broken file in the second place.
  execFileSync("mkfifo", [path.join(root, "config.json")]);
  fs.writeFileSync(path.join(cwd, "config.json"), '{"auths": {"reg": {"password": "hunter2"}');
  fs.mkdirSync(path.join(home, ".docker"));
  fs.writeFileSync(path.join(home, ".docker/config.json"), JSON.stringify({ auths: { "reg.example.com": { auth: "dTpw" } } }));
  assert.deepEqual(readNodeCredentials(root, log, places), { "reg.example.com": { auth: "dTpw" } });
  assert.equal(lines.length, 2, lines.join("\n"));
  assert.match(lines[0], /a fifo, not a regular file/);
  assert.match(lines[1], /not valid JSON/);
  assert.ok(!lines.join("").includes("hunter2"));
  // Only an old .dockercfg.
  const only = tempDir();
  fs.writeFileSync(path.join(only, ".dockercfg"), JSON.stringify({ "old.example.com": { auth: "b2xkOm8=" } }));
  assert.deepEqual(readNodeCredentials(only, undefined, nodeCredentialFiles(only, tempDir(), tempDir())), { "old.example.com": { auth: "b2xkOm8=" } });
});

test("a pull: Pulling, then Pulled with its time, the time including waiting, and the image's size; a failure is the runtime's words", async () => {
  const runtime = new FakeRuntime();
  runtime.pullable.add("reg.example.com/app:1");
  runtime.imageSizes.set("reg.example.com/app:1", 4242);
  let now = 1000;
  runtime.pullImage = ((pull) => async (...args) => {
    now += 1594;
    return pull.apply(runtime, args);
  })(runtime.pullImage);
  const manager = new ImageManager({ runtime, log: { log() {} }, now: () => now, nodeCredentials: () => ({}) });
  const events = [];
  await manager.ensure({ podName: "p", podNamespace: "default", podUid: "u", image: "reg.example.com/app:1", pullPolicy: "", secrets: [] }, (reason, message) => events.push(`${reason}: ${message}`));
  assert.deepEqual(events, [
    'Pulling: Pulling image "reg.example.com/app:1"',
    'Pulled: Successfully pulled image "reg.example.com/app:1" in 1.594s (1.594s including waiting). Image size: 4242 bytes.',
  ]);
  runtime.privateImages.set("reg.example.com/app:2", "robot");
  runtime.pullable.add("reg.example.com/app:2");
  const secret = { metadata: { name: "s", namespace: "default", uid: "s1" }, type: "kubernetes.io/dockerconfigjson", data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { "reg.example.com": { username: "intruder", password: "hunter2" } } })).toString("base64") } };
  await assert.rejects(manager.ensure({ podName: "p", podNamespace: "default", podUid: "u", image: "reg.example.com/app:2", pullPolicy: "IfNotPresent", secrets: [secret] }, () => {}), (error) => {
    assert.equal(error.message, 'failed to pull and unpack image "reg.example.com/app:2": 401 Unauthorized');
    return true;
  });
});

test("the image collector: first-seen and last-used times kept per image, images in use and the sandbox image never planned, a shortfall said as upstream says it", async () => {
  const { loadLibrary } = await import("../../dist/core/library.js");
  const { ImageCollector } = await import("../../dist/images/image-collector.js");
  const library = await loadLibrary();
  const requests = [];
  const plan = (r) => {
    requests.push(r);
    const images = r.images.map((i) => ({ ...i, sizeBytes: BigInt(i.sizeBytes), firstDetectedMs: BigInt(i.firstDetectedMs), lastUsedMs: BigInt(i.lastUsedMs) }));
    const policy = { ...r.policy, minimumAgeMs: BigInt(r.policy.minimumAgeMs), maximumAgeMs: BigInt(r.policy.maximumAgeMs) };
    return library.imageGc.plan(images, BigInt(r.capacityBytes), BigInt(r.availableBytes), policy, BigInt(r.nowMs), BigInt(r.beganMs), r.reclaimAll);
  };
  const runtime = new FakeRuntime();
  for (const image of ["pause", "used", "old", "new"]) runtime.images.add(image);
  runtime.imageSizes.set("old", 300);
  runtime.imageSizes.set("new", 300);
  runtime.imageFs = [{ mountpoint: "/images", usedBytes: 0, inodesUsed: 0 }];
  runtime.listContainers = async () => [{ id: "c1", sandboxId: "s1", name: "app", attempt: 0, image: "used", imageRef: "sha256:used", state: "CONTAINER_EXITED", createdAtNs: 0n, labels: {}, annotations: {} }];
  runtime.sandboxImage = async () => "pause";
  let now = 1_000;
  let available = 500;
  const events = [];
  const collector = new ImageCollector({
    runtime, log: { log() {} }, plan, now: () => now,
    policy: { highThresholdPercent: 85, lowThresholdPercent: 80, minimumAgeMs: 60_000, maximumAgeMs: 0 },
    filesystem: () => ({ capacityBytes: 10_000, availableBytes: available }),
    onNodeEvent: (type, reason, message) => events.push(`${type} ${reason}: ${message}`),
  });
  // First pass: every image just seen, so none old enough, though the disk is 95% full.
  assert.deepEqual((await collector.collect()).removed, []);
  assert.equal(events.length, 1);
  assert.match(events[0], /^Warning FreeDiskSpaceFailed: Failed to garbage collect required amount of images\. Attempted to free 1500 bytes, but only found 0 bytes eligible to free\.$/);
  // A new image appears later; a minute on, the old unused one goes, the new one is too young.
  runtime.images.delete("new");
  now = 30_000;
  await collector.collect();
  runtime.images.add("new");
  now = 61_000;
  available = 9_000;
  assert.deepEqual((await collector.collect()).removed, [], "under the threshold nothing goes");
  available = 500;
  now = 62_000;
  const pass = await collector.collect();
  assert.deepEqual(pass.removed, ["sha256:old"]);
  assert.deepEqual([...runtime.images].sort(), ["new", "pause", "used"]);
  const last = requests.at(-1).images;
  assert.equal(last.find((i) => i.id === "sha256:used").inUse, true, "a dead container's image is in use");
  assert.equal(last.find((i) => i.id === "sha256:pause").pinned, true, "the sandbox image is kept");
  assert.equal(last.find((i) => i.id === "sha256:new").firstDetectedMs, 61_000);
  assert.equal(last.find((i) => i.id === "sha256:old").firstDetectedMs, 1_000);
});

test("pods asking for the same new image at once share one pull; other credentials pull on their own", async () => {
  const runtime = new FakeRuntime();
  runtime.pullable.add("reg.example.com/shared:1");
  let pulls = 0;
  runtime.pullImage = ((pull) => async (...args) => {
    pulls++;
    await new Promise((r) => setTimeout(r, 20));
    return pull.apply(runtime, args);
  })(runtime.pullImage);
  const manager = new ImageManager({ runtime, log: { log() {} }, nodeCredentials: () => ({}) });
  const ask = (secrets = []) => manager.ensure({ podName: "p", podNamespace: "default", podUid: "u", image: "reg.example.com/shared:1", pullPolicy: "Always", secrets }, () => {});
  await Promise.all(Array.from({ length: 20 }, () => ask()));
  assert.equal(pulls, 1, "twenty pods, one pull");
  const secret = { metadata: { name: "s", namespace: "default", uid: "s1" }, type: "kubernetes.io/dockerconfigjson", data: { ".dockerconfigjson": Buffer.from(JSON.stringify({ auths: { "reg.example.com": { username: "u", password: "p" } } })).toString("base64") } };
  await Promise.all([ask(), ask([secret])]);
  assert.equal(pulls, 3, "a pod with its own credentials pulls with them");
});

test("pulled-image records of images gone are pruned after a collection, but not one written since the images were listed", () => {
  const records = new PulledRecords(tempDir());
  records.recordPulled("reg.example.com/a:1", "sha256:a", secret("a", "hash-a"), 1_000);
  records.recordPulled("reg.example.com/b:1", "sha256:b", secret("b", "hash-b"), 1_000);
  records.recordPulled("reg.example.com/c:1", "sha256:c", secret("c", "hash-c"), 5_000);
  records.prune(new Set(["sha256:a"]), 2_000);
  // a present: kept; b gone: pruned (a new pod with other credentials is no longer held to it);
  // c was pulled after the list: kept.
  assert.equal(records.mustAttemptPull("reg.example.com/a:1", "sha256:a", [secret("x", "hash-x")], 6_000), true);
  assert.equal(records.mustAttemptPull("reg.example.com/b:1", "sha256:b", [secret("x", "hash-x")], 6_000), false);
  assert.equal(records.mustAttemptPull("reg.example.com/c:1", "sha256:c", [secret("x", "hash-x")], 6_000), true);
});

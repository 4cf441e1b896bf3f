// The host's volume manager on the real file system of this machine (root: tmpfs mounts are real
// and read back from /proc/self/mountinfo): the atomic writer, each volume type with upstream's
// layout, modes and words, the containers' CRI mounts, tear-down and orphan clean-up; the env
// sources that read configMaps and secrets; the checks of volumes in manifests.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { writeAtomically } from "../../dist/volumes/atomic-writer.js";
import { VolumeManager, VolumeMountError } from "../../dist/volumes/volume-manager.js";
import { TokenManager } from "../../dist/volumes/token-manager.js";
import { FakeObjects } from "../../dist/volumes/fake-objects.js";
import { ObjectStore, objectRefsOf } from "../../dist/volumes/object-store.js";
import { isMountPoint, tmpfsNoswapSupported, unmountAll } from "../../dist/volumes/mounts.js";
import { containerEnvironment, EnvError } from "../../dist/env/container-env.js";
import { podFromApiObject, podFromManifest } from "../../dist/sources/manifest.js";
import { credentialsFor } from "../../dist/images/pull-credentials.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { Executor } from "../../dist/agent/executor.js";

const quiet = { log() {} };
const roots = [];
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-volumes-"));
  roots.push(dir);
  return dir;
}
after(() => {
  // A failed test may leave a tmpfs behind: nothing of these tests stays mounted.
  for (const dir of roots) {
    unmountAll(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const b64 = (text) => Buffer.from(text).toString("base64");
const file = (content, mode = 0o644) => ({ content: Buffer.from(content), mode });

function facts(spec, extra = {}) {
  return {
    name: "web", namespace: "shop", uid: extra.uid ?? "uid-1", labels: { app: "web", tier: "front" }, annotations: { note: 'say "hi"' },
    nodeName: "node-a", serviceAccountName: "builder", hostIps: ["10.0.0.1"], podIps: ["10.1.0.5"],
    containers: [{ name: "app", image: "busybox", command: [], args: [], env: [], requests: [{ name: "memory", quantity: "64Mi" }], limits: [{ name: "memory", quantity: "128Mi" }], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "" }],
    allocatable: { cpu: "2", memory: "4Gi", "ephemeral-storage": "0" },
    spec,
    ...extra,
  };
}

function manager(options = {}) {
  const podsDir = tempDir();
  return { podsDir, volumes: new VolumeManager({ podsDir, log: quiet, allocatableMemoryBytes: () => 4 * 2 ** 30, ...options }) };
}

test("the atomic writer: a version directory, ..data swapped to it, one link per top-level name", () => {
  const dir = path.join(tempDir(), "cfg");
  assert.equal(writeAtomically(dir, new Map([["a", file("one")], ["sub/b", file("two", 0o600)]]), { readOnly: true }), true);
  const data = fs.readlinkSync(path.join(dir, "..data"));
  assert.match(data, /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./);
  assert.equal(fs.readlinkSync(path.join(dir, "a")), "..data/a");
  assert.equal(fs.readlinkSync(path.join(dir, "sub")), "..data/sub");
  assert.equal(fs.readFileSync(path.join(dir, "sub/b"), "utf8"), "two");
  assert.equal(fs.statSync(path.join(dir, "sub/b")).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.join(dir, "a")).mode & 0o777, 0o644);

  // The same files again: nothing written, the version stays.
  assert.equal(writeAtomically(dir, new Map([["a", file("one")], ["sub/b", file("two", 0o600)]]), { readOnly: true }), false);
  assert.equal(fs.readlinkSync(path.join(dir, "..data")), data);

  // An update: a new version, the old one and the dropped key gone, the kept link untouched.
  assert.equal(writeAtomically(dir, new Map([["a", file("three")]]), { readOnly: true }, Date.now() + 1000), true);
  const next = fs.readlinkSync(path.join(dir, "..data"));
  assert.notEqual(next, data);
  assert.equal(fs.readFileSync(path.join(dir, "a"), "utf8"), "three");
  assert.deepEqual(fs.readdirSync(dir).sort(), ["..data", next, "a"].sort());
});

test("the atomic writer refuses a path that leads out, and changes nothing", () => {
  const dir = path.join(tempDir(), "cfg");
  writeAtomically(dir, new Map([["a", file("one")]]), { readOnly: true });
  for (const bad of ["../x", "/etc/passwd", "..hidden", "a/../../x"]) {
    assert.throws(() => writeAtomically(dir, new Map([[bad, file("evil")]]), { readOnly: true }), /invalid path/);
  }
  assert.equal(fs.readFileSync(path.join(dir, "a"), "utf8"), "one");
});

test("fsGroup: files get the group and group read, directories setgid", () => {
  const dir = path.join(tempDir(), "cfg");
  writeAtomically(dir, new Map([["k", file("v", 0o600)]]), { gid: 2000, readOnly: true });
  const stat = fs.statSync(path.join(dir, "k"));
  assert.equal(stat.gid, 2000);
  assert.equal(stat.mode & 0o777, 0o640);
  assert.ok(fs.statSync(path.join(dir, "..data")).mode & 0o2000);
});

test("emptyDir: on disk 0777 under kubernetes.io~empty-dir; Memory is a tmpfs sized by the pod's limit or sizeLimit", async () => {
  const { podsDir, volumes } = manager();
  const spec = { volumes: [{ name: "scratch", emptyDir: {} }, { name: "ram", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } }, { name: "ram2", emptyDir: { medium: "Memory" } }] };
  await volumes.setUp(facts(spec), ["scratch", "ram", "ram2"]);
  const base = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~empty-dir");
  assert.equal(fs.statSync(path.join(base, "scratch")).mode & 0o777, 0o777);
  assert.equal(isMountPoint(path.join(base, "scratch")), false);
  assert.equal(isMountPoint(path.join(base, "ram")), true);
  assert.equal(fs.statfsSync(path.join(base, "ram")).blocks * fs.statfsSync(path.join(base, "ram")).bsize, 16 * 2 ** 20);
  // No sizeLimit: the pod's memory limit (128Mi) bounds it, not the node's allocatable.
  assert.equal(fs.statfsSync(path.join(base, "ram2")).blocks * fs.statfsSync(path.join(base, "ram2")).bsize, 128 * 2 ** 20);
  // Set up again (a refresh): nothing mounted twice.
  await volumes.setUp(facts(spec), ["ram"]);
  assert.equal(volumes.mountsLeft("uid-1").length, 2);
  volumes.tearDown("uid-1");
  assert.deepEqual(volumes.mountsLeft("uid-1"), []);
  assert.equal(fs.existsSync(path.join(podsDir, "uid-1", "volumes")), false);
});

test("configMap: every key, or items with paths and modes; optional; upstream's words when missing", async () => {
  const objects = new FakeObjects();
  objects.put("configmaps", "shop", "settings", { data: { "app.conf": "port=80", mode: "fast" }, binaryData: { "logo.bin": b64("\u0001\u0002") } });
  const { podsDir, volumes } = manager({ objects });
  const spec = {
    volumes: [
      { name: "all", configMap: { name: "settings" } },
      { name: "some", configMap: { name: "settings", defaultMode: 0o600, items: [{ key: "app.conf", path: "conf/app.conf", mode: 0o640 }, { key: "mode", path: "mode" }] } },
      { name: "maybe", configMap: { name: "absent", optional: true } },
      { name: "missing", configMap: { name: "absent" } },
      { name: "badkey", configMap: { name: "settings", items: [{ key: "nope", path: "x" }] } },
    ],
  };
  await volumes.setUp(facts(spec), ["all", "some", "maybe"]);
  const base = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~configmap");
  assert.deepEqual(fs.readdirSync(path.join(base, "all")).filter((n) => !n.startsWith("..")).sort(), ["app.conf", "logo.bin", "mode"]);
  assert.equal(fs.readFileSync(path.join(base, "all", "app.conf"), "utf8"), "port=80");
  assert.deepEqual([...fs.readFileSync(path.join(base, "all", "logo.bin"))], [1, 2]);
  assert.equal(fs.statSync(path.join(base, "some", "conf/app.conf")).mode & 0o777, 0o640);
  assert.equal(fs.statSync(path.join(base, "some", "mode")).mode & 0o777, 0o600);
  assert.deepEqual(fs.readdirSync(path.join(base, "maybe")).filter((n) => !n.startsWith("..")), []);
  await assert.rejects(volumes.setUp(facts(spec), ["missing"]), { message: 'MountVolume.SetUp failed for volume "missing" : configmap "absent" not found' });
  await assert.rejects(volumes.setUp(facts(spec), ["badkey"]), { message: 'MountVolume.SetUp failed for volume "badkey" : configmap references non-existent config key: nope' });

  // An update reaches the files at the next set-up (the core's refresh), as one swap.
  const before = fs.readlinkSync(path.join(base, "all", "..data"));
  objects.put("configmaps", "shop", "settings", { data: { "app.conf": "port=8080" } });
  await volumes.setUp(facts(spec), ["all"]);
  assert.notEqual(fs.readlinkSync(path.join(base, "all", "..data")), before);
  assert.equal(fs.readFileSync(path.join(base, "all", "app.conf"), "utf8"), "port=8080");
  assert.equal(fs.existsSync(path.join(base, "all", "mode")), false);
});

test("a configMap larger than the apiserver allows is refused, not written", async () => {
  const objects = new FakeObjects();
  objects.put("configmaps", "shop", "huge", { data: { big: "x".repeat(2 * 1024 * 1024) } });
  const { volumes } = manager({ objects });
  await assert.rejects(volumes.setUp(facts({ volumes: [{ name: "huge", configMap: { name: "huge" } }] }), ["huge"]), /MountVolume.SetUp failed for volume "huge" : configmap "huge" holds 2097152 bytes/);
});

test("secret: decoded, on a tmpfs, secretName; the missing key's words", async () => {
  const objects = new FakeObjects();
  objects.put("secrets", "shop", "creds", { data: { password: b64("hunter2") } });
  const { podsDir, volumes } = manager({ objects });
  const spec = { volumes: [{ name: "creds", secret: { secretName: "creds", defaultMode: 0o400 } }, { name: "bad", secret: { secretName: "creds", items: [{ key: "user", path: "u" }] } }, { name: "gone", secret: { secretName: "nope" } }] };
  await volumes.setUp(facts(spec), ["creds"]);
  const dir = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~secret", "creds");
  assert.equal(isMountPoint(dir), true);
  // Sized as a memory-backed emptyDir (the pod's limit, 128Mi), and never swapped where tmpfs can say so.
  assert.equal(fs.statfsSync(dir).blocks * fs.statfsSync(dir).bsize, 128 * 2 ** 20);
  const options = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").find((l) => l.split(" ")[4] === fs.realpathSync(dir))?.split(" - ")[1] ?? "";
  if (tmpfsNoswapSupported()) assert.match(options, /noswap/);
  assert.equal(fs.readFileSync(path.join(dir, "password"), "utf8"), "hunter2");
  assert.equal(fs.statSync(path.join(dir, "password")).mode & 0o777, 0o400);
  await assert.rejects(volumes.setUp(facts(spec), ["bad"]), { message: 'MountVolume.SetUp failed for volume "bad" : references non-existent secret key: user' });
  await assert.rejects(volumes.setUp(facts(spec), ["gone"]), { message: 'MountVolume.SetUp failed for volume "gone" : secret "nope" not found' });
  volumes.tearDown("uid-1");
  assert.equal(isMountPoint(dir), false);
});

test("downwardAPI: labels and annotations as key=\"value\" lines, fields, resources", async () => {
  const { podsDir, volumes } = manager();
  const spec = {
    volumes: [{
      name: "info",
      downwardAPI: {
        items: [
          { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
          { path: "annotations", fieldRef: { fieldPath: "metadata.annotations" } },
          { path: "name", fieldRef: { fieldPath: "metadata.name" } },
          { path: "tier", fieldRef: { fieldPath: "metadata.labels['tier']" } },
          { path: "mem", resourceFieldRef: { containerName: "app", resource: "limits.memory", divisor: "1Mi" } },
          // As the apiserver stores them: divisor "0" (its default, meaning 1); no cpu limit set,
          // so the node's allocatable is written.
          { path: "cpu", resourceFieldRef: { containerName: "app", resource: "limits.cpu", divisor: "0" } },
          { path: "cpu-m", resourceFieldRef: { containerName: "app", resource: "limits.cpu", divisor: "1m" } },
        ],
      },
    }],
  };
  await volumes.setUp(facts(spec), ["info"]);
  const dir = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~downward-api", "info");
  assert.equal(fs.readFileSync(path.join(dir, "labels"), "utf8"), 'app="web"\ntier="front"');
  assert.equal(fs.readFileSync(path.join(dir, "annotations"), "utf8"), 'note="say \\"hi\\""');
  assert.equal(fs.readFileSync(path.join(dir, "name"), "utf8"), "web");
  assert.equal(fs.readFileSync(path.join(dir, "tier"), "utf8"), "front");
  assert.equal(fs.readFileSync(path.join(dir, "mem"), "utf8"), "128");
  assert.equal(fs.readFileSync(path.join(dir, "cpu"), "utf8"), "2");
  assert.equal(fs.readFileSync(path.join(dir, "cpu-m"), "utf8"), "2000");
  volumes.tearDown("uid-1");
});

test("projected: a token bound to the pod, the cluster CA, the namespace, in one directory", async () => {
  const requests = [];
  const client = {
    async request(method, url, body) {
      requests.push({ method, url, body });
      return { status: { token: `token-${requests.length}`, expirationTimestamp: new Date(Date.now() + 3607_000).toISOString() } };
    },
  };
  const objects = new FakeObjects();
  objects.put("configmaps", "shop", "kube-root-ca.crt", { data: { "ca.crt": "-----BEGIN CERTIFICATE-----" } });
  const tokens = new TokenManager(client);
  const { podsDir, volumes } = manager({ objects, tokens });
  const spec = {
    serviceAccountName: "builder",
    volumes: [{
      name: "kube-api-access-x1",
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
        ],
      },
    }],
  };
  await volumes.setUp(facts(spec), ["kube-api-access-x1"]);
  const dir = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~projected", "kube-api-access-x1");
  assert.equal(fs.readFileSync(path.join(dir, "token"), "utf8"), "token-1");
  assert.equal(fs.readFileSync(path.join(dir, "namespace"), "utf8"), "shop");
  assert.match(fs.readFileSync(path.join(dir, "ca.crt"), "utf8"), /BEGIN CERTIFICATE/);
  assert.equal(requests[0].method, "POST");
  assert.equal(requests[0].url, "/api/v1/namespaces/shop/serviceaccounts/builder/token");
  assert.deepEqual(requests[0].body.spec, { audiences: [], expirationSeconds: 3607, boundObjectRef: { apiVersion: "v1", kind: "Pod", name: "web", uid: "uid-1" } });
  // A refresh before 80% of its life keeps the token: no second TokenRequest.
  await volumes.setUp(facts(spec), ["kube-api-access-x1"]);
  assert.equal(requests.length, 1);
  volumes.tearDown("uid-1");
});

test("the token manager refreshes at 80% of a token's life or after 24 hours", () => {
  const issued = 1_000_000;
  assert.equal(TokenManager.needsRefresh({ issuedAtMs: issued, expiresAtMs: issued + 3600_000 }, issued + 2879_000), false);
  assert.equal(TokenManager.needsRefresh({ issuedAtMs: issued, expiresAtMs: issued + 3600_000 }, issued + 2881_000), true);
  assert.equal(TokenManager.needsRefresh({ issuedAtMs: issued, expiresAtMs: issued + 10 * 86400_000 }, issued + 86400_000 + 1), true);
});

test("hostPath: every type checked with upstream's words; the OrCreate types create", async () => {
  const root = tempDir();
  fs.writeFileSync(path.join(root, "a-file"), "x");
  const { volumes } = manager();
  const cases = [
    ["Directory", path.join(root, "nope"), `hostPath type check failed: ${path.join(root, "nope")} is not a directory`],
    ["Directory", path.join(root, "a-file"), `hostPath type check failed: ${path.join(root, "a-file")} is not a directory`],
    ["File", root, `hostPath type check failed: ${root} is not a file`],
    ["Socket", path.join(root, "a-file"), `hostPath type check failed: ${path.join(root, "a-file")} is not a socket file`],
    ["CharDevice", path.join(root, "a-file"), `hostPath type check failed: ${path.join(root, "a-file")} is not a character device`],
    ["BlockDevice", "/dev/null", `hostPath type check failed: /dev/null is not a block device`],
  ];
  for (const [type, p, message] of cases) {
    await assert.rejects(volumes.setUp(facts({ volumes: [{ name: "h", hostPath: { path: p, type } }] }), ["h"]), { message: `MountVolume.SetUp failed for volume "h" : ${message}` }, `${type} ${p}`);
  }
  await volumes.setUp(facts({ volumes: [{ name: "d", hostPath: { path: path.join(root, "made/dir"), type: "DirectoryOrCreate" } }, { name: "f", hostPath: { path: path.join(root, "made.txt"), type: "FileOrCreate" } }, { name: "c", hostPath: { path: "/dev/null", type: "CharDevice" } }] }), ["d", "f", "c"]);
  assert.ok(fs.statSync(path.join(root, "made/dir")).isDirectory());
  assert.ok(fs.statSync(path.join(root, "made.txt")).isFile());
  // FileOrCreate makes the file, never its directory (upstream's rule).
  const orphan = path.join(root, "missing-dir", "f.txt");
  await assert.rejects(volumes.setUp(facts({ volumes: [{ name: "f", hostPath: { path: orphan, type: "FileOrCreate" } }] }), ["f"]), (e) => e.message.endsWith(`open ${orphan}: no such file or directory`));
  assert.equal(fs.existsSync(path.join(root, "missing-dir")), false);
});

test("a container's mounts: configMaps read-only, subPath made inside the volume, subPathExpr from env, propagation", async () => {
  const objects = new FakeObjects();
  objects.put("configmaps", "shop", "settings", { data: { "app.conf": "port=80" } });
  const { podsDir, volumes } = manager({ objects });
  const spec = {
    volumes: [{ name: "cfg", configMap: { name: "settings" } }, { name: "scratch", emptyDir: {} }, { name: "host", hostPath: { path: "/tmp" } }],
    containers: [{
      name: "app",
      volumeMounts: [
        { name: "cfg", mountPath: "/etc/app" },
        { name: "scratch", mountPath: "/data", subPath: "logs/app" },
        { name: "scratch", mountPath: "/per-pod", subPathExpr: "$(POD_NAME)" },
        { name: "host", mountPath: "/host", readOnly: true, mountPropagation: "HostToContainer" },
      ],
    }],
  };
  await volumes.setUp(facts(spec), ["cfg", "scratch", "host"]);
  const mounts = volumes.mountsFor(facts(spec), "app", [{ name: "POD_NAME", value: "web-0" }]);
  const base = path.join(podsDir, "uid-1", "volumes");
  assert.deepEqual(mounts, [
    { containerPath: "/etc/app", hostPath: path.join(base, "kubernetes.io~configmap", "cfg"), readonly: true, propagation: "private" },
    { containerPath: "/data", hostPath: path.join(podsDir, "uid-1", "volume-subpaths", "scratch", "app", "1"), readonly: false, propagation: "private" },
    { containerPath: "/per-pod", hostPath: path.join(podsDir, "uid-1", "volume-subpaths", "scratch", "app", "2"), readonly: false, propagation: "private" },
    { containerPath: "/host", hostPath: "/tmp", readonly: true, propagation: "host-to-container" },
  ]);
  assert.ok(fs.statSync(path.join(base, "kubernetes.io~empty-dir", "scratch", "logs/app")).isDirectory());
  // What the runtime gets is a bind of the directory itself; a second create reuses it.
  fs.writeFileSync(path.join(base, "kubernetes.io~empty-dir", "scratch", "logs/app", "f"), "x");
  assert.equal(fs.readFileSync(path.join(mounts[1].hostPath, "f"), "utf8"), "x");
  assert.deepEqual(volumes.mountsFor(facts(spec), "app", [{ name: "POD_NAME", value: "web-0" }]), mounts);

  // A symlink a container left in its emptyDir must not lead a later subPath out of the volume;
  // the pod is told which mount failed, not where the link leads.
  fs.symlinkSync("/etc", path.join(base, "kubernetes.io~empty-dir", "scratch", "escape"));
  const evil = { ...spec, containers: [{ name: "app", volumeMounts: [{ name: "scratch", mountPath: "/x", subPath: "escape" }] }] };
  assert.throws(() => volumes.mountsFor(facts(evil), "app", []), (e) => e instanceof VolumeMountError && e.message === `failed to prepare subPath for volumeMount "scratch" of container "app"`);
  volumes.tearDown("uid-1");
  assert.deepEqual(volumes.mountsLeft("uid-1"), []);
  assert.ok(fs.existsSync("/etc/hostname") || fs.existsSync("/etc/passwd"), "tear-down removed nothing through a mount");
});

test("tear-down leaves nothing mounted; orphaned pod directories are cleaned, desired ones kept", async () => {
  const objects = new FakeObjects();
  objects.put("secrets", "shop", "creds", { data: { k: b64("v") } });
  const { podsDir, volumes } = manager({ objects });
  const spec = { volumes: [{ name: "creds", secret: { secretName: "creds" } }, { name: "ram", emptyDir: { medium: "Memory" } }] };
  await volumes.setUp(facts(spec, { uid: "orphan" }), ["creds", "ram"]);
  await volumes.setUp(facts(spec, { uid: "kept" }), ["creds", "ram"]);
  assert.equal(volumes.mountsLeft("orphan").length, 2);
  assert.deepEqual(volumes.cleanupOrphans(new Set(["kept"])), ["orphan"]);
  assert.deepEqual(volumes.mountsLeft("orphan"), []);
  assert.equal(fs.existsSync(path.join(podsDir, "orphan")), false);
  assert.equal(volumes.mountsLeft("kept").length, 2);
  volumes.tearDown("kept");
  assert.deepEqual(volumes.mountsLeft(), []);
});

test("env: configMapKeyRef, secretKeyRef and envFrom resolved at creation, optional honoured, upstream's words", () => {
  const spec = {
    containers: [{
      name: "app",
      envFrom: [{ configMapRef: { name: "settings" } }, { prefix: "S_", secretRef: { name: "creds" } }],
      env: [
        { name: "MODE", valueFrom: { configMapKeyRef: { name: "settings", key: "mode" } } },
        { name: "PASS", valueFrom: { secretKeyRef: { name: "creds", key: "password" } } },
        { name: "MAYBE", valueFrom: { configMapKeyRef: { name: "settings", key: "absent", optional: true } } },
        { name: "URL", value: "http://$(HOST):80/$(MODE)" },
      ],
    }],
  };
  const core = { name: "app", image: "busybox", command: [], args: [], env: [{ name: "MODE", value: "" }, { name: "PASS", value: "" }, { name: "MAYBE", value: "" }, { name: "URL", value: "http://$(HOST):80/$(MODE)" }], requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "" };
  const envObjects = new Map([
    ["configmaps/settings", { data: { mode: "fast", HOST: "db" } }],
    ["secrets/creds", { data: { password: b64("hunter2") } }],
  ]);
  const { env } = containerEnvironment(core, facts(spec, { envObjects }));
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.name, e.value])), { mode: "fast", HOST: "db", S_password: "hunter2", MODE: "fast", PASS: "hunter2", URL: "http://db:80/fast" });

  const missingKey = { ...spec, containers: [{ name: "app", env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "settings", key: "nope" } } }] }] };
  assert.throws(() => containerEnvironment({ ...core, env: [{ name: "X", value: "" }] }, facts(missingKey, { envObjects })), (e) => e instanceof EnvError && e.message === "couldn't find key nope in ConfigMap shop/settings");
  const missingObject = { ...spec, containers: [{ name: "app", env: [{ name: "X", valueFrom: { secretKeyRef: { name: "gone", key: "k" } } }] }] };
  assert.throws(() => containerEnvironment({ ...core, env: [{ name: "X", value: "" }] }, facts(missingObject, { envObjects })), (e) => e instanceof EnvError && e.message === 'secret "gone" not found');
});

test("objectRefsOf: every configMap and secret a pod uses, once", () => {
  const pod = {
    metadata: { namespace: "shop" },
    spec: {
      volumes: [{ name: "a", configMap: { name: "cm" } }, { name: "b", secret: { secretName: "s1" } }, { name: "c", projected: { sources: [{ configMap: { name: "kube-root-ca.crt" } }, { secret: { name: "s2" } }, { serviceAccountToken: { path: "t" } }] } }],
      containers: [{ name: "x", env: [{ name: "E", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } }], envFrom: [{ secretRef: { name: "s3" } }] }],
      imagePullSecrets: [{ name: "regcred" }],
    },
  };
  assert.deepEqual(objectRefsOf(pod).map((r) => `${r.resource}/${r.name}`).sort(), ["configmaps/cm", "configmaps/kube-root-ca.crt", "secrets/regcred", "secrets/s1", "secrets/s2", "secrets/s3"]);
});

test("the Get strategy asks the apiserver each time; 404 is 'does not exist', a refusal is an error", async () => {
  const seen = [];
  const client = {
    async request(method, url) {
      seen.push(url);
      if (url.endsWith("/forbidden")) throw Object.assign(new Error('secrets "forbidden" is forbidden: User "system:node:n" cannot get resource'), { code: 403 });
      if (url.endsWith("/absent")) {
        const { ApiStatusError } = await import("../../dist/cluster/api-client.js");
        throw new ApiStatusError(404, "NotFound", 'configmaps "absent" not found');
      }
      return { metadata: { name: url.split("/").pop() }, data: { k: "v" } };
    },
  };
  const store = new ObjectStore({ client, log: quiet, strategy: "Get" });
  assert.deepEqual((await store.get({ resource: "configmaps", namespace: "shop", name: "cm" })).data, { k: "v" });
  await store.get({ resource: "configmaps", namespace: "shop", name: "cm" });
  assert.equal(seen.length, 2);
  assert.equal(await store.get({ resource: "configmaps", namespace: "shop", name: "absent" }), undefined);
  await assert.rejects(store.get({ resource: "secrets", namespace: "shop", name: "forbidden" }), /is forbidden/);
  assert.equal(seen[0], "/api/v1/namespaces/shop/configmaps/cm");
  store.stop();
});

test("manifests: volumes and mounts checked with the apiserver's words", () => {
  const pod = (spec, containerExtra = {}) => ({
    apiVersion: "v1", kind: "Pod",
    metadata: { name: "p", namespace: "default", uid: "u-1" },
    spec: { containers: [{ name: "c", image: "busybox", ...containerExtra }], ...spec },
  });
  const problems = (doc, fromApi = true) => {
    try {
      fromApi ? podFromApiObject(doc) : podFromManifest(doc, { nodeName: "n", source: "f.yaml", documentIndex: 0 });
      return [];
    } catch (error) {
      return error.problems.map((p) => `${p.field}: ${p.detail}`);
    }
  };
  assert.deepEqual(problems(pod({ volumes: [{ name: "v", emptyDir: {} }] }, { volumeMounts: [{ name: "w", mountPath: "/w" }] })), ['spec.containers[0].volumeMounts[0].name: Not found: "w"']);
  assert.deepEqual(problems(pod({ volumes: [{ name: "v", emptyDir: {} }] }, { volumeMounts: [{ name: "v", mountPath: "/w", subPath: "../up" }, { name: "v", mountPath: "/x", subPath: "/abs" }] })), [
    `spec.containers[0].volumeMounts[0].subPath: Invalid value: "../up": must not contain '..'`,
    `spec.containers[0].volumeMounts[1].subPath: Invalid value: "/abs": must be a relative path`,
  ]);
  assert.deepEqual(problems(pod({ volumes: [{ name: "h", hostPath: { path: "/x", type: "Folder" } }] })), ['spec.volumes[0].hostPath.type: Unsupported value: "Folder": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"']);
  assert.deepEqual(problems(pod({ volumes: [{ name: "s", secret: { secretName: "x", items: [{ key: "../etc", path: "p" }] } }] })), [
    `spec.volumes[0].secret.items[0].key: Invalid value: "../etc": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
  ]);
  assert.deepEqual(problems(pod({ volumes: [{ name: "n", nfs: { server: "x", path: "/" } }] })), ["spec.volumes[0].nfs: Unsupported field: nanolet has no in-tree volume plugins; use a CSI driver"]);
  assert.deepEqual(problems(pod({ volumes: [{ name: "v" }] })), ["spec.volumes[0]: Required value: must specify a volume type"]);
  assert.deepEqual(problems(pod({ volumes: [{ name: "c", configMap: { name: "cm" } }] }), false), ["spec.volumes[0].configMap: Forbidden: a static pod may not use a volume backed by apiserver objects (its node may read only the objects of pods bound to it)"]);
  // What the core gets: names, types, and the downward API's version.
  const spec = podFromApiObject(pod({ volumes: [{ name: "a", emptyDir: {} }, { name: "b", downwardAPI: { items: [{ path: "l", fieldRef: { fieldPath: "metadata.labels" } }] } }] }, { volumeMounts: [{ name: "b", mountPath: "/b" }] }));
  // Only a mounted volume is set up, as upstream's volume manager skips the others.
  assert.deepEqual(spec.volumes.map((v) => [v.name, v.kind, v.used, v.sourceVersion.length > 0]), [["a", "empty-dir", false, false], ["b", "downward-api", true, true]]);
});

test("imagePullSecrets: the credentials of matching registries, most specific first; dockercfg and auth strings read", () => {
  const secret = (type, key, body) => ({ type, data: { [key]: b64(JSON.stringify(body)) } });
  const secrets = [
    secret("kubernetes.io/dockerconfigjson", ".dockerconfigjson", { auths: {
      "registry.example.com": { username: "all", password: "a" },
      "https://registry.example.com/team": { auth: b64("team:t") },
      "*.mirror.example.com": { username: "mirror", password: "m" },
      "https://index.docker.io/v1/": { username: "hub", password: "h" },
    } }),
    secret("kubernetes.io/dockercfg", ".dockercfg", { "other.example.com:5000": { username: "old", password: "o" } }),
    { type: "Opaque", data: { password: b64("x") } },
  ];
  const users = (image) => credentialsFor(image, secrets).map((c) => `${c.username}:${c.password}`);
  assert.deepEqual(users("registry.example.com/team/app:1"), ["team:t", "all:a"]);
  assert.deepEqual(users("registry.example.com/other/app"), ["all:a"]);
  assert.deepEqual(users("eu.mirror.example.com/app"), ["mirror:m"]);
  assert.deepEqual(users("busybox"), ["hub:h"]);
  assert.deepEqual(users("other.example.com:5000/x@sha256:" + "a".repeat(64)), ["old:o"]);
  assert.deepEqual(users("quay.io/app"), []);
  // No server address: containerd refuses a bare host:port there, and the image names its registry.
  assert.equal(credentialsFor("registry.example.com/x", secrets)[0].serverAddress, undefined);
});

test("imagePullSecrets reach CRI PullImage: each credential in turn, a missing secret logged, not fatal", async () => {
  const runtime = new FakeRuntime();
  runtime.pullable.add("registry.example.com/team/app:1");
  runtime.privateImages.set("registry.example.com/team/app:1", "robot");
  const objects = new FakeObjects();
  const auths = { "registry.example.com": { username: "wrong", password: "w" }, "registry.example.com/team": { username: "robot", password: "r" } };
  objects.put("secrets", "shop", "regcred", { type: "kubernetes.io/dockerconfigjson", data: { ".dockerconfigjson": b64(JSON.stringify({ auths })) } });
  const warnings = [];
  const log = { log: (level, msg, fields) => level === "warn" && warnings.push(`${msg} ${fields.secret}`) };
  const spec = { imagePullSecrets: [{ name: "absent" }, { name: "regcred" }], containers: [{ name: "app", image: "registry.example.com/team/app:1" }] };
  const executor = new Executor({ runtime, podLogsDir: tempDir(), log, objects, podFacts: () => facts(spec) });
  const sandbox = { podUid: "uid-1", podName: "web", podNamespace: "shop", attempt: 0, hostNetwork: true, terminationGracePeriodSeconds: 30n, cgroupParent: "" };
  const run = await executor.execute({ id: 1n, podUid: "uid-1", podNamespace: "shop", podName: "web", kind: { tag: "run-sandbox", val: sandbox } });
  const container = { name: "app", image: "registry.example.com/team/app:1", imagePullPolicy: "IfNotPresent", command: [], args: [], env: [], requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "" };
  const resources = { cpuShares: 2n, cpuWeight: 1n, cpuQuotaUs: 0n, cpuPeriodUs: 100000n, memoryLimitBytes: 0n, oomScoreAdj: 1000 };
  const create = await executor.execute({ id: 2n, podUid: "uid-1", podNamespace: "shop", podName: "web", kind: { tag: "create-container", val: { sandboxId: run.outcome.val, sandbox, attempt: 0, specHash: "h", container, resources } } });
  assert.equal(create.outcome.tag, "ok", JSON.stringify(create.outcome));
  // The more specific path first: robot works at once.
  assert.deepEqual(runtime.pullAuths.map((a) => a?.username), ["robot"]);
  assert.deepEqual(warnings, ["Unable to retrieve pull secret; the image pull may not succeed absent"]);
  // Without the secret the pull is anonymous and the registry says no.
  const bare = new Executor({ runtime, podLogsDir: tempDir(), log, objects: new FakeObjects(), podFacts: () => facts({ containers: spec.containers }) });
  runtime.images.delete("registry.example.com/team/app:1");
  const refused = await bare.execute({ id: 3n, podUid: "uid-1", podNamespace: "shop", podName: "web", kind: { tag: "create-container", val: { sandboxId: run.outcome.val, sandbox, attempt: 1, specHash: "h", container, resources } } });
  assert.equal(refused.outcome.tag, "err");
  assert.equal(refused.outcome.val.kind, "image-pull");
  assert.match(refused.outcome.val.message, /401 Unauthorized/);
});

test("the Watch strategy: one streaming watch per object by metadata.name, shared by pods, closed with the last; an immutable object is not watched", async () => {
  const opened = [];
  let lists = 0;
  const objects = {
    "/api/v1/namespaces/shop/configmaps": { metadata: { name: "settings", uid: "c1", resourceVersion: "5" }, data: { k: "v" } },
    "/api/v1/namespaces/shop/secrets": { metadata: { name: "frozen", uid: "s1", resourceVersion: "6" }, immutable: true, data: { k: b64("v") } },
  };
  const client = {
    async request() {
      lists++;
      throw new Error("a streaming list needs no list request");
    },
    watch(url, onEvent, signal) {
      opened.push(decodeURIComponent(url));
      // The apiserver's streaming list: the objects, then a bookmark marking their end.
      onEvent({ type: "ADDED", object: objects[url.split("?")[0]] });
      onEvent({ type: "BOOKMARK", object: { metadata: { resourceVersion: "7", annotations: { "k8s.io/initial-events-end": "true" } } } });
      return new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    },
  };
  const store = new ObjectStore({ client, log: quiet });
  const cm = { resource: "configmaps", namespace: "shop", name: "settings" };
  const secret = { resource: "secrets", namespace: "shop", name: "frozen" };
  store.register("pod-a", [cm, secret]);
  store.register("pod-b", [cm]);
  assert.equal(store.watchCount, 2);
  assert.deepEqual((await store.get(cm)).data, { k: "v" });
  assert.equal(lists, 0);
  assert.deepEqual(opened.map((u) => u.split("&timeoutSeconds")[0]).sort(), [
    "/api/v1/namespaces/shop/configmaps?fieldSelector=metadata.name=settings&watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=",
    "/api/v1/namespaces/shop/secrets?fieldSelector=metadata.name=frozen&watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=",
  ]);
  // An immutable secret: read once, then its watch is closed and the copy kept.
  assert.equal((await store.get(secret)).immutable, true);
  assert.equal(store.watchCount, 1);
  assert.equal((await store.get(secret)).metadata.name, "frozen");
  store.retain(new Set(["pod-b"]));
  assert.equal(store.watchCount, 1, "pod-b still uses the configMap");
  store.retain(new Set());
  assert.equal(store.watchCount, 0);
  assert.equal(opened.length, 2, "one watch per object, not one per pod");
  store.stop();
});

test("a streaming list the apiserver refuses falls back to a list and a watch", async () => {
  const seen = [];
  const client = {
    async request(_method, url) {
      seen.push(`list ${decodeURIComponent(url)}`);
      return { metadata: { resourceVersion: "3" }, items: [{ metadata: { name: "settings", uid: "c1" }, data: { k: "v" } }] };
    },
    async watch(url, _onEvent, signal) {
      seen.push(`watch ${decodeURIComponent(url).includes("sendInitialEvents") ? "streaming" : "from 3"}`);
      const { ApiStatusError } = await import("../../dist/cluster/api-client.js");
      if (url.includes("sendInitialEvents")) throw new ApiStatusError(422, "Invalid", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled");
      // An update on the plain watch after the fallback list must reach the store.
      setImmediate(() => _onEvent({ type: "MODIFIED", object: { metadata: { name: "settings", uid: "c1", resourceVersion: "4" }, data: { k: "v2" } } }));
      return new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    },
  };
  const store = new ObjectStore({ client, log: quiet });
  const cm = { resource: "configmaps", namespace: "shop", name: "settings" };
  store.register("pod-a", [cm]);
  assert.deepEqual((await store.get(cm)).data, { k: "v" });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen.map((l) => l.split("?")[0] === l ? l : l.replace(/\?.*/, "")), ["watch streaming", "list /api/v1/namespaces/shop/configmaps", "watch from 3"]);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual((await store.get(cm)).data, { k: "v2" });
  store.stop();
});


test("fsGroup on an emptyDir: what is in it gets the group at set-up; OnRootMismatch skips a root already right", async () => {
  const { podsDir, volumes } = manager();
  const spec = (policy) => ({ securityContext: { fsGroup: 3456, ...(policy ? { fsGroupChangePolicy: policy } : {}) }, volumes: [{ name: "data", emptyDir: {} }] });
  await volumes.setUp(facts(spec()), ["data"]);
  const dir = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~empty-dir", "data");
  assert.equal(fs.statSync(dir).gid, 3456);
  assert.equal(fs.statSync(dir).mode & 0o7777, 0o2777);
  // A file a container left behind (an agent restart sets the volume up again).
  fs.mkdirSync(path.join(dir, "sub"));
  fs.writeFileSync(path.join(dir, "sub", "f"), "x", { mode: 0o600 });
  fs.chownSync(path.join(dir, "sub", "f"), 0, 0); // a container running as root:root wrote it
  await volumes.setUp(facts(spec("OnRootMismatch")), ["data"]);
  assert.equal(fs.statSync(path.join(dir, "sub", "f")).gid, 0, "the root was right: no walk");
  await volumes.setUp(facts(spec()), ["data"]);
  assert.equal(fs.statSync(path.join(dir, "sub", "f")).gid, 3456);
  assert.equal(fs.statSync(path.join(dir, "sub", "f")).mode & 0o777, 0o660);
  assert.equal(fs.statSync(path.join(dir, "sub")).mode & 0o2070, 0o2070);
  volumes.tearDown("uid-1");
});

test("emptyDirs with a sizeLimit are measured for the core's local storage eviction; others are not", async () => {
  const { podsDir, volumes } = manager();
  const spec = { volumes: [{ name: "disk", emptyDir: { sizeLimit: "1Mi" } }, { name: "ram", emptyDir: { medium: "Memory", sizeLimit: "8Mi" } }, { name: "free", emptyDir: {} }] };
  await volumes.setUp(facts(spec), ["disk", "ram", "free"]);
  const base = path.join(podsDir, "uid-1", "volumes", "kubernetes.io~empty-dir");
  fs.mkdirSync(path.join(base, "disk", "deep"));
  fs.writeFileSync(path.join(base, "disk", "deep", "blob"), Buffer.alloc(2 * 1024 * 1024, 1));
  fs.writeFileSync(path.join(base, "ram", "blob"), Buffer.alloc(3 * 1024 * 1024, 1));
  fs.writeFileSync(path.join(base, "free", "blob"), Buffer.alloc(1024 * 1024, 1));
  const usage = Object.fromEntries(volumes.emptyDirUsage().map((u) => [`${u.podUid}/${u.volume}`, Number(u.usedBytes)]));
  assert.deepEqual(Object.keys(usage).sort(), ["uid-1/disk", "uid-1/ram"]);
  assert.ok(usage["uid-1/disk"] >= 2 * 1024 * 1024 && usage["uid-1/disk"] < 3 * 1024 * 1024, String(usage["uid-1/disk"]));
  assert.ok(usage["uid-1/ram"] >= 3 * 1024 * 1024 && usage["uid-1/ram"] < 4 * 1024 * 1024, String(usage["uid-1/ram"]));
  volumes.tearDown("uid-1");
  assert.deepEqual(volumes.emptyDirUsage(), []);
});

test("persistentVolumeClaim: a Bound claim's local or hostPath volume; unbound, missing or driver-backed ones say why", async () => {
  const local = tempDir();
  const objects = {
    "/api/v1/namespaces/shop/persistentvolumeclaims/data": { spec: { volumeName: "pv-local" }, status: { phase: "Bound" } },
    "/api/v1/namespaces/shop/persistentvolumeclaims/hp": { spec: { volumeName: "pv-host" }, status: { phase: "Bound" } },
    "/api/v1/namespaces/shop/persistentvolumeclaims/waiting": { spec: {}, status: { phase: "Pending" } },
    "/api/v1/namespaces/shop/persistentvolumeclaims/nfs": { spec: { volumeName: "pv-nfs" }, status: { phase: "Bound" } },
    "/api/v1/persistentvolumes/pv-local": { spec: { local: { path: local }, accessModes: ["ReadWriteOnce"] } },
    "/api/v1/persistentvolumes/pv-host": { spec: { hostPath: { path: path.join(local, "made"), type: "DirectoryOrCreate" }, accessModes: ["ReadOnlyMany"] } },
    "/api/v1/persistentvolumes/pv-nfs": { spec: { nfs: { server: "nas", path: "/" } } },
  };
  const { ApiStatusError } = await import("../../dist/cluster/api-client.js");
  const client = {
    async request(_method, url) {
      if (!objects[url]) throw new ApiStatusError(404, "NotFound", "not found");
      return objects[url];
    },
  };
  const { volumes } = manager({ client });
  const spec = {
    volumes: ["data", "hp", "waiting", "nfs", "gone"].map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })),
    containers: [{ name: "app", volumeMounts: [{ name: "data", mountPath: "/data" }, { name: "hp", mountPath: "/hp" }] }],
  };
  await volumes.setUp(facts(spec), ["data", "hp"]);
  assert.deepEqual(volumes.mountsFor(facts(spec), "app", []), [
    { containerPath: "/data", hostPath: local, readonly: false, propagation: "private" },
    { containerPath: "/hp", hostPath: path.join(local, "made"), readonly: true, propagation: "private" },
  ]);
  await assert.rejects(volumes.setUp(facts(spec), ["waiting"]), { message: 'MountVolume.SetUp failed for volume "waiting" : error processing PVC shop/waiting: PVC is not bound' });
  await assert.rejects(volumes.setUp(facts(spec), ["nfs"]), /persistentvolume "pv-nfs" is neither local nor hostPath/);
  await assert.rejects(volumes.setUp(facts(spec), ["gone"]), { message: 'MountVolume.SetUp failed for volume "gone" : persistentvolumeclaim "gone" not found' });
});

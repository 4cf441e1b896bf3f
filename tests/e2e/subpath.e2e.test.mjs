// subPath attacks of the CVE-2021-25741 class on a real containerd, as issue 36 ran them: a
// container keeps swapping an entry of its emptyDir between a directory and a symlink out of the
// volume while other containers mount `subPath: real/etc`; an init container links a volume entry
// out and a container's subPath asks for directories below it. The host side of each link is a
// directory of this test (never the real /etc), with a marker saying "outside".
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-subpath-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

function container(name, script, mounts) {
  return { name, image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script], volumeMounts: mounts };
}

function pod(name, { containers, initContainers = [] }) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, volumes: [{ name: "v", emptyDir: {} }], initContainers, containers },
  };
}

function mountsUnder(dir) {
  return fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && m.startsWith(dir));
}

function start(name) {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, "manifests"), { recursive: true });
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir: path.join(dir, "manifests"), rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs") });
  return { dir, nanolet: nanolet.start() };
}

test("a directory swapped with a symlink while subPaths are mounted: every container sees the volume, never the host", { timeout: 240_000 }, async () => {
  const { dir, nanolet } = start("swap");
  const outside = path.join(dir, "outside");
  fs.mkdirSync(path.join(outside, "etc"), { recursive: true });
  fs.writeFileSync(path.join(outside, "etc", "marker"), "outside\n");
  try {
    // The swapper renames (atomically) a real directory and a symlink to the host directory in
    // and out of `real`, as fast as it can; ten readers each mount `real/etc` once and record
    // what they see (a refused mount is tried again every 10 s, each try a new race).
    const swap = [
      "mkdir -p /v/dir/etc /v/seen && echo inside > /v/dir/etc/marker",
      `ln -s ${outside} /v/link`,
      // `real` is missing between two renames, and the agent may make it anew then (as upstream
      // would): such a directory is removed and the swapping goes on.
      "while true; do mv -T /v/dir /v/real || rm -rf /v/real; mv -T /v/real /v/dir; mv -T /v/link /v/real || rm -rf /v/real; mv -T /v/real /v/link; done",
    ].join("; ");
    const readers = [...Array(10).keys()].map((n) => container(`reader${n}`, `cat /m/marker > /v/seen/${n} 2>&1; sleep 3600`, [{ name: "v", mountPath: "/m", subPath: "real/etc" }, { name: "v", mountPath: "/v" }]));
    const manifest = pod("swap", { containers: [container("swapper", swap, [{ name: "v", mountPath: "/v" }]), ...readers] });
    fs.writeFileSync(path.join(dir, "manifests", "swap.json"), JSON.stringify(manifest));
    const running = await nanolet.waitPod("swap", (p) => p.containers.some((c) => c.name === "swapper" && c.state === "running"), "the swapper running", 60_000);
    const seenDir = path.join(dir, "root", "pods", running.uid, "volumes", "kubernetes.io~empty-dir", "v", "seen");
    const seen = () => (fs.existsSync(seenDir) ? fs.readdirSync(seenDir).map((f) => fs.readFileSync(path.join(seenDir, f), "utf8").trim()) : []);
    await waitFor("5 readers started through a raced subPath", () => seen().length >= 5, 150_000, 500);
    // A reader may also find `etc` missing: when `real` was gone for a moment the agent made the
    // subPath anew inside the volume (upstream does too). Never the host's file.
    assert.deepEqual(seen().filter((s) => s.includes("outside")), [], "no container read the host's directory");
    assert.ok(seen().includes("inside"), "the volume's file was read");
    const refusals = nanolet.logLines(/msg="Failed to (prepare subPath|create subPath directory)/).length;
    assert.ok(refusals > 0, "some mounts met the swapped link and were refused");
    // The mounts the runtime was given are the agent's private binds, not paths in the volume.
    assert.ok(mountsUnder(path.join(dir, "root", "pods", running.uid, "volume-subpaths")).length > 0, "subPaths are bind mounts under volume-subpaths");

    // Removal unmounts the binds before anything is deleted: the host directory is untouched.
    fs.rmSync(path.join(dir, "manifests", "swap.json"));
    await waitFor("the pod's directory gone", () => !fs.existsSync(path.join(dir, "root", "pods", running.uid)), 60_000);
    assert.deepEqual(mountsUnder(path.join(dir, "root")), []);
    assert.equal(fs.readFileSync(path.join(outside, "etc", "marker"), "utf8"), "outside\n");
  } finally {
    await nanolet.stop();
  }
});

test("a subPath below a symlink out of the volume creates nothing outside it: CreateContainerConfigError with upstream's words", { timeout: 180_000 }, async () => {
  const { dir, nanolet } = start("mkdir");
  const outside = path.join(dir, "outside");
  fs.mkdirSync(outside, { recursive: true });
  try {
    const manifest = pod("mkdir", {
      initContainers: [container("link", `ln -s ${outside} /v/tmpl`, [{ name: "v", mountPath: "/v" }])],
      containers: [
        container("app", "sleep 3600", [{ name: "v", mountPath: "/deep", subPath: "tmpl/X/deeper" }]),
        container("expr", "sleep 3600", [{ name: "v", mountPath: "/deep", subPathExpr: "tmpl/$(NAME)/deeper" }]),
        container("fine", "sleep 3600", [{ name: "v", mountPath: "/ok", subPath: "made/here" }]),
      ],
    });
    manifest.spec.containers[1].env = [{ name: "NAME", value: "Y" }];
    fs.writeFileSync(path.join(dir, "manifests", "mkdir.json"), JSON.stringify(manifest));
    const p = await nanolet.waitPod("mkdir", (p) => ["app", "expr"].every((n) => p.containers.find((c) => c.name === n)?.reason === "CreateContainerConfigError") && p.containers.find((c) => c.name === "fine")?.state === "running", "app and expr refused, fine running", 90_000);
    for (const name of ["app", "expr"]) {
      assert.equal(p.containers.find((c) => c.name === name).message, `failed to create subPath directory for volumeMount "v" of container "${name}"`);
    }
    assert.deepEqual(fs.readdirSync(outside), [], "nothing was made outside the volume");
    assert.ok(fs.statSync(path.join(dir, "root", "pods", p.uid, "volumes", "kubernetes.io~empty-dir", "v", "made", "here")).isDirectory());
    fs.rmSync(path.join(dir, "manifests", "mkdir.json"));
    await waitFor("the pod's directory gone", () => !fs.existsSync(path.join(dir, "root", "pods", p.uid)), 60_000);
    assert.deepEqual(mountsUnder(path.join(dir, "root")), []);
  } finally {
    await nanolet.stop();
  }
});

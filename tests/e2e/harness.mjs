// End-to-end harness: nanolet as a user runs it (bin/nanolet run, a child process) against a
// real, private containerd; observations through `nanolet pods`' socket, ctr and cgroup files.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
import { PrivateContainerd, ensurePackages } from "../../build/containerd.mjs";
import { ensureContainerd2 } from "../../build/containerd2.mjs";
import { fetchPods } from "../../dist/server/control-socket.js";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const nanoletBin = path.join(repo, "bin/nanolet");

export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A private containerd under `dir` for one test file: started before its tests (installing the
 * Debian packages first if missing) and stopped after them. Debian's containerd 1.6, or 2.x
 * (build/containerd2.mjs) when `version2` or NANOLET_E2E_CONTAINERD=2: CI runs the core files on both.
 */
export function privateContainerdForFile(dir, { version2 = process.env.NANOLET_E2E_CONTAINERD === "2" } = {}) {
  const containerd = new PrivateContainerd(dir);
  before(async () => {
    ensurePackages();
    if (version2) containerd.binDir = await ensureContainerd2();
    await containerd.start();
  });
  after(async () => {
    await containerd.stop();
  });
  return containerd;
}

export async function waitFor(what, fn, timeoutMs = 30_000, intervalMs = 200) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function podManifest(name, { policy = "Always", script = "sleep 3600", grace = 2, image = "busybox", containers } = {}) {
  const list = containers ?? [{ name: "main", image, script }];
  return [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    "  hostNetwork: true",
    `  restartPolicy: ${policy}`,
    `  terminationGracePeriodSeconds: ${grace}`,
    "  containers:",
    ...list.flatMap((c) => [
      `    - name: ${c.name}`,
      `      image: ${c.image ?? "busybox"}`,
      // Local images on a node without a registry: pulled never, used as present.
      "      imagePullPolicy: IfNotPresent",
      `      command: ["/bin/sh", "-c", ${JSON.stringify(c.script ?? "sleep 3600")}]`,
    ]),
    "",
  ].join("\n");
}

export class Nanolet {
  /**
   * `bin`: the executable to run (the source tree's by default; a benchmark may give an
   * artifact's). `nodeArgs`: run `bin` as a script of this Node.js with these flags instead of by
   * its own shebang (a benchmark comparing flags); `env`: more environment for such a run.
   */
  constructor({ endpoint, manifestDir, rootDir, logsDir, node = "e2e-node", bin = nanoletBin, nodeArgs, env }) {
    Object.assign(this, { endpoint, manifestDir, rootDir, logsDir, node, bin, nodeArgs, env });
    this.lines = [];
    this.proc = undefined;
  }

  start(extraArgs = []) {
    // Run the executable itself, so that its shebang's Node.js flags apply as in production.
    // The kubelet API and healthz ports are off unless a test asks for them (tests run side by side).
    const ports = extraArgs.includes("--port") ? [] : ["--port", "0"];
    if (!extraArgs.includes("--healthz-port")) ports.push("--healthz-port", "0");
    // Image GC off, as the upstream kubelet's harness has it: a shared machine's disk must not
    // remove the local images the tests use (no registry would give them back). The image GC
    // test sets its own thresholds on its own filesystem.
    if (!extraArgs.includes("--image-gc-high-threshold")) ports.push("--image-gc-high-threshold", "100", "--image-gc-low-threshold", "99");
    const [command, ...prefix] = this.nodeArgs ? [process.execPath, ...this.nodeArgs, this.bin] : [this.bin];
    this.proc = spawn(command, [
      ...prefix,
      "run",
      ...ports,
      ...extraArgs,
      "--pod-manifest-path", this.manifestDir,
      "--container-runtime-endpoint", this.endpoint,
      "--root-dir", this.rootDir,
      "--pod-logs-dir", this.logsDir,
      "--hostname-override", this.node,
      // Tests read debug lines; a benchmark passes its own verbosity.
      ...(extraArgs.includes("--v") ? [] : ["--v", "debug"]),
    ], { stdio: ["ignore", "ignore", "pipe"], env: this.nodeArgs ? { ...process.env, MALLOC_MMAP_THRESHOLD_: "131072", ...this.env } : process.env });
    let buffer = "";
    this.proc.stderr.setEncoding("utf8");
    this.proc.stderr.on("data", (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        this.lines.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    });
    this.exited = new Promise((resolve) => this.proc.once("exit", (code, signal) => resolve({ code, signal })));
    return this;
  }

  async pods() {
    return (await fetchPods(path.join(this.rootDir, "nanolet.sock"))).pods;
  }

  async pod(name) {
    return (await this.pods()).find((p) => p.name === `${name}-${this.node}`);
  }

  async waitPod(name, predicate, what, timeoutMs = 30_000) {
    return waitFor(`${name}: ${what}`, async () => {
      const p = await this.pod(name);
      return p && predicate(p) ? p : false;
    }, timeoutMs);
  }

  logLines(regex) {
    return this.lines.filter((l) => regex.test(l));
  }

  async stop(signal = "SIGTERM") {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill(signal);
    await this.exited;
  }
}

/** IDs and states of nanolet's containers in containerd, through ctr (not through nanolet). */
export function runtimeContainers(containerd) {
  const out = containerd.ctr("containers", "ls", "labels.\"nanolet.io/managed\"==true");
  const ids = out.split("\n").slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean);
  const tasks = new Map(
    containerd.ctr("tasks", "ls").split("\n").slice(1).filter(Boolean).map((l) => {
      const [id, , status] = l.split(/\s+/);
      return [id, status];
    }),
  );
  return ids.map((id) => ({ id, task: tasks.get(id) ?? "none" }));
}

/**
 * Kills the pause process of pod `uid`'s sandbox in `containerd` (through ctr, as a crash or an
 * OOM kill would end it): the agent must make a new sandbox, with a new IP on the pod network.
 * Returns the sandbox's id.
 */
export function killSandbox(containerd, uid) {
  const out = containerd.ctr("containers", "ls", `labels."io.kubernetes.pod.uid"==${uid},labels."io.cri-containerd.kind"==sandbox`);
  const ids = out.split("\n").slice(1).map((l) => l.split(/\s+/)[0]).filter(Boolean);
  const running = new Set(containerd.ctr("tasks", "ls").split("\n").slice(1).filter((l) => /RUNNING/.test(l)).map((l) => l.split(/\s+/)[0]));
  const id = ids.find((i) => running.has(i));
  if (!id) throw new Error(`no running sandbox of pod ${uid} in containerd`);
  containerd.ctr("tasks", "kill", "-s", "SIGKILL", id);
  return id;
}

export function podCgroupDirs(uid) {
  const found = [];
  for (const ctrl of fs.readdirSync("/sys/fs/cgroup")) {
    for (const qos of ["kubepods", "kubepods/burstable", "kubepods/besteffort"]) {
      const dir = path.join("/sys/fs/cgroup", ctrl, qos, `pod${uid}`);
      if (fs.existsSync(dir)) found.push(dir);
    }
  }
  return found;
}

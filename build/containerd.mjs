// A private containerd for nanolet's default run and its tests, as ../shared/design/CONTAINERD.md
// describes: Debian packages, state and socket under one directory, a locally built pause image
// and a busybox image (no registry is reachable), and host-network pods by default.
import { aptInstall } from "./apt.mjs";
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const PAUSE_IMAGE = "localhost/nanolet/pause:1";
export const BUSYBOX_IMAGE = "docker.io/library/busybox:latest";
const DEBIAN_PACKAGES = ["containerd", "runc", "busybox-static", "iptables", "containernetworking-plugins"];
const log = (msg) => process.stderr.write(`containerd-env: ${msg}\n`);

/** Whether `cmd` is on the PATH. */
export function have(cmd) {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Installs the Debian packages when one of their commands is missing (needs root). */
export function ensurePackages() {
  if (have("containerd") && have("runc") && have("ctr") && fs.existsSync("/bin/busybox") && have("gcc") && have("openssl")) return;
  // gcc builds the pause image; openssl makes the test certificates of the cluster tests.
  aptInstall([...DEBIAN_PACKAGES, "gcc", "libc6-dev", "openssl"], "for the container runtime, the pause image and test certificates");
}

const ociArch = () => ({ x64: "amd64", arm64: "arm64", arm: "arm" })[process.arch] ?? process.arch;
const sha256 = (buf) => crypto.createHash("sha256").update(buf).digest("hex");

/** Writes a single-layer docker-archive tar of `rootfs` (ctr imports it by RepoTags). */
export function imageArchive(rootfs, tag, entrypoint, outTar) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-img-"));
  const layerTar = path.join(work, "layer.tar");
  execFileSync("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", rootfs, "-cf", layerTar, "."]);
  const diffId = `sha256:${sha256(fs.readFileSync(layerTar))}`;
  const config = {
    architecture: ociArch(),
    os: "linux",
    config: { Entrypoint: entrypoint, Env: ["PATH=/bin"] },
    rootfs: { type: "layers", diff_ids: [diffId] },
  };
  const configText = JSON.stringify(config);
  const configName = `${sha256(configText)}.json`;
  fs.writeFileSync(path.join(work, configName), configText);
  fs.writeFileSync(path.join(work, "manifest.json"), JSON.stringify([{ Config: configName, RepoTags: [tag], Layers: ["layer.tar"] }]));
  execFileSync("tar", ["-C", work, "-cf", outTar, "manifest.json", configName, "layer.tar"]);
  fs.rmSync(work, { recursive: true, force: true });
}

/**
 * A docker-archive at `outTar` of a small image of its own: busybox as /bin/sh and /bin/sleep, and
 * `files` (path -> content) beside them, tagged `tag`. Content of its own gives it layers no other
 * image shares (the image GC and pull tests need images that are not one another's).
 */
export function smallImageArchive(tag, files, outTar) {
  const rootfs = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-small-image-"));
  fs.mkdirSync(path.join(rootfs, "bin"));
  fs.copyFileSync("/bin/busybox", path.join(rootfs, "bin/busybox"));
  fs.chmodSync(path.join(rootfs, "bin/busybox"), 0o755);
  for (const applet of ["sh", "sleep"]) fs.symlinkSync("busybox", path.join(rootfs, "bin", applet));
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(rootfs, file), content);
  imageArchive(rootfs, tag, ["/bin/sh"], outTar);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return outTar;
}

/** Builds the pause and busybox image archives under build/out/images (cached). */
export function buildImages() {
  const dir = path.join(root, "build/out/images");
  fs.mkdirSync(dir, { recursive: true });
  const pauseTar = path.join(dir, "pause.tar");
  const busyboxTar = path.join(dir, "busybox.tar");
  if (!fs.existsSync(pauseTar)) {
    const rootfs = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-pause-"));
    execFileSync("gcc", ["-static", "-O2", "-o", path.join(rootfs, "pause"), path.join(root, "build/images/pause.c")]);
    imageArchive(rootfs, PAUSE_IMAGE, ["/pause"], pauseTar);
    fs.rmSync(rootfs, { recursive: true, force: true });
  }
  if (!fs.existsSync(busyboxTar)) {
    const rootfs = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-busybox-"));
    fs.mkdirSync(path.join(rootfs, "bin"));
    for (const d of ["tmp", "proc", "sys", "dev", "etc", "root"]) fs.mkdirSync(path.join(rootfs, d));
    fs.copyFileSync("/bin/busybox", path.join(rootfs, "bin/busybox"));
    fs.chmodSync(path.join(rootfs, "bin/busybox"), 0o755);
    const applets = execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" }).split("\n").filter(Boolean);
    for (const applet of applets) if (applet !== "busybox") fs.symlinkSync("busybox", path.join(rootfs, "bin", applet));
    imageArchive(rootfs, BUSYBOX_IMAGE, ["/bin/sh"], busyboxTar);
    fs.rmSync(rootfs, { recursive: true, force: true });
  }
  return { pauseTar, busyboxTar };
}

function configToml(dir) {
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
plugin_dir = "${dir}/plugins"

[grpc]
  address = "${dir}/containerd.sock"

[ttrpc]
  address = "${dir}/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true

# Registries' hosts.toml files (a test registry's CA), as an operator trusts a private registry.
[plugins."io.containerd.grpc.v1.cri".registry]
  config_path = "${dir}/certs.d"

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni"

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  BinaryName = "/usr/sbin/runc"
  SystemdCgroup = false

# A second handler for RuntimeClass tests: runc again, through a wrapper that notes each call.
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${ALT_HANDLER}]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${ALT_HANDLER}.options]
  BinaryName = "${dir}/${ALT_HANDLER}"
  SystemdCgroup = false
`;
}

/** The test containerd's second runtime handler (a RuntimeClass's `handler`). */
export const ALT_HANDLER = "runc-alt";

/** The wrapper the second handler runs: it appends its arguments to `<dir>/runc-alt.log`, then is runc. */
function writeAltHandler(dir) {
  const file = path.join(dir, ALT_HANDLER);
  fs.writeFileSync(file, `#!/bin/sh\necho "$@" >> "${dir}/${ALT_HANDLER}.log"\nexec /usr/sbin/runc "$@"\n`, { mode: 0o755 });
}

const CNI_CONFLIST = JSON.stringify({
  cniVersion: "1.0.0",
  name: "nanolet",
  plugins: [
    { type: "bridge", bridge: "nanolet0", isGateway: true, ipMasq: true, ipam: { type: "host-local", ranges: [[{ subnet: "10.89.0.0/24" }]], routes: [{ dst: "0.0.0.0/0" }] } },
    { type: "portmap", capabilities: { portMappings: true } },
  ],
}, null, 2);

function waitForSocket(socket, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const conn = net.connect(socket);
      conn.once("connect", () => {
        conn.destroy();
        resolve();
      });
      conn.once("error", () => {
        if (Date.now() > deadline) reject(new Error(`containerd socket ${socket} did not answer in ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

/**
 * A private containerd under `dir`. `start()` launches it and imports the images;
 * `kill9()` and `start()` again simulate a crash; `stop()` ends it and cleans up its pods.
 * `binDir`: where containerd, its shim and ctr are (build/containerd2.mjs's 2.x); the
 * machine's (Debian's 1.6) by default. containerd 2.x reads this version-2 config by migrating it.
 */
export class PrivateContainerd {
  constructor(dir, { binDir } = {}) {
    this.dir = dir;
    this.binDir = binDir;
    this.socket = path.join(dir, "containerd.sock");
    this.endpoint = `unix://${this.socket}`;
    /** Where hosts.toml files for registries go (`PrivateRegistry.trustFrom`). */
    this.certsDir = path.join(dir, "certs.d");
    this.child = undefined;
  }

  get ctrBin() {
    return this.binDir ? path.join(this.binDir, "ctr") : "ctr";
  }

  /** True when a containerd already answers on this instance's socket. */
  async answering() {
    return waitForSocket(this.socket, 0).then(() => true, () => false);
  }

  async start({ images = true } = {}) {
    fs.mkdirSync(path.join(this.dir, "cni"), { recursive: true });
    // A pod network, so that the runtime reports NetworkReady (a node whose runtime network is
    // not ready is NotReady, as upstream) and pods without hostNetwork get an address.
    fs.writeFileSync(path.join(this.dir, "cni", "10-nanolet.conflist"), CNI_CONFLIST);
    if (await this.answering()) {
      if (images) this.importImages();
      return; // already running (a previous `npm start`): use it
    }
    const configFile = path.join(this.dir, "config.toml");
    fs.writeFileSync(configFile, configToml(this.dir));
    writeAltHandler(this.dir);
    const logFile = fs.openSync(path.join(this.dir, "containerd.log"), "a");
    // containerd finds its shim on the PATH: the 2.x shim beside a 2.x containerd.
    const env = this.binDir ? { ...process.env, PATH: `${this.binDir}:${process.env.PATH}` } : process.env;
    const bin = this.binDir ? path.join(this.binDir, "containerd") : "containerd";
    this.child = spawn(bin, ["--config", configFile], { stdio: ["ignore", logFile, logFile], detached: true, env });
    fs.closeSync(logFile);
    this.child.unref();
    fs.writeFileSync(path.join(this.dir, "containerd.pid"), String(this.child.pid));
    await waitForSocket(this.socket, 15_000);
    if (images) this.importImages();
  }

  importImages() {
    const { pauseTar, busyboxTar } = buildImages();
    for (const tar of [pauseTar, busyboxTar]) {
      execFileSync(this.ctrBin, ["--address", this.socket, "-n", "k8s.io", "images", "import", tar], { stdio: "ignore" });
    }
  }

  /** SIGKILL, as a crash: shims and containers survive, as on a real node. */
  kill9() {
    if (this.child) process.kill(this.child.pid, "SIGKILL");
    this.child = undefined;
  }

  ctr(...args) {
    return execFileSync(this.ctrBin, ["--address", this.socket, "-n", "k8s.io", ...args], { encoding: "utf8" });
  }

  /**
   * The pid in containerd.pid when that process is still this instance's containerd (a later
   * `npm start` launched it; its command line names this instance's config), else undefined.
   */
  recordedPid() {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dir, "containerd.pid"), "utf8"));
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return cmdline.includes(path.join(this.dir, "config.toml")) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops every container and sandbox, then containerd, and removes what it left outside `dir`. */
  async stop() {
    try {
      for (const line of this.ctr("tasks", "ls", "-q").split("\n").filter(Boolean)) {
        try {
          this.ctr("tasks", "kill", "-s", "SIGKILL", line);
        } catch {}
      }
    } catch {}
    const pid = this.child?.pid ?? this.recordedPid();
    const launched = pid !== undefined;
    if (pid !== undefined) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
      this.child = undefined;
    }
    // The CNI bridge outlives containerd; one this instance's pods made goes with it (the bridge
    // plugin makes it again for the next pod-network sandbox).
    if (launched) {
      try {
        execFileSync("ip", ["link", "delete", "nanolet0"], { stdio: "ignore" });
      } catch {}
    }
    // Shims outlive containerd: end those serving this instance.
    try {
      execFileSync("pkill", ["-9", "-f", `containerd-shim-runc-v2 -namespace k8s.io -id .* -address ${this.socket}`], { stdio: "ignore" });
    } catch {}
    // Sandboxes' /dev/shm and containers' rootfs stay mounted with nobody left to unmount them;
    // hundreds of stale mounts slow every later runc call on the machine (it reads mountinfo).
    unmountUnder(this.dir);
  }
}

/** The mount points at or under `dir`, deepest first. */
export function mountsUnder(dir) {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  return fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4])
    .filter((m) => m && (m === dir || m.startsWith(prefix))).sort((a, b) => b.length - a.length);
}

/** Lazily unmounts every mount point under `dir`, deepest first; returns those that would not go. */
export function unmountUnder(dir) {
  const stuck = [];
  for (const mount of mountsUnder(dir)) {
    try {
      execFileSync("umount", ["-l", mount], { stdio: "ignore" });
    } catch {
      stuck.push(mount);
    }
  }
  return stuck;
}

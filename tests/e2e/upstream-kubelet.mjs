// The upstream kubelet (KUBEBUILDER_ASSETS/kubelet, v1.36.2) beside nanolet for differential tests
// and side-by-side benchmarks, run as ../shared/k8s/README.md found it works on these machines:
// its own private containerd and cgroup root (at the default root it would kill other agents'
// pods as orphans), cgroup v1 allowed, swap allowed, cgroupfs, no iptables on its PATH (it would
// install chains), a non-loopback node IP (it refuses loopback), and the sysctls it sets while it
// runs put back afterwards.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { PrivateContainerd, unmountUnder } from "../../build/containerd.mjs";
import { Service, assetPath, freePort } from "./control-plane.mjs";
import { waitFor } from "./harness.mjs";

/** Sysctls the kubelet sets at start (kernel protection defaults); restored by `stop`. */
const KUBELET_SYSCTLS = ["vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"];

/** The machine's first non-internal IPv4 address: the kubelet refuses 127.0.0.1. */
export function nonLoopbackIp() {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  throw new Error("no non-loopback IPv4 address for the kubelet's --node-ip");
}

export class UpstreamKubelet {
  /**
   * Starts a private containerd and the kubelet under `dir` as node `node`, registered with the
   * apiserver of `kubeconfig` (none: standalone, static pods only). `config` adds
   * KubeletConfiguration fields (`staticPodPath`, `readOnlyPort`...). `containerdBinDir`: a
   * containerd other than the machine's (build/containerd2.mjs's 2.x).
   */
  static async start(dir, { node, kubeconfig, config = {}, containerdBinDir }) {
    const k = new UpstreamKubelet(dir, node);
    k.containerdBinDir = containerdBinDir;
    await k.setUp(kubeconfig, config);
    return k;
  }

  constructor(dir, node) {
    this.dir = dir;
    this.node = node;
    this.cgroupRoot = `/nanolet-test-kubelet-${process.pid}`;
    fs.mkdirSync(dir, { recursive: true });
  }

  async setUp(kubeconfig, config) {
    this.savedSysctls = Object.fromEntries(KUBELET_SYSCTLS.map((s) => [s, fs.readFileSync(`/proc/sys/${s}`, "utf8").trim()]));
    // The kubelet wants its cgroup root to exist in every hierarchy.
    for (const hierarchy of cgroupHierarchies()) fs.mkdirSync(path.join(hierarchy, this.cgroupRoot), { recursive: true });
    this.containerd = new PrivateContainerd(path.join(this.dir, "containerd"), { binDir: this.containerdBinDir });
    await this.containerd.start();
    const [port, healthzPort] = await Promise.all([freePort(), freePort()]);
    this.healthzPort = healthzPort;
    this.podLogsDir = path.join(this.dir, "pod-logs");
    const configFile = path.join(this.dir, "kubelet-config.yaml");
    fs.writeFileSync(configFile, stringify({
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      failCgroupV1: false,
      failSwapOn: false,
      cgroupDriver: "cgroupfs",
      cgroupRoot: this.cgroupRoot,
      containerRuntimeEndpoint: this.containerd.endpoint,
      address: "127.0.0.1",
      port,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: {} },
      authorization: { mode: "AlwaysAllow" },
      podLogsDir: this.podLogsDir,
      // A shared test machine's disk and memory must not make it evict the pods under test.
      evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      resolvConf: "/etc/resolv.conf",
      ...config,
    }));
    const pathWithoutIptables = ["/usr/local/bin", "/usr/bin", "/bin"].join(":");
    this.config = { port, ...config };
    this.service = new Service("kubelet", assetPath("kubelet"), [
      "--config", configFile,
      ...(kubeconfig ? ["--kubeconfig", kubeconfig] : []),
      "--root-dir", path.join(this.dir, "root"),
      "--cert-dir", path.join(this.dir, "pki"),
      "--hostname-override", this.node,
      "--node-ip", nonLoopbackIp(),
      "--v", "2",
    ], path.join(this.dir, "kubelet.log"), { env: { ...process.env, PATH: pathWithoutIptables } });
    await waitFor("the kubelet's healthz", async () => {
      if (!this.service.running) throw new Error(`kubelet exited:\n${this.service.tail(40)}`);
      const r = await fetch(`http://127.0.0.1:${healthzPort}/healthz`).catch(() => undefined);
      return r?.ok;
    }, 90_000, 500);
  }

  /** The kubelet process's id (for its CPU and memory). */
  get pid() {
    return this.service.proc.pid;
  }

  async stop() {
    await this.service?.stop();
    await this.containerd?.stop();
    for (const [s, v] of Object.entries(this.savedSysctls ?? {})) fs.writeFileSync(`/proc/sys/${s}`, v);
    // The symlinks it wrote into /var/log/containers for its pods' logs.
    const links = "/var/log/containers";
    for (const name of fs.existsSync(links) ? fs.readdirSync(links) : []) {
      const file = path.join(links, name);
      try {
        if (fs.readlinkSync(file).startsWith(this.podLogsDir)) fs.rmSync(file);
      } catch {
        // not a link of ours
      }
    }
    // Its root directory is bind-mounted on itself, and its pods' volumes under it.
    unmountUnder(this.dir);
    // Its cgroups (the pods' are gone with the containerd), leaf first.
    for (const hierarchy of cgroupHierarchies()) removeTree(path.join(hierarchy, this.cgroupRoot));
  }
}

/** The cgroup hierarchies: each v1 controller's mount (and the v2 one), or the v2 root alone. */
function cgroupHierarchies() {
  const root = "/sys/fs/cgroup";
  if (fs.existsSync(path.join(root, "cgroup.controllers"))) return [root];
  return fs.readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(root, e.name, "cgroup.procs")))
    .map((e) => path.join(root, e.name));
}

function removeTree(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeTree(path.join(dir, entry.name));
  try {
    fs.rmdirSync(dir);
  } catch {
    // a cgroup still in use stays; the test's containerd is gone, so this is rare
  }
}

// Graceful node shutdown on a real D-Bus (a private dbus-daemon) with a logind stand-in speaking
// logind's methods, property and signal, and the pods on a real containerd: the lock is taken
// (logind's too-short InhibitDelayMaxSec raised by a drop-in first), PrepareForShutdown stops six
// pods of three priorities group by group within their budgets, their statuses say what upstream
// says, new pods are refused, the lock goes only after the last group, and a cancellation brings
// the node back.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, tempDir, waitFor } from "./harness.mjs";
import { startFakeLogind, startSystemBus } from "./system-bus.mjs";
import { RealControlPlane, controlPlaneSkipReason } from "./control-plane.mjs";

const work = tempDir("nanolet-shutdown-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));
const marks = path.join(work, "marks");
fs.mkdirSync(marks, { recursive: true });

/**
 * A pod whose container notes (in the host's `marks` dir, with the machine's uptime) when it got
 * SIGTERM and when it exited; `onTerm` is what it does in between: `exit`, `slow` (2 s of work),
 * or `ignore` (it never stops by itself: the grace's end kills it).
 */
function pod(name, priority, onTerm, grace = 30) {
  const note = (what) => `read up rest < /proc/uptime; echo ${what} $up >> /marks/${name}`;
  const trap = {
    exit: `trap '${note("term")}; ${note("exit")}; exit 0' TERM`,
    slow: `trap '${note("term")}; sleep 2; ${note("exit")}; exit 0' TERM`,
    ignore: `trap '${note("term")}' TERM`,
  }[onTerm];
  // `wait` returns at the signal; the loop keeps an ignoring container alive afterwards.
  const script = `${trap}; echo up > /marks/${name}.up; while true; do sleep 1 & wait; done`;
  return [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    `  name: ${name}`,
    "spec:",
    "  hostNetwork: true",
    `  priority: ${priority}`,
    `  terminationGracePeriodSeconds: ${grace}`,
    "  containers:",
    "    - name: main",
    "      image: busybox",
    "      imagePullPolicy: IfNotPresent",
    `      command: ["/bin/sh", "-c", ${JSON.stringify(script)}]`,
    "      volumeMounts: [{name: marks, mountPath: /marks}]",
    "  volumes:",
    `    - {name: marks, hostPath: {path: ${marks}}}`,
    "",
  ].join("\n");
}

/** When `name` noted `what` (uptime seconds), or undefined. */
function mark(name, what) {
  const file = path.join(marks, name);
  if (!fs.existsSync(file)) return undefined;
  const line = fs.readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${what} `));
  return line ? Number(line.split(" ")[1]) : undefined;
}

const CRITICAL = 2000000000;
const PODS = [
  ["low-exit", 0, "exit"],
  ["low-slow", 0, "slow"],
  ["mid-ignore", 1000, "ignore"],
  ["mid-exit", 1000, "exit"],
  ["crit-exit", CRITICAL, "exit"],
  ["crit-short", CRITICAL, "ignore", 1],
];

describe("graceful node shutdown", { concurrency: false }, () => {
  test("PrepareForShutdown stops six pods of three priorities in order within their budgets, then the lock goes; a cancellation brings the node back", { timeout: 180_000 }, async () => {
    const bus = await startSystemBus(path.join(work, "bus"));
    const confDir = path.join(work, "logind.conf.d");
    // logind's default InhibitDelayMaxSec (5 s) is shorter than the 4 + 4 + 3 s the groups need.
    const logind = await startFakeLogind(bus, confDir, 5);
    after(() => {
      logind.stop();
      bus.stop();
    });
    const manifestDir = path.join(work, "manifests");
    fs.mkdirSync(manifestDir);
    for (const [name, priority, onTerm, grace] of PODS) fs.writeFileSync(path.join(manifestDir, `${name}.yaml`), pod(name, priority, onTerm, grace));
    const config = path.join(work, "kubelet.yaml");
    fs.writeFileSync(config, [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "authentication: {webhook: {enabled: false}}",
      "authorization: {mode: AlwaysAllow}",
      "shutdownGracePeriodByPodPriority:",
      "  - {priority: 0, shutdownGracePeriodSeconds: 4}",
      "  - {priority: 1000, shutdownGracePeriodSeconds: 4}",
      `  - {priority: ${CRITICAL}, shutdownGracePeriodSeconds: 3}`,
      "",
    ].join("\n"));
    process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir: path.join(work, "logs") });
    nanolet.start(["--config", config, "--logind-conf-dir", confDir]);
    try {
      // The drop-in raised logind's delay to the groups' sum, then the lock was taken.
      await waitFor("the delay lock", () => logind.events.some((e) => e.event === "inhibit" && e.mode === "delay" && e.what === "shutdown"), 30_000);
      const dropIn = fs.readFileSync(path.join(confDir, "99-nanolet.conf"), "utf8");
      assert.match(dropIn, /^\[Login\]\nInhibitDelayMaxSec=11$/m);
      assert.ok(logind.events.some((e) => e.event === "reloaded" && e.delayUSec === 11_000_000), "logind was reloaded with the new delay");
      for (const [name] of PODS) await waitFor(`${name} up`, () => fs.existsSync(path.join(marks, `${name}.up`)), 60_000);

      logind.send("shutdown");
      await waitFor("the lock released", () => logind.events.some((e) => e.event === "released"), 60_000);
      const proceeds = await waitFor("logind proceeds", () => logind.events.find((e) => e.event === "shutdown-proceeds"), 30_000);
      assert.equal(proceeds.cause, "released", "nanolet let the lock go before logind's delay ran out");

      const term = Object.fromEntries(PODS.map(([name]) => [name, mark(name, "term")]));
      for (const [name] of PODS) assert.ok(term[name] !== undefined, `${name} got SIGTERM`);
      // Lowest priority first; a group starts once the one before it is done.
      const lowDone = mark("low-slow", "exit");
      assert.ok(lowDone !== undefined, "the slow low-priority pod finished its work within its group's 4 s");
      for (const name of ["mid-ignore", "mid-exit"]) {
        assert.ok(term[name] >= lowDone, `${name} was stopped after the low group finished (${term[name]} < ${lowDone})`);
      }
      // mid-ignore never stops by itself: its group holds the critical pods back for its 4 s.
      for (const name of ["crit-exit", "crit-short"]) {
        assert.ok(term[name] >= term["mid-ignore"] + 3.5, `${name} was stopped after the middle group's 4 s (${term[name]} vs ${term["mid-ignore"]})`);
      }
      const released = logind.events.find((e) => e.event === "released");
      assert.ok(released.heldMs > 0);

      // As upstream: a pod killed at the grace's end is Failed, reason Terminated; one whose
      // container exited 0 on SIGTERM ends Succeeded (its DisruptionTarget condition stays).
      const pods = await nanolet.pods();
      for (const [name, , onTerm] of PODS) {
        const p = pods.find((x) => x.name === `${name}-e2e-node`);
        if (onTerm === "ignore") {
          assert.equal(p.phase, "Failed", `${name}: ${JSON.stringify(p)}`);
          assert.equal(p.reason, "Terminated");
          assert.equal(p.message, "Pod was terminated in response to imminent node shutdown.");
        } else {
          assert.equal(p.phase, "Succeeded", `${name}: ${JSON.stringify(p)}`);
          assert.ok(!p.reason, `${name}: ${JSON.stringify(p)}`);
        }
      }

      // While shutting down, a new pod is refused.
      fs.writeFileSync(path.join(manifestDir, "late.yaml"), pod("late", 0, "exit"));
      const late = await nanolet.waitPod("late", (p) => p.phase === "Failed", "refused", 30_000);
      assert.equal(late.reason, "NodeShutdown");
      assert.equal(late.message, "Pod was rejected: Pod was rejected as the node is shutting down.");
      assert.ok(!fs.existsSync(path.join(marks, "late.up")), "the refused pod never ran");

      // Cancelled: the lock is taken again and new pods run.
      const inhibits = logind.events.filter((e) => e.event === "inhibit").length;
      logind.send("cancel");
      await waitFor("the lock taken again", () => logind.events.filter((e) => e.event === "inhibit").length > inhibits, 30_000);
      fs.writeFileSync(path.join(manifestDir, "after.yaml"), pod("after", 0, "exit"));
      await waitFor("a pod after the cancellation runs", () => fs.existsSync(path.join(marks, "after.up")), 60_000);
      assert.ok(nanolet.logLines(/Shutdown manager detected shutdown event/).length > 0);
      assert.ok(nanolet.logLines(/Shutdown manager detected shutdown cancellation/).length > 0);
    } finally {
      for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
      await waitFor("the pods removed", async () => (await nanolet.pods()).length === 0, 90_000).catch(() => {});
      await nanolet.stop();
      delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
    }
  });

  test("on a node without logind the manager logs one line and stays off; pods run", { timeout: 90_000 }, async () => {
    const manifestDir = path.join(work, "manifests-nobus");
    fs.mkdirSync(manifestDir);
    fs.writeFileSync(path.join(manifestDir, "plain.yaml"), pod("plain", 0, "exit"));
    const config = path.join(work, "kubelet-nobus.yaml");
    fs.writeFileSync(config, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nauthentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\nshutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 5s\n");
    process.env.DBUS_SYSTEM_BUS_ADDRESS = `unix:path=${path.join(work, "no-such-bus.sock")}`;
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root-nobus"), logsDir: path.join(work, "logs-nobus") });
    nanolet.start(["--config", config, "--logind-conf-dir", path.join(work, "conf-nobus")]);
    try {
      await waitFor("plain up", () => fs.existsSync(path.join(marks, "plain.up")), 60_000);
      await waitFor("the manager's one line", () => nanolet.logLines(/Failed to start node shutdown manager/).length > 0, 30_000);
      assert.equal(nanolet.logLines(/Failed to start node shutdown manager/).length, 1);
    } finally {
      fs.rmSync(path.join(manifestDir, "plain.yaml"));
      await waitFor("the pods removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
      delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
    }
  });
});

const cpSkip = controlPlaneSkipReason();
describe("graceful node shutdown on a real apiserver", { concurrency: false }, () => {
  test("the Node says it is shutting down, a scheduled pod ends Failed/Terminated with DisruptionTarget, and Ready returns after a cancellation", { timeout: 180_000, skip: cpSkip }, async () => {
    const dir = path.join(work, "cluster");
    fs.mkdirSync(dir, { recursive: true });
    const NODE = "shutdown-nanolet";
    const cp = await RealControlPlane.start(dir, NODE);
    const bus = await startSystemBus(path.join(dir, "bus"));
    const logind = await startFakeLogind(bus, path.join(dir, "logind.conf.d"), 60);
    const manifestDir = path.join(dir, "manifests");
    fs.mkdirSync(manifestDir);
    const config = path.join(dir, "kubelet.yaml");
    fs.writeFileSync(config, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nauthentication: {webhook: {enabled: false}}\nauthorization: {mode: AlwaysAllow}\nshutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 5s\n");
    process.env.DBUS_SYSTEM_BUS_ADDRESS = bus.address;
    const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(dir, "root"), logsDir: path.join(dir, "logs"), node: NODE });
    nanolet.start(["--config", config, "--kubeconfig", cp.nodeKubeconfig, "--node-ip", "127.0.0.1", "--logind-conf-dir", path.join(dir, "logind.conf.d")]);
    const ready = async () => (await cp.get("nodes", undefined, NODE))?.status?.conditions?.find((c) => c.type === "Ready");
    try {
      await waitFor("the node Ready", async () => (await ready())?.status === "True", 60_000);
      await waitFor("the delay lock", () => logind.events.some((e) => e.event === "inhibit"), 30_000);
      await cp.admin.request("POST", "/api/v1/namespaces/default/pods", {
        apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default" },
        spec: { nodeName: NODE, hostNetwork: true, automountServiceAccountToken: false, terminationGracePeriodSeconds: 30, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"] }] },
      });
      await waitFor("web Running", async () => (await cp.get("pods", "default", "web"))?.status?.phase === "Running", 60_000);

      logind.send("shutdown");
      const notReady = await waitFor("Ready False", async () => {
        const c = await ready();
        return c?.status === "False" ? c : false;
      }, 30_000);
      assert.equal(notReady.reason, "KubeletNotReady");
      assert.equal(notReady.message, "node is shutting down");
      const web = await waitFor("web Failed", async () => {
        const p = await cp.get("pods", "default", "web");
        return p?.status?.phase === "Failed" ? p : false;
      }, 60_000);
      assert.equal(web.status.reason, "Terminated");
      assert.equal(web.status.message, "Pod was terminated in response to imminent node shutdown.");
      const disruption = web.status.conditions.find((c) => c.type === "DisruptionTarget");
      assert.deepEqual({ status: disruption?.status, reason: disruption?.reason, message: disruption?.message }, { status: "True", reason: "TerminationByKubelet", message: "Pod was terminated in response to imminent node shutdown." });
      await waitFor("the lock released", () => logind.events.some((e) => e.event === "released"), 60_000);
      const events = (await cp.list("events", "default")).filter((e) => e.reason === "NodeShutdown");
      assert.ok(events.some((e) => e.message === "Shutdown manager detected shutdown event"), JSON.stringify(events.map((e) => e.message)));

      logind.send("cancel");
      await waitFor("Ready True again", async () => (await ready())?.status === "True", 60_000);
    } finally {
      await cp.admin.request("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 0 }).catch(() => {});
      await waitFor("the pods removed", async () => (await nanolet.pods()).length === 0, 60_000).catch(() => {});
      await nanolet.stop();
      delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
      logind.stop();
      bus.stop();
      await cp.stop();
    }
  });
});

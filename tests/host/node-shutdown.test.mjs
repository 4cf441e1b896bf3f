// Graceful node shutdown's host half on its own: the D-Bus wire, the manager's dealings with
// logind (delay checked and raised, lock, events, reconnects), the settings' checks, and the
// Ready condition while the node shuts down.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeMessage, encodeMessage, messageLength, splitSignature } from "../../dist/node-shutdown/dbus-wire.js";
import { socketPathOf } from "../../dist/node-shutdown/dbus-connection.js";
import { FakeLogind } from "../../dist/node-shutdown/fake-logind.js";
import { NodeShutdownManager } from "../../dist/node-shutdown/shutdown-manager.js";
import { resolveConfig } from "../../dist/config/kubelet-config.js";
import { nodeShutdownSettings } from "../../dist/config/node-fields.js";
import { readyCondition } from "../../dist/cluster/node-object.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const quiet = { log: () => {} };
const tick = () => new Promise((r) => setImmediate(r));

test("D-Bus messages round-trip: basic types, arrays, structs, dicts and variants, aligned", () => {
  const message = {
    type: 1, flags: 0, serial: 7, destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
    interface: "org.freedesktop.login1.Manager", member: "Test", signature: "ybsta{sv}(iu)ax",
    body: [3, true, "héllo", 5_000_000n, [["k", { signature: "t", value: 11n }], ["s", { signature: "s", value: "v" }]], [-2, 9], [1n, -1n]],
  };
  const bytes = encodeMessage(message);
  assert.equal(messageLength(bytes), bytes.length);
  const back = decodeMessage(bytes);
  assert.equal(back.member, "Test");
  assert.equal(back.signature, "ybsta{sv}(iu)ax");
  assert.deepEqual(back.body, message.body);
  assert.deepEqual(splitSignature("sa{sv}(ii)b"), ["s", "a{sv}", "(ii)", "b"]);
});

test("D-Bus reading is bounded: a short message, a bad signature, or an array past the end is an error", () => {
  const bytes = encodeMessage({ type: 4, flags: 0, serial: 1, path: "/a", interface: "a.b", member: "C", signature: "as", body: [["x", "y"]] });
  assert.throws(() => decodeMessage(bytes.subarray(0, bytes.length - 3)));
  assert.throws(() => splitSignature("a{s"));
  assert.throws(() => splitSignature("a".repeat(100) + "s"));
  const forged = Buffer.from(bytes);
  // The array's length (after the 8-aligned body start) claims far more than there is.
  forged.writeUInt32LE(0x7fffffff, bytes.length - 16);
  assert.throws(() => decodeMessage(forged));
  assert.equal(socketPathOf("unix:path=/run/dbus/system_bus_socket"), "/run/dbus/system_bus_socket");
  assert.throws(() => socketPathOf("tcp:host=x,port=1"));
});

test("the manager raises a short InhibitDelayMaxUSec, takes the lock, passes PrepareForShutdown on and lets the lock go when the core says", async () => {
  const logind = new FakeLogind(5000);
  const events = [];
  const nodeEvents = [];
  const manager = new NodeShutdownManager({
    log: quiet, delayMs: 30_000, connect: async () => logind,
    onShutdownEvent: (active) => events.push(active),
    nodeEvent: (type, reason, message) => nodeEvents.push(`${reason}: ${message}`),
  });
  assert.equal(await manager.start(), true);
  assert.equal(logind.delayMs, 30_000);
  assert.equal(logind.lockHeld, true);
  logind.prepareForShutdown(true);
  assert.deepEqual(events, [true]);
  assert.deepEqual(nodeEvents, ["NodeShutdown: Shutdown manager detected shutdown event"]);
  await manager.lock(false);
  assert.equal(logind.lockHeld, false);
  logind.prepareForShutdown(false);
  await manager.lock(true);
  assert.equal(logind.lockHeld, true);
  assert.equal(nodeEvents[1], "NodeShutdown: Shutdown manager detected shutdown cancellation");
  manager.stop();
});

test("a logind whose delay cannot be raised leaves the manager off, with upstream's reason in one line", async () => {
  const logind = new FakeLogind(5000);
  logind.dropInWorks = false;
  const lines = [];
  const manager = new NodeShutdownManager({ log: { log: (level, msg, fields) => lines.push(`${msg} ${fields?.error ?? ""}`) }, delayMs: 30_000, connect: async () => logind, onShutdownEvent: () => {} });
  assert.equal(await manager.start(), false);
  assert.equal(logind.lockHeld, false);
  const failure = lines.filter((l) => l.startsWith("Failed to start node shutdown manager"));
  assert.equal(failure.length, 1);
  assert.match(failure[0], /unable to update logind InhibitDelayMaxSec to 30s \(ShutdownGracePeriod\), current value of InhibitDelayMaxSec \(5s\) is less than requested ShutdownGracePeriod/);
});

test("a lost bus is watched again, and the lock taken again", async () => {
  let logind = new FakeLogind(60_000);
  const first = logind;
  const manager = new NodeShutdownManager({ log: quiet, delayMs: 10_000, connect: async () => logind, onShutdownEvent: () => {}, reconnectMs: 10 });
  await manager.start();
  logind = new FakeLogind(60_000);
  first.disconnect();
  for (let i = 0; i < 100 && !logind.lockHeld; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(logind.lockHeld, true);
  manager.stop();
  await tick();
});

test("the shutdown settings: upstream's checks, and what the core is given", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-shutdown-config-"));
  const file = (body) => {
    const f = path.join(dir, `c${Math.random()}.yaml`);
    fs.writeFileSync(f, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${body}`);
    return { file: f, flags: {}, hasKubeconfig: false };
  };
  assert.throws(() => resolveConfig(file("shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n")), /shutdownGracePeriodCriticalPods \{20s\} must be <= shutdownGracePeriod \{10s\}/);
  assert.throws(() => resolveConfig(file("shutdownGracePeriod: 500ms\n")), /shutdownGracePeriod \{500ms\} must be either zero or otherwise >= 1 sec/);
  assert.throws(() => resolveConfig(file("shutdownGracePeriod: 10s\nshutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 5}]\n")), /Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time/);
  assert.throws(() => resolveConfig(file("shutdownGracePeriodByPodPriority: [{priority: 1, grace: 5}]\n")), /shutdownGracePeriodByPodPriority\[0\]: unknown field "grace"/);
  const { config } = resolveConfig(file("shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n"));
  assert.deepEqual(nodeShutdownSettings(config), { gracePeriodSeconds: 30, criticalPodsSeconds: 10, byPodPriority: [] });
  const byPriority = resolveConfig(file("shutdownGracePeriodByPodPriority: [{priority: 100000, shutdownGracePeriodSeconds: 10}, {priority: 0, shutdownGracePeriodSeconds: 20}]\n")).config;
  assert.deepEqual(nodeShutdownSettings(byPriority).byPodPriority, [{ priority: 100000, gracePeriodSeconds: 10 }, { priority: 0, gracePeriodSeconds: 20 }]);
});

test("the Ready condition says the node is shutting down, after the runtime's problems", () => {
  const ready = readyCondition({ runtimeReady: true, networkReady: true, lastRelistOkMs: 1000, shuttingDown: true }, 1500);
  assert.deepEqual(ready, { type: "Ready", status: "False", reason: "KubeletNotReady", message: "node is shutting down" });
  const both = readyCondition({ runtimeReady: undefined, lastRelistOkMs: 1000, shuttingDown: true }, 1500);
  assert.equal(both.message, "container runtime is down, node is shutting down");
});

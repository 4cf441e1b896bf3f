// Probes on the host side: a manifest's probes parsed with the Pod API's defaults and refused with
// the apiserver's words, and the prober's answers against real local servers (HTTP, TCP) and the
// fake runtime's ExecSync.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { ManifestError, podFromApiObject } from "../../dist/sources/manifest.js";
import { runProbe } from "../../dist/probes/prober.js";
import { ExecSlots } from "../../dist/probes/exec-slots.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";

const pod = (container) => ({
  apiVersion: "v1", kind: "Pod",
  metadata: { name: "p", namespace: "default", uid: "u1" },
  spec: { containers: [{ name: "app", image: "busybox", ...container }] },
});

function problems(container) {
  try {
    podFromApiObject(pod(container));
  } catch (error) {
    assert.ok(error instanceof ManifestError, String(error));
    return error.problems.map((p) => `${p.field}: ${p.detail}`);
  }
  return [];
}

test("a probe gets the Pod API's defaults", () => {
  const spec = podFromApiObject(pod({
    ports: [{ name: "web", containerPort: 8080 }],
    livenessProbe: { httpGet: { port: "web" } },
    readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 3, successThreshold: 2 },
    startupProbe: { exec: { command: ["cat", "/tmp/ok"] }, failureThreshold: 30, terminationGracePeriodSeconds: 5 },
  }));
  const c = spec.containers[0];
  assert.deepEqual(c.livenessProbe, {
    handler: { tag: "http-get", val: { scheme: "HTTP", host: "", port: "web", path: "/", headers: [] } },
    initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: undefined,
  });
  assert.equal(c.readinessProbe.periodSeconds, 3);
  assert.equal(c.readinessProbe.successThreshold, 2);
  assert.deepEqual(c.startupProbe.handler, { tag: "exec", val: ["cat", "/tmp/ok"] });
  assert.equal(c.startupProbe.terminationGracePeriodSeconds, 5n);
  assert.deepEqual(c.ports, [{ name: "web", containerPort: 8080, hostPort: 0, protocol: "TCP", hostIp: "" }]);
});

test("readiness gates carry the status of their condition", () => {
  const doc = pod({});
  doc.spec.readinessGates = [{ conditionType: "example.com/a" }, { conditionType: "example.com/b" }];
  doc.status = { conditions: [{ type: "example.com/a", status: "True" }] };
  assert.deepEqual(podFromApiObject(doc).readinessGates, [{ conditionType: "example.com/a", status: "True" }, { conditionType: "example.com/b", status: "" }]);
});

test("invalid probes are refused with the field and the apiserver's words", () => {
  assert.deepEqual(problems({ livenessProbe: {} }), ["spec.containers[0].livenessProbe: Required value: must specify a handler type"]);
  assert.deepEqual(problems({ livenessProbe: { exec: { command: ["true"] }, tcpSocket: { port: 80 } } }),
    ["spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"]);
  assert.deepEqual(problems({ readinessProbe: { exec: { command: ["true"] }, periodSeconds: 0 } }),
    ["spec.containers[0].readinessProbe.periodSeconds: Invalid value: 0: must be greater than 0"]);
  assert.deepEqual(problems({ readinessProbe: { httpGet: { port: "web" } } }),
    [`spec.containers[0].readinessProbe.httpGet.port: Invalid value: "web": must be a number or the name of one of the container's ports`]);
  assert.deepEqual(problems({ livenessProbe: { exec: { command: ["true"] }, successThreshold: 2 } }),
    ["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"]);
  assert.deepEqual(problems({ livenessProbe: { tcpSocket: { port: 70000 } } }),
    ["spec.containers[0].livenessProbe.tcpSocket.port: Invalid value: 70000: must be between 1 and 65535, inclusive"]);
  assert.deepEqual(problems({ livenessProbe: { exec: { command: [] } } }), ["spec.containers[0].livenessProbe.exec.command: Required value"]);
  assert.deepEqual(problems({ readinessProbe: { httpGet: { port: 80, scheme: "FTP" } } }),
    ['spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"']);
});

function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

const request = (handler, timeoutSeconds = 1) => ({ containerId: "c1", containerName: "app", probeType: "readiness", handler, timeoutSeconds });
const httpGet = (port, path, headers = []) => ({ tag: "http-get", val: { scheme: "HTTP", host: "", port: String(port), path, headers } });

test("httpGet: 2xx succeeds, 5xx fails, a redirect to another host warns, a closed port fails", async (t) => {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url, agent: req.headers["user-agent"], custom: req.headers["x-probe"] });
    if (req.url === "/ok") return res.end("fine");
    if (req.url === "/same") return res.writeHead(302, { location: "/ok" }).end();
    if (req.url === "/away") return res.writeHead(301, { location: "http://example.invalid/" }).end("moved");
    res.writeHead(500).end("broken");
  });
  const port = await listen(server);
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const target = { podIp: "127.0.0.1", runtime: new FakeRuntime() };
  assert.deepEqual(await runProbe(request(httpGet(port, "/ok", [{ name: "X-Probe", value: "1" }])), target), { outcome: "success", output: "fine" });
  assert.equal(seen[0].agent, "kube-probe/1.36");
  assert.equal(seen[0].custom, "1");
  assert.deepEqual(await runProbe(request(httpGet(port, "/same")), target), { outcome: "success", output: "fine" });
  assert.deepEqual(await runProbe(request(httpGet(port, "/fail")), target), { outcome: "failure", output: "HTTP probe failed with statuscode: 500" });
  assert.deepEqual(await runProbe(request(httpGet(port, "/away")), target), { outcome: "warning", output: "Probe terminated redirects, Response body: moved" });
  const spare = net.createServer();
  const closed = await listen(spare);
  await new Promise((resolve) => spare.close(resolve));
  const refused = await runProbe(request(httpGet(closed, "/")), target);
  assert.equal(refused.outcome, "failure");
  assert.match(refused.output, /^Get "http:\/\/127\.0\.0\.1:\d+\/": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/);
});

test("httpGet: a server slower than the timeout fails the probe", async (t) => {
  const server = http.createServer(() => {}); // never answers
  const port = await listen(server);
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const result = await runProbe(request(httpGet(port, "/slow"), 1), { podIp: "127.0.0.1", runtime: new FakeRuntime() });
  assert.equal(result.outcome, "failure");
  assert.match(result.output, /Client\.Timeout exceeded/);
});

test("tcpSocket: an open port succeeds, a closed one fails with Go's words", async (t) => {
  const server = net.createServer((s) => s.end());
  const port = await listen(server);
  t.after(() => server.close());
  const target = { podIp: "127.0.0.1", runtime: new FakeRuntime() };
  assert.deepEqual(await runProbe(request({ tag: "tcp-socket", val: { host: "", port: String(port) } }), target), { outcome: "success", output: "" });
  const other = net.createServer();
  const freePort = await listen(other);
  other.close();
  const failed = await runProbe(request({ tag: "tcp-socket", val: { host: "127.0.0.1", port: String(freePort) } }), target);
  assert.deepEqual(failed, { outcome: "failure", output: `dial tcp 127.0.0.1:${freePort}: connect: connection refused` });
});

test("exec: exit 0 succeeds, non-zero fails with the output, a runtime error errors", async () => {
  // Only ExecSync is used: a stand-in answers it (the fake runtime wants a created container).
  let answer = (cmd) => (cmd[0] === "ok" ? { stdout: "yes\n", stderr: "", exitCode: 0 } : { stdout: "", stderr: "not healthy\n", exitCode: 1 });
  const runtime = {
    async execSync(_id, cmd) {
      const a = answer(cmd);
      return { stdout: Buffer.from(a.stdout), stderr: Buffer.from(a.stderr), exitCode: a.exitCode };
    },
  };
  const target = { podIp: "127.0.0.1", runtime };
  assert.deepEqual(await runProbe(request({ tag: "exec", val: ["ok"] }), target), { outcome: "success", output: "yes\n" });
  assert.deepEqual(await runProbe(request({ tag: "exec", val: ["bad"] }), target), { outcome: "failure", output: "not healthy\n" });
  answer = () => {
    throw new Error("container is not running");
  };
  const errored = await runProbe(request({ tag: "exec", val: ["x"] }), target);
  assert.equal(errored.outcome, "error");
  assert.match(errored.output, /not running/);
});

test("exec probes past the node's bound wait their turn; one whose timeout runs out waiting fails as a timed-out command", async () => {
  // The runtime answers only when told: nothing here depends on how fast the machine is.
  const calls = [];
  const runtime = {
    execSync(_id, cmd, timeoutSeconds) {
      return new Promise((resolve) => calls.push({ cmd, timeoutSeconds, finish: () => resolve({ stdout: Buffer.from("ok"), stderr: Buffer.alloc(0), exitCode: 0 }) }));
    },
  };
  const slots = new ExecSlots(2);
  const target = { podIp: "127.0.0.1", runtime, execSlots: slots };
  const probes = ["a", "b", "c", "d"].map((name) => runProbe(request({ tag: "exec", val: [name] }, 1), target));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls.map((c) => c.cmd[0]), ["a", "b"], "two at once; the others wait in order");
  assert.equal(slots.queued, 2);
  calls[0].finish();
  assert.deepEqual(await probes[0], { outcome: "success", output: "ok" });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls.map((c) => c.cmd[0]), ["a", "b", "c"], "a freed slot goes to the first waiting");
  assert.equal(calls[2].timeoutSeconds, 1, "the command gets what is left of its timeout, in whole seconds");
  // d's second passes while both slots stay busy: it fails as upstream says a timed-out exec fails, never run.
  assert.deepEqual(await probes[3], { outcome: "failure", output: 'command timed out: "d" timed out after 1s' });
  assert.equal(calls.length, 3);
  assert.equal(slots.expiredWaiting, 1);
  calls[1].finish();
  calls[2].finish();
  await Promise.all(probes);
  assert.equal(slots.mostRunning, 2);
  assert.equal(slots.queued, 0);
});

// The gRPC CRI client against a CRI server on a unix socket that answers like a containerd in
// start-up: it retries what should be retried, maps messages to plain types, and gives up with a
// RuntimeError that carries the gRPC code.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { GrpcRuntime } from "../../dist/cri/grpc-runtime.js";
import { RuntimeError } from "../../dist/cri/runtime.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-grpc-"));
const socket = path.join(dir, "cri.sock");
const definition = protoLoader.loadSync(new URL("../../host/cri/runtime-v1.proto", import.meta.url).pathname, { keepCase: false, longs: String, enums: String, defaults: true });
const pkg = grpc.loadPackageDefinition(definition).runtime.v1;

let notInitializedAnswers = 0;
const server = new grpc.Server();
server.addService(pkg.RuntimeService.service, {
  Version(_call, cb) {
    if (notInitializedAnswers > 0) {
      notInitializedAnswers--;
      return cb({ code: grpc.status.UNKNOWN, details: "server is not initialized yet" });
    }
    cb(null, { version: "0.1.0", runtimeName: "fakecri", runtimeVersion: "9.9", runtimeApiVersion: "v1" });
  },
  ListContainers(call, cb) {
    assert.deepEqual(call.request.filter.labelSelector, { "nanolet.io/managed": "true" });
    cb(null, {
      containers: [{
        id: "c1", podSandboxId: "s1", metadata: { name: "app", attempt: 4 }, image: { image: "busybox" }, imageRef: "sha256:0123",
        state: "CONTAINER_EXITED", createdAt: "1764000000123456789", labels: { a: "b" }, annotations: {},
      }],
    });
  },
  ContainerStatus(call, cb) {
    cb({ code: grpc.status.NOT_FOUND, details: `container "${call.request.containerId}" not found` });
  },
  // A loaded node: the exec takes 6.5 s to start and answer (the command's own timeout is the
  // runtime's, counted from its start).
  ExecSync(call, cb) {
    setTimeout(() => cb(null, { stdout: Buffer.from(`ran ${call.request.cmd.join(" ")} with timeout ${call.request.timeout}`), stderr: Buffer.alloc(0), exitCode: 0 }), 6_500);
  },
});
server.addService(pkg.ImageService.service, {
  ImageStatus(call, cb) {
    const image = call.request.image.image;
    if (image === "present") return cb(null, { image: { id: "sha256:1", repoTags: ["present"], uid: { value: "1000" } } });
    if (image === "named") return cb(null, { image: { id: "sha256:2", repoTags: ["named"], username: "app" } });
    if (image === "silent") return cb(null, { image: { id: "sha256:3", repoTags: ["silent"] } });
    cb(null, {});
  },
});
await new Promise((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
after(() => server.forceShutdown());

test("retries UNKNOWN 'server is not initialized yet' and then succeeds", async () => {
  notInitializedAnswers = 3;
  const retries = [];
  const runtime = new GrpcRuntime({ endpoint: `unix://${socket}`, onRetry: (call) => retries.push(call) });
  const v = await runtime.version();
  assert.equal(v.runtimeName, "fakecri");
  assert.deepEqual(retries, ["Version", "Version", "Version"]);
  runtime.close();
});

test("gives up after its retry budget with the gRPC code", async () => {
  notInitializedAnswers = 1000;
  const runtime = new GrpcRuntime({ endpoint: socket, retryBudgetMs: 300 });
  await assert.rejects(runtime.version(), (e) => e instanceof RuntimeError && e.grpcCode === grpc.status.UNKNOWN && /not initialized/.test(e.message));
  notInitializedAnswers = 0;
  runtime.close();
});

test("retries UNAVAILABLE while nothing listens, within the budget", async () => {
  const runtime = new GrpcRuntime({ endpoint: path.join(dir, "nobody.sock"), retryBudgetMs: 400 });
  await assert.rejects(runtime.version(), (e) => e instanceof RuntimeError && e.grpcCode === grpc.status.UNAVAILABLE);
  runtime.close();
});

test("does not retry NOT_FOUND; maps CRI messages to plain types", async () => {
  const runtime = new GrpcRuntime({ endpoint: socket });
  await assert.rejects(runtime.containerStatus("gone"), (e) => e.grpcCode === grpc.status.NOT_FOUND && e.call === "ContainerStatus");
  const [c] = await runtime.listContainers({ "nanolet.io/managed": "true" });
  assert.deepEqual(c, {
    id: "c1", sandboxId: "s1", name: "app", attempt: 4, image: "busybox", imageRef: "sha256:0123", state: "exited",
    createdAtNs: 1764000000123456789n, labels: { a: "b" }, annotations: {},
  });
  assert.notEqual(await runtime.imageStatus("present"), undefined);
  assert.equal(await runtime.imageStatus("absent"), undefined);
  runtime.close();
});

test("a runtime that comes back after an outage is used again and its return is told", async () => {
  const sock = path.join(dir, "later.sock");
  const reconnects = [];
  const runtime = new GrpcRuntime({ endpoint: sock, retryBudgetMs: 200, onReconnected: (ms) => reconnects.push(ms) });
  await assert.rejects(runtime.version(), (e) => e.grpcCode === grpc.status.UNAVAILABLE);
  const later = new grpc.Server();
  later.addService(pkg.RuntimeService.service, { Version: (_c, cb) => cb(null, { version: "0.1.0", runtimeName: "back", runtimeVersion: "1", runtimeApiVersion: "v1" }) });
  await new Promise((resolve, reject) => later.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  // Calls keep failing until the channel's next attempt reaches the server; then one succeeds.
  let answer;
  while (!answer) answer = await runtime.version().catch(() => undefined);
  assert.equal(answer.runtimeName, "back");
  assert.equal(reconnects.length, 1);
  assert.ok(reconnects[0] > 0);
  runtime.close();
  later.forceShutdown();
});

test("ExecSync waits for a slow runtime as upstream's CRI client does (the request timeout on top of the command's)", async () => {
  const runtime = new GrpcRuntime({ endpoint: `unix://${socket}` });
  const r = await runtime.execSync("c1", ["cat", "/ready"], 1);
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout.toString(), "ran cat /ready with timeout 1");
  runtime.close();
});

test("the image's user from ImageStatus: a uid, a user name, or nothing said", async () => {
  const runtime = new GrpcRuntime({ endpoint: `unix://${socket}` });
  assert.deepEqual(await runtime.imageStatus("present"), { uid: 1000 });
  assert.deepEqual(await runtime.imageStatus("named"), { username: "app" });
  assert.deepEqual(await runtime.imageStatus("silent"), {});
  runtime.close();
});

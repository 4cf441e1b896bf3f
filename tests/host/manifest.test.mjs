// Static pod manifests: parsing, upstream's static pod naming and uid, and errors that name the
// file and the field.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scanManifestDir, scanManifestFile } from "../../dist/sources/static-pods.js";
import { ManifestError, podFromApiObject } from "../../dist/sources/manifest.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-manifests-"));
const write = (name, text) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 7
  containers:
    - name: app
      image: busybox
      command: ["sleep"]
      args: ["60"]
      workingDir: /tmp
      env:
        - name: N
          value: 3
      resources:
        limits: { cpu: 1, memory: 64Mi }
`;

test("a manifest becomes a pod-spec with upstream's static pod name, namespace and uid", () => {
  const file = write("web.yaml", POD);
  const { pods, problems } = scanManifestFile(file, "node1");
  assert.deepEqual(problems, []);
  assert.equal(pods.length, 1);
  const spec = pods[0].spec;
  assert.equal(spec.name, "web-node1");
  assert.equal(spec.namespace, "default");
  assert.match(spec.uid, /^[0-9a-f]{32}$/);
  assert.equal(spec.restartPolicy, "OnFailure");
  assert.equal(spec.terminationGracePeriodSeconds, 7n);
  assert.deepEqual(spec.containers[0].command, ["sleep"]);
  assert.deepEqual(spec.containers[0].env, [{ name: "N", value: "3" }]);
  assert.equal(spec.containers[0].workingDir, "/tmp");
  assert.deepEqual(spec.containers[0].limits, [{ name: "cpu", quantity: "1" }, { name: "memory", quantity: "64Mi" }]);
});

test("the uid is stable for the same content and changes when the manifest or node changes", () => {
  const file = write("stable.yaml", POD);
  const a = scanManifestFile(file, "node1").pods[0].spec.uid;
  assert.equal(scanManifestFile(file, "node1").pods[0].spec.uid, a);
  assert.notEqual(scanManifestFile(file, "node2").pods[0].spec.uid, a);
  write("stable.yaml", POD.replace("busybox", "busybox:1"));
  assert.notEqual(scanManifestFile(file, "node1").pods[0].spec.uid, a);
  write("with-uid.yaml", POD.replace("  name: web\n", "  name: web\n  uid: fixed-uid\n"));
  assert.equal(scanManifestFile(path.join(dir, "with-uid.yaml"), "node1").pods[0].spec.uid, "fixed-uid");
});

test("several documents per file, JSON too; empty documents are skipped", () => {
  const file = write("multi.yaml", `${POD}---\n${POD.replace("name: web", "name: api")}---\n`);
  const { pods, problems } = scanManifestFile(file, "n");
  assert.deepEqual(problems, []);
  assert.deepEqual(pods.map((p) => p.spec.name), ["web-n", "api-n"]);
  assert.deepEqual(pods.map((p) => p.origin), [`${file}#0`, `${file}#1`]);
  assert.notEqual(pods[0].spec.uid, pods[1].spec.uid);
  const json = write("j.json", JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "j" }, spec: { containers: [{ name: "c", image: "i" }] } }));
  assert.equal(scanManifestFile(json, "n").pods[0].spec.name, "j-n");
});

const problemOf = (text) => {
  const file = write("bad.yaml", text);
  const { pods, problems } = scanManifestFile(file, "n");
  assert.equal(pods.length, 0);
  assert.equal(problems.length, 1);
  assert.equal(problems[0].origin, file);
  return problems[0];
};

test("bad input is reported with its field, not thrown", () => {
  assert.match(problemOf("kind: Pod\nmetadata: [x\n").message, /^invalid YAML/);
  assert.deepEqual(problemOf(POD.replace("kind: Pod", "kind: Deployment")).field, "kind");
  assert.deepEqual(problemOf(POD.replace("image: busybox", "image: 5")).field, "spec.containers[0].image");
  assert.deepEqual(problemOf(POD.replace('command: ["sleep"]', "command: sleep")).field, "spec.containers[0].command");
  assert.deepEqual(problemOf(POD.replace("terminationGracePeriodSeconds: 7", "terminationGracePeriodSeconds: 1.5")).field, "spec.terminationGracePeriodSeconds");
  assert.deepEqual(problemOf(POD.replace("      workingDir: /tmp\n", "      volumeMounts: [{name: data, mountPath: /data}]\n")).field, "spec.containers[0].volumeMounts[0].name");
  assert.deepEqual(problemOf(POD.replace("value: 3", "valueFrom: {}")).field, "spec.containers[0].env[0].valueFrom");
  assert.deepEqual(problemOf("- just\n- a list\n").field, "");
});

test("a directory scan skips dot-files and non-manifests and keeps good pods beside bad ones", () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-dir-"));
  fs.writeFileSync(path.join(d, "a.yaml"), POD);
  fs.writeFileSync(path.join(d, ".a.yaml.swp"), "junk");
  fs.writeFileSync(path.join(d, "notes.txt"), "junk");
  fs.writeFileSync(path.join(d, "b.yml"), "kind: [");
  const { pods, problems } = scanManifestDir(d, "n");
  assert.equal(pods.length, 1);
  assert.equal(problems.length, 1);
  assert.equal(problems[0].origin, path.join(d, "b.yml"));
  const missing = scanManifestDir(path.join(d, "nope"), "n");
  assert.equal(missing.pods.length, 0);
  assert.match(missing.problems[0].message, /does not exist/);
  assert.equal(missing.failed, undefined); // a missing directory is no pods, as upstream
});

test("apiserver pods: uid and name as they are, deletion and terminal phase carried, the service account volume kept, storage drivers refused", () => {
  const object = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "prod", uid: "1234-abcd", deletionTimestamp: "2026-12-03T10:00:00Z", deletionGracePeriodSeconds: 5 },
    spec: {
      nodeName: "n",
      volumes: [{ name: "kube-api-access-x7k2p", projected: { sources: [] } }],
      containers: [{ name: "app", image: "busybox", volumeMounts: [{ name: "kube-api-access-x7k2p", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true }] }],
    },
    status: { phase: "Failed" },
  };
  const spec = podFromApiObject(object);
  assert.equal(spec.uid, "1234-abcd");
  assert.equal(spec.name, "web");
  assert.equal(spec.namespace, "prod");
  assert.equal(spec.deletionGracePeriodSeconds, 5n);
  assert.equal(spec.reportedTerminalPhase, "failed");
  const running = podFromApiObject({ ...object, metadata: { name: "web", uid: "u" }, status: { phase: "Running" } });
  assert.equal(running.deletionGracePeriodSeconds, undefined);
  assert.equal(running.reportedTerminalPhase, undefined);
  assert.equal(running.namespace, "default");
  const withData = structuredClone(object);
  withData.spec.volumes.push({ name: "data", nfs: { server: "nas", path: "/" } });
  assert.throws(() => podFromApiObject(withData), (e) => e instanceof ManifestError && e.field === "spec.volumes[1].nfs");
  const mountsData = structuredClone(object);
  mountsData.spec.containers[0].volumeMounts.push({ name: "data", mountPath: "/data" });
  assert.throws(() => podFromApiObject(mountsData), (e) => e instanceof ManifestError && e.field === "spec.containers[0].volumeMounts[1].name");
  assert.throws(() => podFromApiObject({ ...object, metadata: { name: "x" } }), (e) => e instanceof ManifestError && e.field === "metadata.uid");
});

// A container's environment on a real containerd: fieldRef, resourceFieldRef and $(VAR) in env,
// command and args, read back from what the container printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-env-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

test("fieldRef and resourceFieldRef values reach the container, $(VAR) expanded as upstream", { timeout: 90_000 }, async () => {
  const manifestDir = path.join(work, "manifests");
  const logsDir = path.join(work, "logs");
  fs.mkdirSync(manifestDir, { recursive: true });
  fs.writeFileSync(path.join(manifestDir, "env.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: env, labels: {app: shop}}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: busybox
      imagePullPolicy: IfNotPresent
      command: ["/bin/sh", "-c", "echo \\"name=$MY_NAME app=$APP ip=$MY_IP mem=$MEM_MI greeting=$GREETING arg=$1\\"; sleep 3600", "--"]
      args: ["$(MY_NAME)-$$(MY_NAME)"]
      resources: {limits: {memory: 64Mi}}
      env:
        - {name: MY_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}
        - {name: MY_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        - {name: MEM_MI, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
        - {name: GREETING, value: "hi $(MY_NAME), $(UNSET)"}
`);
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir });
  nanolet.start(["--node-ip", "127.0.0.1"]);
  try {
    const pod = await nanolet.waitPod("env", (p) => p.phase === "Running", "Running", 60_000);
    const logFile = path.join(logsDir, `default_env-e2e-node_${pod.uid}`, "main", "0.log");
    const line = await waitFor("the printed environment", () => fs.existsSync(logFile) && fs.readFileSync(logFile, "utf8").split("\n").find((l) => l.includes("name=")), 20_000);
    assert.match(line, / stdout F name=env-e2e-node app=shop ip=127\.0\.0\.1 mem=64 greeting=hi env-e2e-node, \$\(UNSET\) arg=env-e2e-node-\$\(MY_NAME\)$/);
  } finally {
    fs.rmSync(path.join(manifestDir, "env.yaml"));
    await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
    await nanolet.stop();
  }
});

test("termination messages: the file at terminationMessagePath, or the log's end with FallbackToLogsOnError", { timeout: 90_000 }, async () => {
  const manifestDir = path.join(work, "manifests-tm");
  const logsDir = path.join(work, "logs-tm");
  const rootDir = path.join(work, "root-tm");
  fs.mkdirSync(manifestDir, { recursive: true });
  const pod = (name, script, policy) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: busybox
      imagePullPolicy: IfNotPresent
      command: ["/bin/sh", "-c", ${JSON.stringify(script)}]
      terminationMessagePolicy: ${policy}
`;
  fs.writeFileSync(path.join(manifestDir, "file.yaml"), pod("file", "echo -n 'written on the way out' > /dev/termination-log; exit 3", "File"));
  fs.writeFileSync(path.join(manifestDir, "logs.yaml"), pod("logs", "echo first; echo 'last words'; exit 1", "FallbackToLogsOnError"));
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir, logsDir });
  nanolet.start();
  try {
    const file = await nanolet.waitPod("file", (p) => p.phase === "Failed", "Failed", 60_000);
    assert.equal(file.containers[0].exitCode, 3);
    assert.equal(file.containers[0].message, "written on the way out");
    const logs = await nanolet.waitPod("logs", (p) => p.phase === "Failed", "Failed", 60_000);
    assert.equal(logs.containers[0].message, "first\nlast words");
  } finally {
    for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
    await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
    await waitFor("the pods' directories removed with them", () => !fs.existsSync(path.join(rootDir, "pods")) || fs.readdirSync(path.join(rootDir, "pods")).length === 0, 30_000);
    await nanolet.stop();
  }
});

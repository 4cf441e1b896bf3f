// A pod's runtime settings on a real containerd, read back from inside the container: the user and
// groups, a read-only root, dropped capabilities and no_new_privs, the hostname and the
// kubelet-managed /etc/hosts with hostAliases, the DNS config of dnsPolicy None; and runAsNonRoot
// refusing an image that runs as root with upstream's words.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Nanolet, privateContainerdForFile, runtimeContainers, tempDir, waitFor } from "./harness.mjs";

const work = tempDir("nanolet-podrt-");
const containerd = privateContainerdForFile(path.join(work, "containerd"));

const SCRIPT = [
  'echo "who uid=$(id -u) gid=$(id -g) groups=$(id -G) host=$(hostname)"',
  "touch /written 2>/dev/null && echo 'root rw' || echo 'root ro'",
  'echo "caps $(grep CapEff /proc/self/status | tr -s "\\t " " ")"',
  'echo "nnp $(grep NoNewPrivs /proc/self/status | tr -s "\\t " " ")"',
  "sed 's/^/hosts /' /etc/hosts",
  "sed 's/^/resolv /' /etc/resolv.conf",
  "sleep 3600",
].join("; ");

test("security context, hostname, /etc/hosts and DNS reach the container as the kubelet sets them", { timeout: 120_000 }, async () => {
  const manifestDir = path.join(work, "manifests");
  const logsDir = path.join(work, "logs");
  fs.mkdirSync(manifestDir, { recursive: true });
  fs.writeFileSync(path.join(manifestDir, "named.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: named}
spec:
  terminationGracePeriodSeconds: 2
  hostname: db
  subdomain: sub
  hostAliases: [{ip: 10.1.2.3, hostnames: [alias.example, other]}]
  dnsPolicy: None
  dnsConfig: {nameservers: [10.96.0.10], searches: [svc.example], options: [{name: ndots, value: "3"}]}
  securityContext: {runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000]}
  containers:
    - name: main
      image: busybox
      imagePullPolicy: IfNotPresent
      command: ["/bin/sh", "-c", ${JSON.stringify(SCRIPT)}]
      securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`);
  fs.writeFileSync(path.join(manifestDir, "nonroot.yaml"), `apiVersion: v1
kind: Pod
metadata: {name: nonroot}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  securityContext: {runAsNonRoot: true}
  containers:
    - {name: main, image: busybox, imagePullPolicy: IfNotPresent, command: ["sleep", "3600"]}
`);
  const nanolet = new Nanolet({ endpoint: containerd.endpoint, manifestDir, rootDir: path.join(work, "root"), logsDir });
  nanolet.start(["--cluster-domain", "cluster.local"]);
  try {
    const pod = await nanolet.waitPod("named", (p) => p.phase === "Running", "Running", 90_000);
    const logFile = path.join(logsDir, `default_named-e2e-node_${pod.uid}`, "main", "0.log");
    const lines = await waitFor("the container's report", () => {
      const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "";
      const out = text.split("\n").map((l) => l.replace(/^\S+ stdout [FP] /, ""));
      return out.some((l) => l.startsWith("resolv ")) ? out : false;
    }, 30_000);
    assert.ok(lines.includes("who uid=1000 gid=3000 groups=3000 2000 4000 host=db"), lines.join("\n"));
    assert.ok(lines.includes("root ro"), "readOnlyRootFilesystem");
    assert.ok(lines.includes("caps CapEff: 0000000000000000"), "every capability dropped");
    assert.ok(lines.includes("nnp NoNewPrivs: 1"), "allowPrivilegeEscalation: false");
    const hosts = lines.filter((l) => l.startsWith("hosts ")).map((l) => l.slice(6));
    assert.equal(hosts[0], "# Kubernetes-managed hosts file.");
    assert.ok(hosts.some((l) => /^\d+\.\d+\.\d+\.\d+\tdb\.sub\.default\.svc\.cluster\.local\tdb$/.test(l)), hosts.join("\n"));
    assert.deepEqual(hosts.slice(-2), ["# Entries added by HostAliases.", "10.1.2.3\talias.example\tother"]);
    const resolv = lines.filter((l) => l.startsWith("resolv ")).map((l) => l.slice(7));
    assert.ok(resolv.includes("nameserver 10.96.0.10"), resolv.join("\n"));
    assert.ok(resolv.includes("search svc.example"));
    assert.ok(resolv.includes("options ndots:3"));

    const refused = await nanolet.waitPod("nonroot", (p) => p.containers[0]?.reason === "CreateContainerConfigError", "CreateContainerConfigError", 60_000);
    assert.match(refused.containers[0].message, /^container has runAsNonRoot and image will run as root \(pod: "nonroot-e2e-node_default\([0-9a-f]+\)", container: main\)$/);
  } finally {
    for (const f of fs.readdirSync(manifestDir)) fs.rmSync(path.join(manifestDir, f));
    await waitFor("all pods removed from containerd", () => runtimeContainers(containerd).length === 0, 60_000);
    await nanolet.stop();
  }
});

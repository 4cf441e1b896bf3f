// The kubelet API as users reach it: the real kubectl through the real kube-apiserver to nanolet's
// HTTPS port (logs, exec, attach, port-forward), and direct requests with client certificates and
// tokens for authentication and authorization. Real containerd; skipped, saying why, without
// KUBEBUILDER_ASSETS.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { TestCluster } from "./cluster-harness.mjs";
import { assetPath, controlPlaneSkipReason, freePort } from "./control-plane.mjs";
import { Nanolet, tempDir, waitFor } from "./harness.mjs";

const NODE = "api-node";
const skip = controlPlaneSkipReason();

function podObject(name, script, { policy = "Always" } = {}) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default" },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      restartPolicy: policy,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["/bin/sh", "-c", script] }],
    },
  };
}

/** One request to the node's API: { code, body }. `cert` is { cert, key } paths, `token` a bearer token. */
function nodeRequest(port, pathname, { cert, token, ca, method = "GET" } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1",
      port,
      path: pathname,
      method,
      ca: fs.readFileSync(ca),
      cert: cert ? fs.readFileSync(cert.cert) : undefined,
      key: cert ? fs.readFileSync(cert.key) : undefined,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      servername: "localhost",
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ code: res.statusCode, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A kubectl that runs until `until(output)` holds, then is stopped: for follow, attach, port-forward. */
function kubectlUntil(cluster, args, until, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(assetPath("kubectl"), ["--kubeconfig", cluster.real.adminKubeconfig, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`kubectl ${args.join(" ")}: timed out; stdout: ${out} stderr: ${err}`));
    }, timeoutMs);
    child.stdout.on("data", (c) => {
      out += c;
      if (until(out)) {
        clearTimeout(timer);
        child.kill("SIGTERM");
        resolve(out);
      }
    });
    child.stderr.on("data", (c) => (err += c));
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (until(out)) resolve(out);
      else reject(new Error(`kubectl ${args.join(" ")} exited ${code}: ${err}`));
    });
  });
}

function httpGet(port) {
  return new Promise((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path: "/" }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

if (skip) {
  describe("the kubelet API through a real apiserver", () => test(`skipped: ${skip}`, { skip }, () => {}));
} else {
  const work = tempDir("nanolet-kubelet-api-e2e-");
  let cluster;
  let nanolet;
  let apiPort;
  let healthzPort;
  let httpdPort;
  let ca;

  before(async () => {
    cluster = await TestCluster.startReal(work, NODE);
    [apiPort, healthzPort, httpdPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const cp = cluster.real;
    ca = cp.pki.caCert;
    fs.mkdirSync(path.join(work, "manifests"), { recursive: true });
    nanolet = new Nanolet({ endpoint: cluster.containerd.endpoint, manifestDir: path.join(work, "manifests"), rootDir: path.join(work, "root"), logsDir: path.join(work, "logs"), node: NODE });
    // Half of the settings come from a KubeletConfiguration file, as an installed node has them;
    // the flags beside it win where both say something (--port here).
    const configFile = path.join(work, "kubelet-config.yaml");
    fs.writeFileSync(configFile, [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "port: 1", // overridden by --port
      "authentication:",
      "  x509:",
      `    clientCAFile: ${ca}`,
      "containerLogMaxSize: 1Mi",
      "containerLogMaxFiles: 3",
      "containerLogMonitorInterval: 3s",
      "nodeLeaseDurationSeconds: 20",
      "",
    ].join("\n"));
    nanolet.start([
      "--kubeconfig", cluster.kubeconfig, ...cluster.nanoletArgs, "--config", configFile,
      "--port", String(apiPort), "--healthz-port", String(healthzPort),
      "--tls-cert-file", cp.nodeServingCert.cert, "--tls-private-key-file", cp.nodeServingCert.key,
    ]);
    await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject("talker", "i=0; while true; do i=$((i+1)); echo line $i; sleep 0.2; done")) });
    await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject("crasher", "echo run $(date +%s); sleep 1; exit 1")) });
    await cluster.kubectl(["create", "-f", "-"], {
      input: JSON.stringify(podObject("web", `mkdir -p /tmp/www && echo hello-from-pod > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:${httpdPort} -h /tmp/www`)),
    });
    await waitFor("talker and web Running", async () => {
      const pods = JSON.parse(await cluster.kubectl(["get", "pods", "-o", "json"])).items;
      return ["talker", "web"].every((n) => pods.find((p) => p.metadata.name === n)?.status?.phase === "Running");
    }, 60_000);
  });

  after(async () => {
    await cluster?.stop(nanolet);
  });

  describe("the kubelet API through a real apiserver", { concurrency: false }, () => {
    test("the Node advertises the API's port; healthz answers on its own port", async () => {
      const node = JSON.parse(await cluster.kubectl(["get", "node", NODE, "-o", "json"]));
      assert.equal(node.status.daemonEndpoints.kubeletEndpoint.Port, apiPort);
      const body = await new Promise((resolve, reject) => http.get({ host: "127.0.0.1", port: healthzPort, path: "/healthz" }, (res) => {
        let b = "";
        res.on("data", (c) => (b += c));
        res.on("end", () => resolve(`${res.statusCode} ${b}`));
      }).on("error", reject));
      assert.equal(body, "200 ok");
    });

    test("/configz shows the settings in effect: defaults, the file, the flags", async () => {
      // (The apiserver will not proxy to a loopback node address, so this asks the node itself.)
      const r = await nodeRequest(apiPort, "/configz", { ca, cert: cluster.real.adminCert });
      assert.equal(r.code, 200, r.body);
      const { kubeletconfig } = JSON.parse(r.body);
      assert.equal(kubeletconfig.kind, "KubeletConfiguration");
      assert.equal(kubeletconfig.port, apiPort, "the flag wins over the file's port: 1");
      assert.equal(kubeletconfig.containerLogMaxFiles, 3);
      assert.equal(kubeletconfig.containerLogMonitorInterval, "3s");
      assert.equal(kubeletconfig.authentication.webhook.enabled, true, "with --config the token webhook is on by default, as upstream's");
      assert.equal(kubeletconfig.nodeStatusReportFrequency, "5m0s");
      const lease = JSON.parse(await cluster.kubectl(["get", "lease", "-n", "kube-node-lease", NODE, "-o", "json"]));
      assert.equal(lease.spec.leaseDurationSeconds, 20, "nodeLeaseDurationSeconds from the file");
    });

    test("kubectl logs: all, --tail, --timestamps, --since, --limit-bytes", async () => {
      await waitFor("five lines logged", async () => (await cluster.kubectl(["logs", "talker"])).includes("line 5\n"));
      const all = await cluster.kubectl(["logs", "talker"]);
      assert.match(all, /^line 1\nline 2\nline 3\n/);
      const tail = await cluster.kubectl(["logs", "talker", "--tail=2"]);
      assert.equal(tail.trim().split("\n").length, 2);
      assert.match(tail, /^line \d+\nline \d+\n$/);
      const stamped = await cluster.kubectl(["logs", "talker", "--tail=1", "--timestamps"]);
      assert.match(stamped, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z line \d+\n$/);
      const recent = await cluster.kubectl(["logs", "talker", "--since=1s"]);
      assert.ok(!recent.includes("line 1\n"), "lines older than a second are left out");
      const limited = await cluster.kubectl(["logs", "talker", "--limit-bytes=4"]);
      assert.equal(limited, "line");
    });

    test("kubectl logs -f follows new lines as they are written", async () => {
      const before = (await cluster.kubectl(["logs", "talker", "--tail=1"])).trim();
      const n = Number(before.split(" ")[1]);
      const out = await kubectlUntil(cluster, ["logs", "-f", "talker", "--tail=1"], (o) => o.includes(`line ${n + 3}\n`));
      assert.ok(out.includes(`line ${n + 3}\n`));
    });

    test("kubectl logs --previous shows the container before its restart", async () => {
      await waitFor("crasher restarted", async () => {
        const pod = JSON.parse(await cluster.kubectl(["get", "pod", "crasher", "-o", "json"]));
        return pod.status.containerStatuses?.[0]?.restartCount >= 1;
      }, 60_000);
      const previous = await cluster.kubectl(["logs", "crasher", "--previous"]);
      assert.match(previous, /^run \d+\n$/);
      await assert.rejects(cluster.kubectl(["logs", "talker", "--previous"]), /previous terminated container "main" in pod "talker" not found/);
      await assert.rejects(cluster.kubectl(["logs", "talker", "-c", "nope"]), /container nope is not valid for pod talker/);
    });

    test("kubectl exec: output, exit code, stdin", async () => {
      assert.equal(await cluster.kubectl(["exec", "talker", "--", "echo", "hello", "exec"]), "hello exec\n");
      await assert.rejects(cluster.kubectl(["exec", "talker", "--", "sh", "-c", "exit 3"]), /exited 3/);
      assert.equal(await cluster.kubectl(["exec", "-i", "talker", "--", "tr", "a-z", "A-Z"], { input: "piped in\n" }), "PIPED IN\n");
      assert.equal(await cluster.kubectl(["exec", "talker", "--", "sh", "-c", "echo err >&2; echo out"]), "out\n");
      const run = await nodeRequest(apiPort, "/run/default/talker/main?cmd=echo%20run%20works", { ca, cert: cluster.real.adminCert, method: "POST" });
      assert.deepEqual(run, { code: 200, body: "run works\n" }, "/run, the kubelet's one-shot exec");
    });

    test("env through kubectl exec: fieldRef values and the service variables of the pod's namespace", async () => {
      await cluster.kubectl(["create", "service", "clusterip", "cart", "--tcp=80:8080"]);
      const pod = podObject("envy", "sleep 3600");
      pod.spec.containers[0].env = [
        { name: "MY_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "MY_NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
        { name: "CART_URL", value: "http://$(CART_SERVICE_HOST):$(CART_SERVICE_PORT)" },
      ];
      await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(pod) });
      await waitFor("envy Running", async () => JSON.parse(await cluster.kubectl(["get", "pod", "envy", "-o", "json"])).status.phase === "Running", 60_000);
      const env = Object.fromEntries((await cluster.kubectl(["exec", "envy", "--", "env"])).trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
      const ipOf = async (name) => (await cluster.kubectl(["get", "service", name, "-o", "jsonpath={.spec.clusterIP}"])).trim();
      const [apiIp, cartIp] = [await ipOf("kubernetes"), await ipOf("cart")];
      assert.equal(env.MY_NAME, "envy");
      assert.equal(env.MY_NODE, NODE);
      assert.equal(env.KUBERNETES_SERVICE_HOST, apiIp);
      assert.equal(env.KUBERNETES_SERVICE_PORT, "443");
      assert.equal(env.KUBERNETES_PORT_443_TCP, `tcp://${apiIp}:443`);
      assert.equal(env.CART_SERVICE_HOST, cartIp);
      assert.equal(env.CART_SERVICE_PORT_80_8080, "80", "a named port (kubectl names it 80-8080)");
      assert.equal(env.CART_URL, `http://${cartIp}:80`, "$(VAR) from the service variables");
      await cluster.kubectl(["delete", "pod", "envy", "--grace-period=1"]);
    });

    test("kubectl exec -it gets a terminal (kubectl run in a pty, as a user's shell runs it)", async (t) => {
      if (!fs.existsSync("/usr/bin/script")) return t.skip("util-linux script is not installed");
      const kubectl = `${assetPath("kubectl")} --kubeconfig ${cluster.real.adminKubeconfig}`;
      const out = await new Promise((resolve, reject) => {
        const child = spawn("/usr/bin/script", ["-qec", `${kubectl} exec -it talker -- sh -c 'tty; exit 0'`, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] });
        let o = "";
        child.stdout.on("data", (c) => (o += c));
        const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
        child.once("exit", (code) => {
          clearTimeout(timer);
          code === 0 ? resolve(o) : reject(new Error(`exit ${code}: ${o}`));
        });
      });
      assert.match(out, /\/dev\/pts\/\d+/, "the command ran on a terminal");
    });

    test("exec over WebSocket (channel.k8s.io) straight to the node is relayed too", async () => {
      const cert = cluster.real.adminCert;
      const key = Buffer.from(Array.from({ length: 16 }, (_, i) => i)).toString("base64");
      const frames = await new Promise((resolve, reject) => {
        const tlsSocket = https.request({
          host: "127.0.0.1",
          port: apiPort,
          path: "/exec/default/talker/main?command=echo&command=over-websocket&output=1&error=1",
          ca: fs.readFileSync(ca),
          cert: fs.readFileSync(cert.cert),
          key: fs.readFileSync(cert.key),
          servername: "localhost",
          headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": key, "sec-websocket-protocol": "v4.channel.k8s.io" },
        });
        tlsSocket.on("upgrade", (res, socket, head) => {
          assert.equal(res.headers["sec-websocket-protocol"], "v4.channel.k8s.io");
          let buf = head;
          const out = [];
          socket.on("data", (c) => (buf = Buffer.concat([buf, c])));
          socket.on("close", () => {
            // Server frames are unmasked: [fin/opcode][len][payload]; the payload's first byte is the channel.
            for (let i = 0; i + 2 <= buf.length; ) {
              let len = buf[i + 1] & 0x7f;
              let at = i + 2;
              if (len === 126) { len = buf.readUInt16BE(at); at += 2; }
              out.push({ opcode: buf[i] & 0x0f, payload: buf.subarray(at, at + len) });
              i = at + len;
            }
            resolve(out);
          });
        });
        tlsSocket.on("response", (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
        tlsSocket.on("error", reject);
        tlsSocket.end();
      });
      const stdout = frames.filter((f) => f.opcode === 2 && f.payload[0] === 1).map((f) => f.payload.subarray(1).toString()).join("");
      assert.equal(stdout, "over-websocket\n");
      const status = frames.filter((f) => f.opcode === 2 && f.payload[0] === 3).map((f) => f.payload.subarray(1).toString()).join("");
      assert.match(status, /"status":"Success"/, "the exit status on the error channel");
    });

    test("kubectl attach streams the container's output", async () => {
      const out = await kubectlUntil(cluster, ["attach", "talker"], (o) => /line \d+\n/.test(o));
      assert.match(out, /line \d+\n/);
    });

    test("kubectl port-forward reaches a port the container serves", async () => {
      const local = await freePort();
      const child = spawn(assetPath("kubectl"), ["--kubeconfig", cluster.real.adminKubeconfig, "port-forward", "pod/web", `${local}:${httpdPort}`], { stdio: ["ignore", "pipe", "pipe"] });
      try {
        let out = "";
        child.stdout.on("data", (c) => (out += c));
        await waitFor("port-forward ready", () => out.includes("Forwarding from"), 30_000);
        assert.equal(await httpGet(local), "hello-from-pod\n");
        assert.equal(await httpGet(local), "hello-from-pod\n", "a second connection over the same forward");
      } finally {
        child.kill("SIGTERM");
      }
    });

    test("authentication and authorization: 401 without credentials, 403 without nodes/proxy, client certificates and TokenReview", async () => {
      const cp = cluster.real;
      const none = await nodeRequest(apiPort, "/pods", { ca });
      assert.equal(none.code, 401);
      assert.equal(none.body, "Unauthorized");
      const stranger = cp.clientCert("stranger", "stranger", ["team-a"]);
      const forbidden = await nodeRequest(apiPort, "/pods", { ca, cert: stranger });
      assert.equal(forbidden.code, 403);
      assert.equal(forbidden.body, "Forbidden (user=stranger, verb=get, resource=nodes, subresource(s)=[pods proxy])");
      const logs = await nodeRequest(apiPort, "/containerLogs/default/talker/main", { ca, cert: stranger });
      assert.equal(logs.code, 403);
      const admin = await nodeRequest(apiPort, "/pods", { ca, cert: cp.adminCert });
      assert.equal(admin.code, 200);
      const names = JSON.parse(admin.body).items.map((p) => p.metadata.name);
      for (const n of ["talker", "web"]) assert.ok(names.includes(n), `${n} in /pods`);
      // Served as the node holds them: the whole spec, and the status the node reports.
      const web = JSON.parse(admin.body).items.find((p) => p.metadata.name === "web");
      assert.equal(web.spec.containers[0].image, "busybox");
      assert.ok(web.metadata.uid && web.metadata.namespace === "default");
      assert.equal(web.status.phase, "Running");
      assert.ok(web.status.conditions.some((c) => c.type === "Ready"), "conditions are served");
      assert.match(web.status.containerStatuses[0].containerID, /^containerd:\/\//);
      // A service account's token, reviewed by the apiserver; allowed once RBAC grants nodes/proxy.
      const token = (await cp.kubectl(["create", "token", "default"])).trim();
      const denied = await nodeRequest(apiPort, "/healthz", { ca, token });
      assert.equal(denied.code, 403);
      assert.match(denied.body, /^Forbidden \(user=system:serviceaccount:default:default, verb=get, resource=nodes, subresource\(s\)=\[healthz proxy\]\)$/);
      await cp.kubectl(["create", "clusterrolebinding", "sa-kubelet-api", "--clusterrole=system:kubelet-api-admin", "--serviceaccount=default:default"]);
      const bad = await nodeRequest(apiPort, "/healthz", { ca, token: "not-a-token" });
      assert.equal(bad.code, 401);
      await waitFor("the denial's 30 s cache expires and the token is allowed", async () => (await nodeRequest(apiPort, "/healthz", { ca, token })).code === 200, 60_000, 2_000);
    });

    test("/stats/summary: the node and each pod from cgroup files and statfs", async () => {
      // The summary follows the last relist, a moment behind what the apiserver shows (the
      // kubelet's lags by cadvisor's housekeeping): wait for the container to be in it.
      const summary = await waitFor("talker's container in the summary", async () => {
        const r = await nodeRequest(apiPort, "/stats/summary", { ca, cert: cluster.real.adminCert });
        assert.equal(r.code, 200);
        const s = JSON.parse(r.body);
        return s.pods.find((p) => p.podRef.name === "talker")?.containers.some((c) => c.name === "main") ? s : false;
      });
      assert.equal(summary.node.nodeName, NODE);
      assert.ok(summary.node.memory.workingSetBytes > 0);
      assert.ok(summary.node.memory.availableBytes > 0);
      assert.ok(summary.node.cpu.usageCoreNanoSeconds > 0);
      assert.ok(summary.node.fs.capacityBytes > 0);
      assert.ok(summary.node.runtime.imageFs.capacityBytes > 0);
      assert.ok(summary.node.rlimit.maxpid > 0);
      // The node's network (eth0's figures at the top when it has one), swap and I/O pressure.
      assert.ok(summary.node.network.interfaces.length > 0 && summary.node.network.interfaces.every((i) => i.name !== "lo" && Number.isInteger(i.rxBytes)));
      assert.equal(summary.node.network.name, summary.node.network.interfaces.find((i) => i.name === "eth0")?.name ?? summary.node.network.interfaces[0].name);
      assert.ok(Number.isInteger(summary.node.swap.swapAvailableBytes) && Number.isInteger(summary.node.swap.swapUsageBytes));
      if (fs.existsSync("/proc/pressure/io")) assert.ok(Number.isInteger(summary.node.io.psi.some.total) && typeof summary.node.io.psi.full.avg10 === "number");
      const talker = summary.pods.find((p) => p.podRef.name === "talker");
      assert.ok(talker, "talker in the summary");
      assert.equal(talker.podRef.namespace, "default");
      assert.ok(talker.memory.workingSetBytes > 0, "pod memory from its cgroup");
      assert.ok(talker.cpu.usageCoreNanoSeconds > 0, "pod cpu from its cgroup");
      assert.ok(talker.process_stats.process_count >= 1);
      assert.ok(talker["ephemeral-storage"].usedBytes > 0, "its logs");
      const main = talker.containers.find((c) => c.name === "main");
      assert.ok(main.memory.workingSetBytes > 0);
      assert.ok(main.logs.usedBytes > 0);
      // A second reading gives a rate.
      const again = JSON.parse((await nodeRequest(apiPort, "/stats/summary", { ca, cert: cluster.real.adminCert })).body);
      assert.ok(again.pods.find((p) => p.podRef.name === "talker").cpu.usageNanoCores >= 0);
      // Through the apiserver, as `kubectl get --raw` reaches a node (the apiserver refuses
      // loopback node addresses for the proxy: the refusal is upstream's, not ours).
      await assert.rejects(cluster.kubectl(["get", "--raw", `/api/v1/nodes/${NODE}/proxy/stats/summary`]), /address not allowed|127\.0\.0\.1/);
    });

    test("/metrics, /metrics/resource and /metrics/probes parse as the Prometheus text format", async () => {
      const cert = cluster.real.adminCert;
      const families = async (p) => {
        const r = await nodeRequest(apiPort, p, { ca, cert });
        assert.equal(r.code, 200, p);
        return new Map(parsePrometheusTextFormat(r.body).map((f) => [f.name, f]));
      };
      const m = await families("/metrics");
      for (const name of ["kubelet_pleg_relist_duration_seconds", "kubelet_pleg_relist_interval_seconds", "kubelet_pleg_last_seen_seconds", "kubelet_running_pods", "kubelet_running_containers", "kubelet_runtime_operations_total", "kubelet_runtime_operations_duration_seconds", "kubelet_started_containers_total", "kubernetes_build_info", "process_resident_memory_bytes"]) {
        assert.ok(m.has(name), name);
      }
      assert.equal(m.get("kubelet_pleg_relist_duration_seconds").type, "HISTOGRAM");
      const starts = m.get("kubelet_pod_start_duration_seconds").metrics[0];
      assert.ok(Number(starts.count) >= 3, "every pod's start measured");
      assert.ok(Number(m.get("kubelet_running_pods").metrics[0].value) >= 2);
      const ops = m.get("kubelet_runtime_operations_total").metrics;
      assert.ok(ops.some((s) => s.labels.operation_type === "list_containers" && Number(s.value) > 0));
      assert.ok(Number(m.get("kubelet_started_containers_total").metrics[0].value) >= 3);
      const r = await waitFor("talker's container in /metrics/resource", async () => {
        const f = await families("/metrics/resource");
        return f.get("container_memory_working_set_bytes")?.metrics.some((s) => s.labels.pod === "talker") ? f : false;
      });
      const mem = r.get("container_memory_working_set_bytes").metrics.find((s) => s.labels.pod === "talker");
      assert.equal(mem.labels.namespace, "default");
      assert.equal(mem.labels.container, "main");
      assert.ok(Number(mem.value) > 0);
      for (const name of ["node_cpu_usage_seconds_total", "node_memory_working_set_bytes", "pod_cpu_usage_seconds_total", "container_start_time_seconds"]) assert.ok(r.has(name), name);
      assert.equal(r.get("resource_scrape_error").metrics[0].value, "0");
      assert.ok((await families("/metrics/probes")).has("prober_probe_total"));
    });

    test("logs rotate under a container writing fast: gzipped, bounded, and kubectl logs -f follows across", async () => {
      const line = "x".repeat(100);
      await cluster.kubectl(["create", "-f", "-"], { input: JSON.stringify(podObject("chatty", `i=0; while true; do i=$((i+1)); echo "$i ${line}"; done`)) });
      const logDir = () => {
        const base = path.join(work, "logs");
        const dir = fs.readdirSync(base).find((d) => d.startsWith("default_chatty_"));
        return dir ? path.join(base, dir, "main") : undefined;
      };
      await waitFor("a rotated log gzipped", () => logDir() && fs.readdirSync(logDir()).some((f) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(f)), 90_000, 500);
      // Follow across at least one more rotation: the numbers keep coming in order, none lost.
      const rotationsBefore = fs.readdirSync(logDir()).filter((f) => f.startsWith("0.log.")).join(",");
      const rotations = () => fs.readdirSync(logDir()).filter((f) => f.startsWith("0.log.")).join(",");
      const out = await kubectlUntil(cluster, ["logs", "-f", "chatty", "--tail=1"], (o) => o.length > 3 * 1024 * 1024 && rotations() !== rotationsBefore, 90_000);
      const numbers = out.split("\n").slice(0, -1).map((l) => Number(l.split(" ")[0]));
      for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[i - 1] + 1, `line ${i} follows line ${i - 1}`);
      assert.notEqual(fs.readdirSync(logDir()).filter((f) => f.startsWith("0.log.")).join(","), rotationsBefore, "rotated meanwhile");
      const files = fs.readdirSync(logDir());
      assert.ok(files.length <= 3, `at most 3 files (the live one included): ${files}`);
      // The live file stays bounded by being rotated again and again, whatever the machine's
      // speed (a size threshold would measure how fast this machine writes): it is replaced by a
      // new file again while the container keeps writing.
      const live = fs.statSync(path.join(logDir(), "0.log")).ino;
      await waitFor("the live log rotated again", () => {
        try {
          return fs.statSync(path.join(logDir(), "0.log")).ino !== live;
        } catch {
          return false; // between the rename and the runtime's reopen
        }
      }, 60_000, 200);
      await cluster.kubectl(["delete", "pod", "chatty", "--grace-period=1", "--wait=false"]);
    });

    test("bad requests get the kubelet's 4xx, never a crash", async () => {
      const cert = cluster.real.adminCert;
      const cases = [
        ["/containerLogs/default/talker/main?tailLines=-1", 422, /Invalid request/],
        ["/containerLogs/default/talker/main?sinceTime=yesterday", 400, /Unable to decode query/],
        ["/containerLogs/default/talker/main?sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z", 422, /Invalid request/],
        ["/containerLogs/default/nosuchpod/main", 404, /pod "nosuchpod" does not exist/],
        ["/containerLogs/default/talker/nope", 404, /container "nope" not found in pod "talker"/],
        ["/containerLogs/default/talker/..", 400, /invalid path segment/],
        ["/containerLogs/default/talker/%2e%2e", 400, /invalid path segment/],
        ["/exec/default/talker/main?command=ls", 400, /Upgrade request required/],
        ["/no/such/path", 404, /not found/],
      ];
      for (const [p, code, body] of cases) {
        const r = await nodeRequest(apiPort, p, { ca, cert });
        assert.equal(r.code, code, `${p}: ${r.body}`);
        assert.match(r.body, body, p);
      }
      assert.equal(nanolet.proc.exitCode, null, "the agent is still running");
    });
  });
}

// A pod's runtime settings as the kubelet hands them to CRI: DNS by policy and its limits,
// hostname and FQDN, the managed /etc/hosts, security contexts (merge, groups, image user,
// runAsNonRoot), port mappings, the sysctl admission, and the fields' validation words.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseResolvConf, podDnsConfig, sandboxHostname } from "../../dist/pod-runtime/dns.js";
import { hostNetworkHostsContent, managedHostsContent } from "../../dist/pod-runtime/etc-hosts.js";
import { containerSecurity, DEFAULT_MASKED_PATHS, NonRootError, sandboxSecurity } from "../../dist/pod-runtime/security-context.js";
import { portMappings, sysctlRefusal } from "../../dist/pod-runtime/ports-and-sysctls.js";
import { Executor } from "../../dist/agent/executor.js";
import { FakeRuntime } from "../../dist/cri/fake-runtime.js";
import { podFromManifest } from "../../dist/sources/manifest.js";
import { isIpAddress } from "../../dist/sources/dns-fields.js";

const RESOLV = "# node\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch corp.example. lab.example .\noptions ndots:2 timeout:1\n";
const settings = (over = {}) => ({ clusterDns: ["10.96.0.10"], clusterDomain: "cluster.local", resolvConf: RESOLV, nodeIps: ["192.168.1.5"], ...over });

test("resolv.conf: servers, the last search line without trailing dots or '.', options", () => {
  assert.deepEqual(parseResolvConf(RESOLV), { servers: ["10.0.0.2", "10.0.0.3"], searches: ["corp.example", "lab.example"], options: ["ndots:2", "timeout:1"] });
});

test("ClusterFirst: the cluster's server, its search path before the node's, ndots:5", () => {
  const { dns, warnings } = podDnsConfig({}, "shop", settings());
  assert.deepEqual(dns, {
    servers: ["10.96.0.10"],
    searches: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"],
    options: ["ndots:5"],
  });
  assert.deepEqual(warnings, []);
});

test("ClusterFirst on the node's network is Default; ClusterFirstWithHostNet is the cluster's", () => {
  assert.deepEqual(podDnsConfig({ hostNetwork: true }, "ns", settings()).dns.servers, ["10.0.0.2", "10.0.0.3"]);
  assert.deepEqual(podDnsConfig({ hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" }, "ns", settings()).dns.servers, ["10.96.0.10"]);
  assert.deepEqual(podDnsConfig({ dnsPolicy: "Default" }, "ns", settings()).dns.options, ["ndots:2", "timeout:1"]);
});

test("no --cluster-dns: ClusterFirst falls back to Default with a MissingClusterDNS warning", () => {
  const { dns, warnings } = podDnsConfig({}, "ns", settings({ clusterDns: [] }));
  assert.deepEqual(dns.servers, ["10.0.0.2", "10.0.0.3"]);
  assert.equal(warnings[0].reason, "MissingClusterDNS");
  assert.match(warnings[0].message, /cannot create Pod using "ClusterFirst" policy\. Falling back to "Default" policy\./);
});

test("--resolv-conf '': the host policy points at the local resolver with no search path", () => {
  assert.deepEqual(podDnsConfig({ dnsPolicy: "Default" }, "ns", settings({ resolvConf: "" })).dns, { servers: ["127.0.0.1"], searches: ["."], options: [] });
});

test("None takes dnsConfig alone; dnsConfig merges into the others, its options by name", () => {
  const none = podDnsConfig({ dnsPolicy: "None", dnsConfig: { nameservers: ["1.1.1.1"], searches: ["a.example"], options: [{ name: "ndots", value: "1" }, { name: "edns0" }] } }, "ns", settings());
  assert.deepEqual(none.dns, { servers: ["1.1.1.1"], searches: ["a.example"], options: ["ndots:1", "edns0"] });
  const merged = podDnsConfig({ dnsConfig: { nameservers: ["10.96.0.10", "8.8.8.8"], options: [{ name: "ndots", value: "2" }] } }, "ns", settings());
  assert.deepEqual(merged.dns.servers, ["10.96.0.10", "8.8.8.8"], "duplicates dropped");
  assert.deepEqual(merged.dns.options, ["ndots:2"]);
});

test("more than 3 nameservers or 32 search paths are cut, with a DNSConfigForming warning", () => {
  const searches = Array.from({ length: 40 }, (_, i) => `s${i}.example`);
  const { dns, warnings } = podDnsConfig({ dnsPolicy: "None", dnsConfig: { nameservers: ["1.1.1.1", "1.0.0.1", "8.8.8.8", "9.9.9.9"], searches } }, "ns", settings());
  assert.deepEqual(dns.servers, ["1.1.1.1", "1.0.0.1", "8.8.8.8"]);
  assert.equal(dns.searches.length, 32);
  assert.deepEqual(warnings.map((w) => w.reason), ["DNSConfigForming", "DNSConfigForming"]);
  assert.match(warnings[0].message, /^Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1\.1\.1\.1 1\.0\.0\.1 8\.8\.8\.8$/);
  assert.match(warnings[1].message, /^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: s0\.example/);
});

test("hostname: spec.hostname or the pod's name cut to 63; FQDN with setHostnameAsFQDN, at most 64", () => {
  assert.equal(sandboxHostname({}, "web-1", "ns", "cluster.local"), "web-1");
  assert.equal(sandboxHostname({ hostname: "db", subdomain: "sub" }, "web-1", "ns", "cluster.local"), "db");
  assert.equal(sandboxHostname({ hostname: "db", subdomain: "sub", setHostnameAsFQDN: true }, "web-1", "ns", "cluster.local"), "db.sub.ns.svc.cluster.local");
  assert.equal(sandboxHostname({}, "a".repeat(62) + "-bc", "ns", "x"), "a".repeat(62), "cut to 63, no trailing '-'");
  assert.throws(() => sandboxHostname({ hostname: "h".repeat(40), subdomain: "s".repeat(20), setHostnameAsFQDN: true }, "p", "ns", "cluster.local"), /FQDN .* is too long \(64 characters is the max, 82 characters requested\)/);
});

test("/etc/hosts: local names, the pod at its IP with its FQDN, then the aliases; host network copies the node's", () => {
  const text = managedHostsContent(["10.1.0.7"], "db", "sub.ns.svc.cluster.local", [{ ip: "1.2.3.4", hostnames: ["foo", "foo.bar"] }]);
  assert.equal(text, [
    "# Kubernetes-managed hosts file.",
    "127.0.0.1\tlocalhost",
    "::1\tlocalhost ip6-localhost ip6-loopback",
    "fe00::0\tip6-localnet",
    "fe00::0\tip6-mcastprefix",
    "fe00::1\tip6-allnodes",
    "fe00::2\tip6-allrouters",
    "10.1.0.7\tdb.sub.ns.svc.cluster.local\tdb",
    "",
    "# Entries added by HostAliases.",
    "1.2.3.4\tfoo\tfoo.bar",
    "",
  ].join("\n"));
  assert.equal(hostNetworkHostsContent("127.0.0.1 localhost\n", []), "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n");
});

const pod = (spec) => ({ metadata: { name: "p", namespace: "ns", uid: "u1", annotations: {} }, spec });

test("security: the container's fields over the pod's; fsGroup then supplementalGroups; the image's user when none", () => {
  const spec = {
    securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000], seccompProfile: { type: "RuntimeDefault" } },
    containers: [
      { name: "a", securityContext: { runAsUser: 1001, capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] }, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false } },
      { name: "b", securityContext: { privileged: true, procMount: "Unmasked", seccompProfile: { type: "Localhost", localhostProfile: "p.json" } } },
    ],
  };
  const a = containerSecurity(pod(spec), "a", { uid: 65534 }, "/root/seccomp");
  assert.equal(a.runAsUser, 1001);
  assert.equal(a.runAsGroup, 3000);
  assert.deepEqual(a.supplementalGroups, [2000, 4000, 5000]);
  assert.deepEqual(a.capabilities, { add: ["NET_ADMIN"], drop: ["ALL"] });
  assert.equal(a.readonlyRootfs, true);
  assert.equal(a.noNewPrivs, true);
  assert.deepEqual(a.maskedPaths, DEFAULT_MASKED_PATHS);
  assert.deepEqual(a.seccomp, { type: "RuntimeDefault" });
  const b = containerSecurity(pod(spec), "b", {}, "/root/seccomp");
  assert.equal(b.privileged, true);
  assert.equal(b.runAsUser, 1000, "the pod's user");
  assert.deepEqual(b.maskedPaths, []);
  assert.deepEqual(b.seccomp, { type: "Localhost", localhostRef: "/root/seccomp/p.json" });
  const plain = containerSecurity(pod({ containers: [{ name: "c" }] }), "c", { username: "app" }, "/s");
  assert.equal(plain.runAsUser, undefined);
  assert.equal(plain.runAsUsername, "app");
  assert.equal(plain.noNewPrivs, false, "only an explicit false sets no_new_privs");
  assert.deepEqual(plain.seccomp, { type: "Unconfined" }, "seccompDefault is off");
  assert.equal(containerSecurity(pod({ containers: [{ name: "c" }] }), "c", {}, "/s").runAsUser, 0, "an image that says nothing runs as root");
  const sandbox = sandboxSecurity(pod({ ...spec, securityContext: { ...spec.securityContext, sysctls: [{ name: "net.ipv4.tcp_syncookies", value: "1" }] } }), "/s");
  assert.equal(sandbox.privileged, true, "a privileged container makes a privileged sandbox");
  assert.deepEqual(sandbox.supplementalGroups, [2000, 4000, 5000]);
  assert.deepEqual(sandbox.sysctls, { "net.ipv4.tcp_syncookies": "1" });
});

test("runAsNonRoot: upstream's three refusals, and a numeric non-root image passes", () => {
  const spec = (sc) => ({ securityContext: { runAsNonRoot: true }, containers: [{ name: "c", securityContext: sc }] });
  assert.throws(() => containerSecurity(pod(spec({ runAsUser: 0 })), "c", {}, "/s"), (e) => e instanceof NonRootError && e.message === 'container\'s runAsUser breaks non-root policy (pod: "p_ns(u1)", container: c)');
  assert.throws(() => containerSecurity(pod(spec({})), "c", { uid: 0 }, "/s"), /container has runAsNonRoot and image will run as root \(pod: "p_ns\(u1\)", container: c\)/);
  assert.throws(() => containerSecurity(pod(spec({})), "c", { username: "nobody" }, "/s"), /image has non-numeric user \(nobody\), cannot verify user is non-root/);
  assert.equal(containerSecurity(pod(spec({})), "c", { uid: 65534 }, "/s").runAsUser, 65534);
  assert.equal(containerSecurity(pod(spec({ runAsNonRoot: false })), "c", {}, "/s").runAsUser, 0, "the container's false wins");
});

test("port mappings: every port of the containers and sidecars, protocol TCP by default", () => {
  const mappings = portMappings({
    containers: [{ name: "web", ports: [{ containerPort: 80, hostPort: 8080 }, { name: "dns", containerPort: 53, protocol: "UDP" }] }],
    initContainers: [{ name: "side", restartPolicy: "Always", ports: [{ containerPort: 9000 }] }, { name: "init", ports: [{ containerPort: 1 }] }],
  });
  assert.deepEqual(mappings, [
    { protocol: "TCP", containerPort: 80, hostPort: 8080, hostIp: "" },
    { protocol: "UDP", containerPort: 53, hostPort: 0, hostIp: "" },
    { protocol: "TCP", containerPort: 9000, hostPort: 0, hostIp: "" },
  ]);
});

test("sysctl admission: safe ones pass, others need --allowed-unsafe-sysctls, net.* never on the node's network", () => {
  const spec = (names, extra = {}) => ({ ...extra, securityContext: { sysctls: names.map((name) => ({ name, value: "1" })) } });
  assert.equal(sysctlRefusal(spec(["net.ipv4.tcp_syncookies", "kernel.shm_rmid_forced"]), []), undefined);
  assert.deepEqual(sysctlRefusal(spec(["kernel.shm_rmid_forced", "kernel.msgmax"]), []), { field: "spec.securityContext.sysctls[1].name", message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
  assert.equal(sysctlRefusal(spec(["kernel.msgmax"]), ["kernel.msg*"]), undefined);
  assert.equal(sysctlRefusal(spec(["net.core.somaxconn"], { hostNetwork: true }), ["net.core.somaxconn"]).message, 'forbidden sysctl: "net.core.somaxconn" not allowed with host net enabled');
});

test("validation: security, DNS and naming fields are refused with the apiserver's field paths and words", () => {
  const manifest = {
    apiVersion: "v1", kind: "Pod", metadata: { name: "bad" },
    spec: {
      hostPID: true, shareProcessNamespace: true, dnsPolicy: "None", hostname: "Bad_Name",
      hostAliases: [{ ip: "1.2.3", hostnames: ["ok"] }],
      securityContext: { runAsUser: -1, sysctls: [{ name: "net.ipv4.tcp_syncookies", value: "1" }, { name: "net.ipv4.tcp_syncookies", value: "1" }], seccompProfile: { type: "Localhost" } },
      containers: [{
        name: "c", image: "busybox",
        securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { add: ["NET_FLY"] }, procMount: "Weird", appArmorProfile: { type: "RuntimeDefault", localhostProfile: "x" } },
      }],
    },
  };
  let error;
  try {
    podFromManifest(manifest, { nodeName: "n", source: "f.yaml", documentIndex: 0 });
  } catch (e) {
    error = e;
  }
  const by = Object.fromEntries(error.problems.map((p) => [p.field, p.detail]));
  assert.equal(by["spec.securityContext.shareProcessNamespace"], "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled");
  assert.equal(by["spec.dnsConfig"], "Required value: must provide `dnsConfig` when `dnsPolicy` is None");
  assert.match(by["spec.hostname"], /^Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of/);
  assert.equal(by["spec.hostAliases[0].ip"], 'Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
  assert.equal(by["spec.securityContext.runAsUser"], "Invalid value: -1: must be between 0 and 2147483647, inclusive");
  assert.equal(by["spec.securityContext.sysctls[1].name"], 'Duplicate value: "net.ipv4.tcp_syncookies"');
  assert.equal(by["spec.securityContext.seccompProfile.localhostProfile"], "Required value: must be set when seccomp type is Localhost");
  assert.equal(by["spec.containers[0].securityContext"], "Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true");
  assert.equal(by["spec.containers[0].securityContext.capabilities.add[0]"], 'Invalid value: "NET_FLY": not a Linux capability');
  assert.equal(by["spec.containers[0].securityContext.procMount"], 'Unsupported value: "Weird": supported values: "Default", "Unmasked"');
  assert.equal(by["spec.containers[0].securityContext.appArmorProfile.localhostProfile"], 'Invalid value: "x": can only be set when AppArmor type is Localhost');
});

test("a valid pod with every one of these fields is accepted", () => {
  const spec = podFromManifest({
    apiVersion: "v1", kind: "Pod", metadata: { name: "good" },
    spec: {
      hostIPC: false, shareProcessNamespace: true, dnsPolicy: "None", dnsConfig: { nameservers: ["10.0.0.1", "fd00::1"], searches: ["a.example."], options: [{ name: "ndots", value: "2" }] },
      hostname: "db", subdomain: "sub", setHostnameAsFQDN: true, hostAliases: [{ ip: "::1", hostnames: ["me.local"] }],
      securityContext: { runAsUser: 1000, runAsNonRoot: true, fsGroup: 2000, sysctls: [{ name: "net.ipv4.tcp_syncookies", value: "1" }] },
      containers: [{ name: "c", image: "busybox", stdin: true, tty: true, securityContext: { capabilities: { add: ["CAP_NET_ADMIN"], drop: ["all"] }, readOnlyRootFilesystem: true } }],
    },
  }, { nodeName: "n", source: "f.yaml", documentIndex: 0 });
  assert.equal(spec.name, "good-n");
});

test("IP addresses as the apiserver reads them", () => {
  for (const ip of ["10.0.0.1", "::1", "fd00::1", "2001:db8::ffff", "::ffff:10.0.0.1", "1:2:3:4:5:6:7:8"]) assert.ok(isIpAddress(ip), ip);
  for (const ip of ["1.2.3", "010.0.0.1", "256.0.0.1", "1::2::3", "1:2:3:4:5:6:7:8:9", "abc", "", "fe80::1%eth0"]) assert.ok(!isIpAddress(ip), ip);
});

test("the executor gives CRI the sandbox's DNS, hostname, ports and the container's security, tty and /etc/hosts", async () => {
  const runtime = new FakeRuntime();
  runtime.images.add("busybox");
  runtime.imageUsers.set("busybox", { uid: 0 });
  const podsDir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-podrt-"));
  const spec = {
    hostname: "db", subdomain: "sub", hostAliases: [{ ip: "1.2.3.4", hostnames: ["alias"] }],
    securityContext: { runAsUser: 1000, sysctls: [{ name: "net.ipv4.tcp_syncookies", value: "1" }] },
    containers: [{ name: "c", image: "busybox", tty: true, stdin: true, ports: [{ containerPort: 80, hostPort: 8080 }], securityContext: { capabilities: { drop: ["ALL"] } } }],
  };
  const facts = { name: "p", namespace: "ns", uid: "u1", labels: {}, annotations: {}, nodeName: "n", serviceAccountName: "", hostIps: ["192.168.1.5"], podIps: [], containers: [], allocatable: { cpu: "1", memory: "1", "ephemeral-storage": "0" }, spec };
  const events = [];
  const executor = new Executor({
    runtime, podLogsDir: podsDir, log: { log() {} }, podsDir,
    podFacts: () => ({ ...facts }),
    onEvent: (_a, e) => events.push(e),
    podRuntime: { dns: settings(), seccompRoot: "/s", nodeHostsFile: "/etc/hosts" },
  });
  const sandbox = { podUid: "u1", podName: "p", podNamespace: "ns", attempt: 0, hostNetwork: false, terminationGracePeriodSeconds: 30n, cgroupParent: "/kubepods/podu1" };
  const run = await executor.execute({ id: 1n, podUid: "u1", podNamespace: "ns", podName: "p", kind: { tag: "run-sandbox", val: sandbox } });
  assert.equal(run.outcome.tag, "ok");
  const config = runtime.sandboxes.get(run.outcome.val).config;
  assert.equal(config.hostname, "db");
  assert.deepEqual(config.dns.servers, ["10.96.0.10"]);
  assert.deepEqual(config.portMappings, [{ protocol: "TCP", containerPort: 80, hostPort: 8080, hostIp: "" }]);
  assert.deepEqual(config.security.sysctls, { "net.ipv4.tcp_syncookies": "1" });
  assert.deepEqual(events, []);
  const container = { name: "c", image: "busybox", imagePullPolicy: "IfNotPresent", command: [], args: [], env: [], requests: [], limits: [], restartOnResize: [], ports: [], restartPolicy: "" };
  const resources = { cpuShares: 2n, cpuWeight: 1n, cpuQuotaUs: 0n, cpuPeriodUs: 100000n, memoryLimitBytes: 0n, oomScoreAdj: 1000 };
  const create = await executor.execute({ id: 2n, podUid: "u1", podNamespace: "ns", podName: "p", kind: { tag: "create-container", val: { sandboxId: run.outcome.val, sandbox, attempt: 0, specHash: "h", container, resources } } });
  assert.equal(create.outcome.tag, "ok", JSON.stringify(create.outcome));
  const created = runtime.containers.get(create.outcome.val).config;
  assert.equal(created.tty, true);
  assert.equal(created.stdin, true);
  assert.equal(created.security.runAsUser, 1000);
  assert.deepEqual(created.security.capabilities, { add: [], drop: ["ALL"] });
  // FakeRuntime has no pod IPs: the pod network's file is not mounted, as the kubelet's rule says.
  assert.equal((created.mounts ?? []).some((m) => m.containerPath === "/etc/hosts"), false);
  // On the node's network the pod's IPs are the node's: the file is written and mounted.
  const hostNet = { ...sandbox, hostNetwork: true };
  const create2 = await executor.execute({ id: 3n, podUid: "u1", podNamespace: "ns", podName: "p", kind: { tag: "create-container", val: { sandboxId: run.outcome.val, sandbox: hostNet, attempt: 1, specHash: "h", container, resources } } });
  const mount = runtime.containers.get(create2.outcome.val).config.mounts.find((m) => m.containerPath === "/etc/hosts");
  assert.equal(mount.hostPath, path.join(podsDir, "u1", "etc-hosts"));
  assert.match(fs.readFileSync(mount.hostPath, "utf8"), /^# Kubernetes-managed hosts file \(host network\)\.\n[\s\S]*\n# Entries added by HostAliases\.\n1\.2\.3\.4\talias\n$/);
  // runAsNonRoot against an image that runs as root: CreateContainerConfigError's kind.
  facts.spec = { ...spec, securityContext: { runAsNonRoot: true } };
  const refused = await executor.execute({ id: 4n, podUid: "u1", podNamespace: "ns", podName: "p", kind: { tag: "create-container", val: { sandboxId: run.outcome.val, sandbox, attempt: 2, specHash: "h", container, resources } } });
  assert.equal(refused.outcome.tag, "err");
  assert.equal(refused.outcome.val.kind, "config");
  assert.match(refused.outcome.val.message, /image will run as root/);
});

test("nodeSelector and affinity: shapes and operators as the apiserver checks them; pod affinity is the scheduler's", () => {
  const manifest = (spec) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "busybox" }], ...spec } });
  const ctx = { nodeName: "n", source: "f.yaml", documentIndex: 0 };
  podFromManifest(manifest({
    nodeSelector: { "kubernetes.io/os": "linux" },
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "Gt", values: ["3"] }] }] },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: "a", operator: "Exists" }] } }],
      },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "x" } } }] },
    },
  }), ctx);
  let error;
  try {
    podFromManifest(manifest({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [
      { matchExpressions: [{ key: "a", operator: "Near", values: ["b"] }, { key: "b", operator: "In" }, { key: "c", operator: "Exists", values: ["x"] }], matchFields: [{ key: "spec.x", operator: "In", values: ["y"] }] },
    ] } } } }), ctx);
  } catch (e) {
    error = e;
  }
  const by = Object.fromEntries(error.problems.map((p) => [p.field, p.detail]));
  const term = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
  assert.equal(by[`${term}.matchExpressions[0].operator`], 'Unsupported value: "Near": supported values: "DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"');
  assert.equal(by[`${term}.matchExpressions[1].values`], "Required value: must be specified when `operator` is 'In' or 'NotIn'");
  assert.equal(by[`${term}.matchExpressions[2].values`], "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  assert.equal(by[`${term}.matchFields[0].key`], 'Unsupported value: "spec.x": supported values: "metadata.name"');
});

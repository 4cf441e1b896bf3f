// Manifests a new user (or an attacker) drops into the directory: each is refused with its file
// and field, never stops the scan, and never takes the other pods with it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { scanManifestDir, StaticPodSource } from "../../dist/sources/static-pods.js";
import { MAX_DOCUMENTS_PER_FILE, MAX_MANIFEST_BYTES, MAX_NESTING_DEPTH } from "../../dist/sources/limits.js";

const GOOD = `apiVersion: v1
kind: Pod
metadata: {name: good}
spec:
  containers: [{name: app, image: busybox}]
`;

function dirWith(files) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-hostile-"));
  fs.writeFileSync(path.join(d, "good.yaml"), GOOD);
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(d, name), content);
  return d;
}

/** Scans `d`, checks the good pod survived, returns the problems of the other files by base name. */
function problemsBeside(d, alsoRead = []) {
  const { pods, problems, failed } = scanManifestDir(d, "n");
  assert.equal(failed, undefined);
  assert.deepEqual(pods.map((p) => p.spec.name), ["good-n", ...alsoRead]);
  const byFile = {};
  for (const p of problems) (byFile[path.basename(p.origin.split("#")[0])] ??= []).push(p);
  return byFile;
}

test("symlink loops, dangling links, fifos and directories are named and skipped", () => {
  const d = dirWith({});
  fs.symlinkSync("self.yaml", path.join(d, "self.yaml"));
  fs.symlinkSync("b.yaml", path.join(d, "a.yaml"));
  fs.symlinkSync("a.yaml", path.join(d, "b.yaml"));
  fs.symlinkSync("nowhere.yaml", path.join(d, "dangling.yaml"));
  fs.symlinkSync("good.yaml", path.join(d, "link-to-good.yaml.bak.yaml"));
  fs.mkdirSync(path.join(d, "dir.yaml"));
  execFileSync("mkfifo", [path.join(d, "fifo.yaml")]);
  const { pods, problems } = scanManifestDir(d, "n");
  // The link to the good file is a second copy of it: same name, refused later by the core.
  assert.equal(pods.length, 2);
  const by = Object.fromEntries(problems.map((p) => [path.basename(p.origin), p.message]));
  assert.match(by["self.yaml"], /symlink loop/);
  assert.match(by["a.yaml"], /symlink loop/);
  assert.match(by["b.yaml"], /symlink loop/);
  assert.match(by["dangling.yaml"], /symlink to a missing file/);
  assert.match(by["fifo.yaml"], /a fifo/);
  assert.equal(by["dir.yaml"], undefined);
});

test("YAML bombs, self-references and deep nesting are refused with a reason, not a crash", () => {
  const bomb = ["a: &a [x,x,x,x,x,x,x,x,x,x]"];
  for (let i = 1; i < 9; i++) bomb.push(`${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(10).fill(`*${"abcdefghij"[i - 1]}`).join(",")}]`);
  const hundredAliases = GOOD.replace("metadata: {name: good}", "metadata: {name: &n hundred}") + `  tolerations: [${Array(100).fill("{key: *n, operator: Exists}").join(", ")}]\n`;
  const d = dirWith({
    "bomb.yaml": bomb.join("\n") + "\n",
    "cycle.yaml": "apiVersion: v1\nkind: Pod\nmetadata: &m {name: x, self: *m}\n",
    "cycle2.yaml": "&a [*a]\n",
    "deep.json": "[".repeat(100_000) + "]".repeat(100_000),
    "hundred.yaml": hundredAliases,
  });
  const by = problemsBeside(d, ["hundred-n"]);
  assert.match(by["bomb.yaml"][0].message, /Too many (aliases|values)/);
  assert.match(by["cycle.yaml"][0].message, /refers to itself|invalid YAML/);
  assert.match(by["cycle2.yaml"][0].message, /refers to itself|invalid YAML/);
  assert.match(by["deep.json"][0].message, new RegExp(`nest more than ${MAX_NESTING_DEPTH} levels`));
  // A hundred aliases of one scalar are fine YAML: the pod is read (its tolerations are valid).
  assert.equal(by["hundred.yaml"], undefined);
});

test("gzip, binary, bad UTF-8 and UTF-16 files", () => {
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(GOOD.replace("good", "wide"), "utf16le")]);
  const d = dirWith({
    "gz.yaml": zlib.gzipSync(GOOD),
    "bin.yaml": Buffer.from([1, 2, 0, 3]),
    "latin1.yaml": Buffer.from("name: caf\xe9\n", "latin1"),
    "wide.yaml": utf16,
  });
  const { pods, problems } = scanManifestDir(d, "n");
  assert.deepEqual(pods.map((p) => p.spec.name).sort(), ["good-n", "wide-n"]);
  const by = Object.fromEntries(problems.map((p) => [path.basename(p.origin), p.message]));
  assert.match(by["gz.yaml"], /gzip-compressed/);
  assert.match(by["bin.yaml"], /binary \(a NUL byte at offset 2\)/);
  assert.match(by["latin1.yaml"], /not UTF-8 text \(byte 0xe9 at offset 9\)/);
});

test("a file over the size limit and a file with too many documents are refused by name", () => {
  const d = dirWith({
    "huge.yaml": "# " + "x".repeat(MAX_MANIFEST_BYTES) + "\n",
    "many.yaml": Array(MAX_DOCUMENTS_PER_FILE + 1).fill(GOOD).join("---\n"),
  });
  const by = problemsBeside(d);
  assert.match(by["huge.yaml"][0].message, /Too long: the file is \d+ bytes; a manifest may have at most 262144/);
  assert.match(by["many.yaml"][0].message, /Too many documents: 129/);
});

test("a running pod's file that grows past a limit keeps its pod (a cap never stops what runs); the rest of the directory is read", () => {
  const d = dirWith({ "web.yaml": GOOD.replace(/name: good/, "name: web"), "other.yaml": GOOD.replace(/name: good/, "name: other") });
  const cache = new Map();
  const first = scanManifestDir(d, "n", cache);
  assert.equal(first.pods.length, 3, "good.yaml, web.yaml and other.yaml");
  for (const grown of [Array(MAX_DOCUMENTS_PER_FILE + 1).fill(GOOD).join("---\n"), "# " + "x".repeat(MAX_MANIFEST_BYTES) + "\n", `${"[".repeat(MAX_NESTING_DEPTH + 1)}${"]".repeat(MAX_NESTING_DEPTH + 1)}\n`]) {
    fs.writeFileSync(path.join(d, "web.yaml"), grown);
    for (let scan = 0; scan < 2; scan++) {
      const next = scanManifestDir(d, "n", cache);
      assert.deepEqual(next.pods.map((p) => p.spec.uid).sort(), first.pods.map((p) => p.spec.uid).sort(), "both pods are still desired");
      assert.match(next.problems.find((p) => p.origin.endsWith("web.yaml")).message, /^Too .*keeping its 1 pod\(s\) from the last good read/);
    }
  }
  // A file that was never good brings no pods, only its problem.
  fs.writeFileSync(path.join(d, "new.yaml"), Array(MAX_DOCUMENTS_PER_FILE + 1).fill(GOOD).join("---\n"));
  assert.equal(scanManifestDir(d, "n", cache).pods.length, 3);
});

test("every problem of a manifest is reported at once, unimplemented fields by name", () => {
  const bad = `apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  hostPID: true
  hostIPC: true
  nodeSelector: {disk: ssd}
  activeDeadlineSeconds: 10
  os: {name: windows}
  shareProcessNamespace: true
  hostAliases: [{ip: 1.2.3.4, hostnames: [a]}]
  securityContext: {runAsUser: -5}
  dnsPolicy: None
  ephemeralContainers: [{name: e, image: busybox}]
  tolerations: [{key: "bad key!", operator: Equals}]
  containers:
    - name: app
      image: busybox
      imagePullPolicy: Sometimes
      ports: [{containerPort: 70000}]
      livenessProbe: {exec: {command: [true]}}
`;
  const d = dirWith({ "bad.yaml": bad, "ports.yaml": GOOD.replace("image: busybox}", 'image: busybox, ports: "80"}') });
  const by = problemsBeside(d);
  const fields = by["bad.yaml"].map((p) => p.field);
  for (const f of ["spec.os", "spec.securityContext.shareProcessNamespace",
    "spec.securityContext.runAsUser", "spec.ephemeralContainers", "spec.dnsConfig",
    "spec.tolerations[0].key", "spec.tolerations[0].operator", "spec.containers[0].livenessProbe.exec.command[0]",
    "spec.containers[0].ports[0].containerPort", "spec.containers[0].imagePullPolicy"]) {
    assert.ok(fields.includes(f), `${f} in ${fields.join(", ")}`);
  }
  const unimplemented = by["bad.yaml"].find((p) => p.field === "spec.os");
  assert.equal(unimplemented.message, "Unsupported field: nanolet does not implement it yet");
  assert.equal(by["bad.yaml"].find((p) => p.field === "spec.containers[0].ports[0].containerPort").message, "Invalid value: 70000: must be between 1 and 65535, inclusive");
  assert.equal(by["bad.yaml"].find((p) => p.field === "spec.containers[0].imagePullPolicy").message, 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"');
  assert.deepEqual(by["ports.yaml"].map((p) => p.field), ["spec.containers[0].ports"]);
});

test("what the apiserver writes into every pod is accepted: empty securityContext, false flags, dnsPolicy ClusterFirst", () => {
  const defaulted = GOOD.replace("spec:\n", "spec:\n  securityContext: {}\n  hostPID: false\n  dnsPolicy: ClusterFirst\n  schedulerName: default-scheduler\n  enableServiceLinks: true\n");
  const d = dirWith({ "defaulted.yaml": defaulted.replace("name: good", "name: defaulted") });
  const { pods, problems } = scanManifestDir(d, "n");
  assert.deepEqual(problems, []);
  assert.equal(pods.length, 2);
});

test("a directory that cannot be read keeps the last good pods; a missing one means none", () => {
  const d = dirWith({});
  const scans = [];
  const failures = [];
  const source = new StaticPodSource(d, "n", (s) => scans.push(s), 1_000_000, (error, pods) => failures.push([error, pods]));
  source.scan();
  assert.equal(scans.at(-1).pods.length, 1);
  // Not a directory any more: the listing fails with ENOTDIR, and the pods stay.
  const moved = `${d}.moved`;
  fs.renameSync(d, moved);
  fs.writeFileSync(d, "now a file");
  source.scan();
  assert.equal(scans.at(-1).pods.length, 1);
  assert.match(failures[0][0], /ENOTDIR/);
  assert.equal(failures[0][1], 1);
  fs.rmSync(d);
  fs.renameSync(moved, d);
  source.scan();
  assert.equal(failures.at(-1)[0], undefined);
  fs.rmSync(d, { recursive: true });
  source.scan();
  assert.equal(scans.at(-1).pods.length, 0);
  source.stop();
});

test("a manifest swapped for a fifo while the agent runs is named and never blocks the scan", () => {
  const d = dirWith({});
  const scans = [];
  const source = new StaticPodSource(d, "n", (s) => scans.push(s), 1_000_000);
  source.scan();
  const file = path.join(d, "good.yaml");
  fs.renameSync(file, `${file}.bak`);
  execFileSync("mkfifo", [file]);
  source.scan();
  // A fifo is a different file (not transient): its pod goes, and the fifo is named.
  assert.equal(scans.at(-1).pods.length, 0);
  assert.match(scans.at(-1).problems[0].message, /a fifo/);
  source.stop();
});

test("paths built from names stay under their roots", async () => {
  const { pathUnder, PathEscapeError } = await import("../../dist/common/safe-path.js");
  const { podLogDirectory } = await import("../../dist/logs/log-paths.js");
  const { podCgroupDirs } = await import("../../dist/node/cgroups.js");
  const { cgroupDirs } = await import("../../dist/node/cgroup-manager.js");
  assert.equal(pathUnder("/sys/fs/cgroup/cpu", "/kubepods/besteffort/podabc"), "/sys/fs/cgroup/cpu/kubepods/besteffort/podabc");
  assert.throws(() => pathUnder("/sys/fs/cgroup/cpu", "/kubepods/../../../etc"), PathEscapeError);
  assert.throws(() => pathUnder("/var/log/pods", ".."), PathEscapeError);
  assert.throws(() => pathUnder("/var/log/pods", ""), PathEscapeError);
  assert.throws(() => podLogDirectory("/var/log/pods", { podNamespace: "default", podName: "x", podUid: "a/../../../etc" }), PathEscapeError);
  assert.equal(podLogDirectory("/var/log/pods", { podNamespace: "default", podName: "x", podUid: "u1" }), "/var/log/pods/default_x_u1");
  assert.throws(() => cgroupDirs("/kubepods/podx/../../../../tmp", "/sys/fs/cgroup", 1), PathEscapeError);
  assert.deepEqual(podCgroupDirs("../../../tmp"), []);
});

test("a manifest that is a link to a password file is refused whole, and none of its lines reach the problems or the log", async () => {
  const secrets = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-shadow-")), "shadow");
  fs.writeFileSync(secrets, "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n");
  const d = dirWith({});
  fs.symlinkSync(secrets, path.join(d, "evil.yaml"));
  // Not a Pod either, but shaped like one: every unknown field is not listed, only the first 20.
  const junk = ["apiVersion: v1", "kind: Pod", "metadata: {name: junk}", "spec: {containers: [{name: a, image: b}]}", ...Array.from({ length: 500 }, (_, i) => `field${i}: 1`)].join("\n");
  fs.writeFileSync(path.join(d, "junk.yaml"), junk);
  const by = problemsBeside(d);
  assert.deepEqual(by["evil.yaml"].map((p) => [p.field, p.message]), [["", "not a Pod manifest: it has neither apiVersion nor kind (a Pod manifest says apiVersion: v1, kind: Pod)"]]);
  assert.equal(by["junk.yaml"].length, 21);
  assert.match(by["junk.yaml"][20].message, /and 480 more problems in this document/);
  const { formatLine, printable } = await import("../../dist/common/log.js");
  const all = JSON.stringify(by) + by["junk.yaml"].map((p) => formatLine("error", "Refused pod manifest", { file: p.origin, field: p.field, error: p.message })).join("\n");
  assert.doesNotMatch(all, /SECRETHASH|daemon/);
  // Control characters from input never reach a terminal raw; long values are cut.
  assert.equal(formatLine("info", "m", { pod: "a\u0000b\u001b[31m" }, new Date(0)), 'time=1970-01-01T00:00:00.000Z level=info msg="m" pod="a\\u0000b\\u001b[31m"');
  assert.match(formatLine("info", "m", { v: "x".repeat(5000) }), /x{1024}\.\.\.\(3976 more characters\)/);
  assert.equal(printable("a\nb\u0000"), "a\\u000ab\\u0000");
});

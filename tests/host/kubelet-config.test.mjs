// `nanolet run --config`: a KubeletConfiguration file read as the kubelet reads it. Defaults are
// held to the upstream kubelet v1.36.2's own /configz (tests/fixtures/kubelet-configz.json, captured
// by tests/fixtures/capture-kubelet-configz.mjs); then the file, then flags; upstream's checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { FIELDS, getPath, resolveConfig, ConfigError } from "../../dist/config/kubelet-config.js";
import { formatGoDuration, parseGoDuration } from "../../dist/config/go-duration.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const upstream = JSON.parse(fs.readFileSync(path.join(here, "../fixtures/kubelet-configz.json"), "utf8"));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-config-"));
let n = 0;

/** Writes a config file (YAML text, header added) and returns its path. */
function configFile(body, header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n") {
  const file = path.join(dir, `config-${n++}.yaml`);
  fs.writeFileSync(file, header + body);
  return file;
}

const resolve = (body, flags = {}, hasKubeconfig = true) => resolveConfig({ file: body === undefined ? undefined : configFile(body), flags, hasKubeconfig });

/** Fields nanolet defaults differently from the kubelet on purpose (docs/running.md says why). */
const DELIBERATE = new Set(["staticPodPath"]);

test("every field's default with --config is the upstream kubelet's own (its /configz)", () => {
  const { config } = resolve("");
  let compared = 0;
  for (const field of FIELDS) {
    const top = field.path.split(".")[0];
    if (field.default === undefined || DELIBERATE.has(field.path) || upstream.setByCapture.includes(top)) continue;
    const theirs = getPath(upstream.kubeletconfig, field.path);
    const ours = getPath(config, field.path);
    // The kubelet leaves empty lists, maps and strings out of /configz (omitempty).
    const empty = (v) => v === "" || (Array.isArray(v) && v.length === 0) || (v && typeof v === "object" && Object.keys(v).length === 0);
    if (theirs === undefined) assert.ok(empty(ours) || ours === 0 || ours === false, `${field.path}: upstream leaves it out, nanolet has ${JSON.stringify(ours)}`);
    else assert.deepEqual(ours, theirs, field.path);
    compared++;
  }
  assert.ok(compared >= 25, `compared ${compared} fields`);
  // The ones the capture had to set are upstream's documented defaults.
  assert.equal(config.port, 10250);
  assert.equal(config.healthzPort, 10248);
  assert.equal(config.authentication.anonymous.enabled, false);
  assert.equal(config.authentication.webhook.enabled, true);
  assert.equal(config.authorization.mode, "Webhook");
  assert.equal(config.containerRuntimeEndpoint, "unix:///run/containerd/containerd.sock");
  assert.equal(config.staticPodPath, "/etc/kubernetes/manifests");
});

test("without --config, the flags' defaults stay nanolet's (no token webhook; AlwaysAllow without a kubeconfig)", () => {
  const standalone = resolve(undefined, {}, false).config;
  assert.equal(standalone.authorization.mode, "AlwaysAllow");
  assert.equal(standalone.authentication.webhook.enabled, false);
  assert.equal(resolve(undefined, {}, true).config.authorization.mode, "Webhook");
  assert.deepEqual(standalone.evictionHard, upstream.kubeletconfig.evictionHard);
});

test("the file overrides defaults and flags given override the file", () => {
  const body = "maxPods: 30\nport: 11250\nevictionHard:\n  memory.available: 200Mi\nclusterDNS: [10.0.0.10]\ncontainerLogMonitorInterval: 90s\nauthentication:\n  anonymous:\n    enabled: true\n";
  const { config } = resolve(body, { "max-pods": "12", "cluster-dns": "10.0.0.53,10.0.0.54", "anonymous-auth": false });
  assert.equal(config.maxPods, 12);
  assert.equal(config.port, 11250);
  assert.deepEqual(config.evictionHard, { "memory.available": "200Mi" }, "a file's evictionHard replaces the defaults (mergeDefaultEvictionSettings is false)");
  assert.deepEqual(config.clusterDNS, ["10.0.0.53", "10.0.0.54"]);
  assert.equal(config.containerLogMonitorInterval, "1m30s", "durations are shown as Go writes them");
  assert.equal(config.authentication.anonymous.enabled, false);
  assert.equal(config.authentication.webhook.enabled, true, "siblings of a field the file sets keep their defaults");
  const flags = resolve(body, { "eviction-hard": "memory.available<1Gi,nodefs.available<5%" }).config;
  assert.deepEqual(flags.evictionHard, { "memory.available": "1Gi", "nodefs.available": "5%" });
});

test("zero in the file means the default where upstream's defaulting says so", () => {
  const { config } = resolve('maxPods: 0\nport: 0\nnodeStatusUpdateFrequency: 0s\npodLogsDir: ""\nreadOnlyPort: 0\nhealthzPort: 0\n');
  assert.equal(config.maxPods, 110);
  assert.equal(config.port, 10250);
  assert.equal(config.nodeStatusUpdateFrequency, "10s");
  assert.equal(config.podLogsDir, "/var/log/pods");
  assert.equal(config.healthzPort, 0, "a pointer field: 0 turns healthz off");
});

test("mergeDefaultEvictionSettings keeps the defaults a file leaves out; a lone update frequency sets the report one", () => {
  const { config } = resolve("mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 300Mi\nnodeStatusUpdateFrequency: 20s\n");
  assert.deepEqual(config.evictionHard, { ...upstream.kubeletconfig.evictionHard, "memory.available": "300Mi" });
  assert.equal(config.nodeStatusReportFrequency, "20s");
});

test("unknown fields and upstream fields nanolet ignores are warned about by name; the rest loads", () => {
  const { config, warnings } = resolve("maxPods: 7\nmaxPodz: 8\nregistryPullQPS: 9\nauthentication:\n  anonymous:\n    enabled: true\n  anonymouz: {}\n");
  assert.equal(config.maxPods, 7);
  assert.equal(config.authentication.anonymous.enabled, true);
  assert.deepEqual(warnings.sort(), [
    'field "registryPullQPS" is not implemented by nanolet and is ignored',
    'unknown field "authentication.anonymouz"',
    'unknown field "maxPodz"',
  ]);
});

test("a field given twice is refused, naming it and its line", () => {
  assert.throws(() => resolve("maxPods: 10\nport: 11250\nmaxPods: 20\n"), (e) => e instanceof ConfigError && /field "maxPods" is given twice \(line 5\)/.test(e.message));
});

test("a wrong kind or apiVersion, bad YAML, or a missing file is refused with the file's name", () => {
  const withHeader = (header) => resolveConfig({ file: configFile("", header), flags: {}, hasKubeconfig: true });
  assert.throws(() => withHeader("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n"), /kind is "Pod", expected "KubeletConfiguration"/);
  assert.throws(() => withHeader("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n"), /apiVersion is "kubelet.config.k8s.io\/v1"/);
  assert.throws(() => withHeader("- a list\n"), /expected a KubeletConfiguration object/);
  assert.throws(() => resolve("maxPods: [1\n"), /not valid YAML \(line \d+\)/);
  assert.throws(() => resolveConfig({ file: path.join(dir, "nope.yaml"), flags: {}, hasKubeconfig: false }), /cannot read .*nope\.yaml/);
});

test("values are checked as the kubelet checks them, each error naming its field", () => {
  const cases = [
    ["containerLogMaxFiles: 1\n", /containerLogMaxFiles must be greater than 1/],
    ["containerLogMonitorInterval: 2s\n", /containerLogMonitorInterval must be a positive time duration greater than or equal to 3s/],
    ["crashLoopBackOff:\n  maxContainerRestartPeriod: 301s\n", /CrashLoopBackOff\.MaxContainerRestartPeriod \(got: 301 seconds\) must be set between 1s and 300s/],
    ["podLogsDir: var/log\n", /pod logs path "var\/log" must be absolute path/],
    ["podLogsDir: /var/../log\n", /pod logs path "\/var\/..\/log" must be normalized/],
    ["port: 70000\n", /port \(--port\) 70000 must be between 1 and 65535/],
    ["maxPods: -1\n", /maxPods \(--max-pods\) -1 must not be a negative number/],
    ["nodeLeaseDurationSeconds: -5\n", /nodeLeaseDurationSeconds must be greater than 0/],
    ["evictionPressureTransitionPeriod: 10x\n", /evictionPressureTransitionPeriod: time: unknown unit "x" in duration "10x"/],
    ["maxPods: ten\n", /maxPods: expected a whole number from -2147483648 to 2147483647, got "ten"/],
    // The kubelet's integers are int32: one past the largest does not load.
    ["containerLogMaxFiles: 2147483648\n", /containerLogMaxFiles: expected a whole number from -2147483648 to 2147483647, got 2147483648/],
    // A section nanolet reads, written as something else, is an error, not an unknown field.
    ["authentication: x\n", /invalid configuration: authentication: expected an object, got "x"/],
    ["authorization:\n  mode: RBAC\n", /authorization\.mode \(--authorization-mode\) "RBAC" must be one of/],
    ["evictionHard:\n  memory.available: 1Gi,nodefs.available<1%\n", /evictionHard: "memory.available": .* may not contain/],
    ["containerLogMaxSize: ten\n", /containerLogMaxSize \(--container-log-max-size\) "ten" is not a quantity/],
  ];
  for (const [body, expected] of cases) assert.throws(() => resolve(body), expected, body);
  // Several errors at once are all reported.
  assert.throws(() => resolve("containerLogMaxFiles: 1\nmaxPods: -1\n"), (e) => /containerLogMaxFiles/.test(e.message) && /maxPods/.test(e.message));
  // Flags in the kubelet's map syntax.
  assert.throws(() => resolve(undefined, { "eviction-hard": "memory.available" }), /invalid argument "memory.available" for "--eviction-hard" flag: malformed pair, expect string<string/);
  assert.throws(() => resolve(undefined, { "eviction-soft-grace-period": "memory.available<1m" }), /malformed pair, expect string=string/);
});

test("Go durations: parsed to the nanosecond and written as Go writes them", () => {
  const cases = { "0": 0n, "10ns": 10n, "1.5s": 1_500_000_000n, "1m30s": 90_000_000_000n, "1h": 3_600_000_000_000n, "300ms": 300_000_000n, "2us": 2_000n, "-1s": -1_000_000_000n, ".5s": 500_000_000n };
  for (const [text, ns] of Object.entries(cases)) assert.equal(parseGoDuration(text), ns, text);
  for (const bad of ["", "1", "s", "1x", "1.s.", "--1s"]) assert.equal(typeof parseGoDuration(bad), "string", bad);
  const shown = { "0s": 0n, "10ns": 10n, "1.5µs": 1_500n, "100ms": 100_000_000n, "1.5s": 1_500_000_000n, "1m0s": 60_000_000_000n, "4h0m0s": 14_400_000_000_000n, "2m3.5s": 123_500_000_000n };
  for (const [text, ns] of Object.entries(shown)) assert.equal(formatGoDuration(ns), text);
});

test("nanolet run --config with a bad file exits 2 with the field's error, before touching the node", () => {
  const bin = path.join(here, "../../bin/nanolet");
  const file = configFile("containerLogMaxFiles: 1\n");
  const root = path.join(dir, "root");
  const r = spawnSync(process.execPath, [bin, "run", "--config", file, "--root-dir", root], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /nanolet: invalid configuration: containerLogMaxFiles must be greater than 1/);
  assert.equal(fs.existsSync(root), false, "nothing was created");
});

/** `nanolet run` with these arguments and a runtime socket that does not exist; its exit and stderr. */
function runAgent(args, { api = false, timeoutMs = 20_000 } = {}) {
  const bin = path.join(here, "../../bin/nanolet");
  const root = path.join(dir, `root-${n++}`);
  const r = spawnSync(process.execPath, [bin, "run", "--root-dir", root, ...(api ? [] : ["--port", "0"]), "--healthz-port", "0", "--container-runtime-endpoint", `unix://${dir}/no-runtime.sock`, "--pod-manifest-path", path.join(dir, "none"), ...args], { encoding: "utf8", timeout: timeoutMs });
  return { status: r.status, signal: r.signal, stderr: r.stderr };
}

test("every file the configuration names is a bounded regular file: a device, a fifo, a directory or a file without certificates exits 2 at once", () => {
  const fifo = path.join(dir, "config.fifo");
  spawnSync("mkfifo", [fifo]);
  const shadowLike = path.join(dir, "shadow");
  fs.writeFileSync(shadowLike, "root:$y$j9T$secret:19000:0:99999:7:::\n");
  // A node on its own: no webhook (the file's defaults need an apiserver).
  const alone = "authorization:\n  mode: AlwaysAllow\n";
  const cases = [
    [["--config", "/dev/zero"], /--config: cannot read \/dev\/zero: a device, not a regular file/],
    [["--config", fifo], /a fifo, not a regular file/],
    [["--config", dir], /a directory, not a regular file/],
    [["--config", configFile(`${alone}authentication:\n  webhook:\n    enabled: false\n  x509:\n    clientCAFile: /dev/zero\n`)], /clientCAFile \(--client-ca-file\): \/dev\/zero: a device, not a regular file/],
    [["--config", configFile(`${alone}authentication:\n  webhook:\n    enabled: false\n  x509:\n    clientCAFile: ${fifo}\n`)], /a fifo, not a regular file/],
    [["--config", configFile(`${alone}authentication:\n  webhook:\n    enabled: false\n  x509:\n    clientCAFile: ${shadowLike}\n`)], /holds no PEM certificate/],
    [["--config", configFile(`${alone}authentication:\n  webhook:\n    enabled: false\ntlsCertFile: /dev/zero\ntlsPrivateKeyFile: /dev/zero\n`)], /tlsCertFile \(--tls-cert-file\): \/dev\/zero: a device/],
    [["--kubeconfig", "/dev/zero"], /a device, not a regular file/],
  ];
  for (const [args, expected] of cases) {
    // The kubelet API on (its files are read only then); every case stops before it listens.
    const r = runAgent(args, { api: true });
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, expected, args.join(" "));
    assert.doesNotMatch(r.stderr, /secret/, "never what the file holds");
  }
  // A file too large is refused by its size, never read to the end.
  const huge = path.join(dir, "huge.yaml");
  fs.writeFileSync(huge, "");
  fs.truncateSync(huge, 64 * 1024 * 1024);
  const r = runAgent(["--config", huge]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /too large: 67108864 bytes, at most 1048576 are read/);
});

test("every flag is checked before the runtime is waited for; the kubelet's --flag=false is taken", () => {
  let r = runAgent(["--eviction-hard", "memory.available<10..5%"]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /eviction/);
  r = runAgent(["--address", "not an ip"], { api: true });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /address \(--address\) "not an ip" is not a valid IP address/);
  r = runAgent(["--anonymous-auth=maybe"]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /invalid argument "maybe" for "--anonymous-auth" flag: strconv.ParseBool/);
  r = runAgent(["--anonymous-auth=false", "--max-pods=-1"]);
  assert.equal(r.status, 2);
  assert.doesNotMatch(r.stderr, /does not take an argument/);
  assert.match(r.stderr, /maxPods \(--max-pods\) -1/);
});

test("a kubelet API port already in use stops the agent (exit 1), never half-started", async () => {
  const net = await import("node:net");
  const busy = net.createServer();
  await new Promise((resolve) => busy.listen(0, "127.0.0.1", resolve));
  const port = busy.address().port;
  try {
    const bin = path.join(here, "../../bin/nanolet");
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [bin, "run", "--root-dir", path.join(dir, `root-${n++}`), "--port", String(port), "--address", "127.0.0.1", "--healthz-port", "0",
      "--container-runtime-endpoint", `unix://${dir}/no-runtime.sock`, "--pod-manifest-path", path.join(dir, "none")], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /msg="Failed to listen and serve" server="kubelet API" address=127\.0\.0\.1:\d+ error=".*EADDRINUSE/);
  } finally {
    busy.close();
  }
});


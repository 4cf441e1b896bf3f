#!/usr/bin/env node
// The whole test suite, as README and CI run it (`npm test`): builds nanolet, then runs the core's
// as-pect tests, the host's node:test tests, and the end-to-end tests on a private containerd
// (installing its Debian packages when missing). Prints one closing line: `N passed, N failed`.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "./build.mjs";
import { ensurePackages } from "./containerd.mjs";
import { ensureLibraryHosts } from "./library-hosts.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const only = process.argv.slice(2); // e.g. `npm test -- core host`

function run(cmd, args, env = process.env) {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env });
    for (const stream of [child.stdout, child.stderr]) {
      stream.on("data", (chunk) => {
        output += chunk;
        process.stdout.write(chunk);
      });
    }
    child.on("exit", (code) => resolve({ code: code ?? 1, output }));
  });
}

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");

/** as-pect prints `[Tests]: passed / total`. */
function aspectCounts({ code, output }) {
  const m = /\[Tests\]:\s*(\d+)\s*\/\s*(\d+)/.exec(strip(output));
  if (!m) return { passed: 0, failed: 1 };
  const passed = Number(m[1]);
  const failed = Number(m[2]) - passed;
  return { passed, failed: failed > 0 || code === 0 ? failed : 1 };
}

/** node:test's tap reporter ends with `# pass N` and `# fail N`. */
function nodeTestCounts({ code, output }) {
  const text = strip(output);
  const pass = /^# pass (\d+)$/m.exec(text);
  const fail = /^# fail (\d+)$/m.exec(text);
  if (!pass || !fail) return { passed: 0, failed: 1 };
  const failed = Number(fail[1]);
  return { passed: Number(pass[1]), failed: failed > 0 || code === 0 ? failed : 1 };
}

/** `nanolet sim` ends a multi-run with `N runs, M failed`. */
function simCounts({ code, output }) {
  const m = /^(\d+) runs, (\d+) failed/m.exec(strip(output));
  if (!m) return { passed: 0, failed: 1 };
  const failed = Number(m[2]);
  return { passed: Number(m[1]) - failed, failed: failed > 0 || code === 0 ? failed : 1 };
}

/** The fuzz harness ends with `fuzz: N passed, M failed` (corpus replays and targets). */
function fuzzCounts({ code, output }) {
  const m = /^fuzz: (\d+) passed, (\d+) failed/m.exec(strip(output));
  if (!m) return { passed: 0, failed: 1 };
  const failed = Number(m[2]);
  return { passed: Number(m[1]), failed: failed > 0 || code === 0 ? failed : 1 };
}

/** Seconds each fuzz target explores in CI (FUZZ_SECONDS=600 npm test -- fuzz for a longer hunt). */
const FUZZ_SECONDS = process.env.FUZZ_SECONDS ?? "20";

/** Swarm size in CI: at least 200 random scenarios (`SIM_SEEDS=1..1000 npm test -- sim` for more). */
const SWARM_SEEDS = process.env.SIM_SEEDS ?? "1..250";

const suites = [
  {
    name: "sim",
    run: async () => {
      const corpus = fs.readdirSync(path.join(root, "tests/sim")).filter((f) => f.endsWith(".yaml")).map((f) => `tests/sim/${f}`);
      const a = simCounts(await run(process.execPath, ["bin/nanolet", "sim", "--quiet", "--seeds", "1..10", ...corpus]));
      const b = simCounts(await run(process.execPath, ["bin/nanolet", "sim", "--quiet", "--seeds", SWARM_SEEDS]));
      return { passed: a.passed + b.passed, failed: a.failed + b.failed };
    },
  },
  { name: "core", run: () => run(process.execPath, ["node_modules/.bin/asp", "--summary"]).then(aspectCounts) },
  {
    name: "host",
    run: async () => {
      ensurePackages(); // openssl, for the cluster client's TLS test
      return nodeTestCounts(await run(process.execPath, ["--test", "--test-reporter=tap", "tests/host/"]));
    },
  },
  {
    // The pure interfaces in three hosts: Node.js (jco), headless Chromium (jco), wabt (core module).
    name: "library",
    run: async () => {
      ensureLibraryHosts();
      return nodeTestCounts(await run(process.execPath, ["--test", "--test-reporter=tap", "tests/library/"]));
    },
  },
  {
    // Every input surface, fuzzed: the corpus of past failures first, then each target for its budget.
    name: "fuzz",
    run: async () => fuzzCounts(await run(process.execPath, ["tests/fuzz/run.mjs", "--seconds", FUZZ_SECONDS])),
  },
  {
    // linux/arm64: the component and the host on an arm64 Node.js (under qemu-user here; natively
    // on an arm64 machine). Emulation is about 11 times slower, so this is a subset: the library
    // suite whole, the offline and certificate host tests, simulator runs of the core, and the
    // arm64 artifact (with its own Node.js) answering `version` and running the simulator.
    name: "arm64",
    run: async () => {
      const { ensureArm64, runArm64 } = await import("./arm64.mjs");
      const { buildArtifact } = await import("./artifact.mjs");
      const arm64 = ensureArm64();
      const tally = { passed: 0, failed: 0 };
      const add = (c) => ((tally.passed += c.passed), (tally.failed += c.failed));
      for (const file of ["tests/library/node.test.mjs", "tests/host/offline.test.mjs", "tests/host/certificates.test.mjs"]) {
        // In-process (not `node --test`, whose child processes an emulated Node.js cannot start).
        add(nodeTestCounts(await runArm64(arm64, ["--test-reporter=tap", file], { cwd: root })));
      }
      add(simCounts(await runArm64(arm64, ["bin/nanolet", "sim", "--quiet", "--seeds", "1..5"], { cwd: root })));
      const os = await import("node:os");
      const artifact = await buildArtifact({ outDir: fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-arm64-")), arch: "arm64", node: arm64.node });
      const bundled = [path.join(artifact, "lib/nanolet.mjs")];
      const arm64Artifact = { ...arm64, node: path.join(artifact, "bin/node") };
      const version = await runArm64(arm64Artifact, [...bundled, "version"], { cwd: "/" });
      const versionOk = version.code === 0 && /node v\d+\S* linux\/arm64\)/.test(version.output);
      process.stdout.write(`${versionOk ? "ok" : "not ok"} - the arm64 artifact says it runs on linux/arm64\n`);
      add(versionOk ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 });
      add(simCounts(await runArm64(arm64Artifact, [...bundled, "sim", "--quiet", "--seeds", "1..2"], { cwd: "/" })));
      fs.rmSync(path.dirname(artifact), { recursive: true, force: true });
      return tally;
    },
  },
  {
    name: "e2e",
    run: async () => {
      ensurePackages();
      return nodeTestCounts(await run(process.execPath, ["--test", "--test-reporter=tap", "--test-concurrency=1", "tests/e2e/"]));
    },
  },
  {
    // The pod lifecycle files again on containerd 2.x (Debian's newer package, unpacked by
    // build/containerd2.mjs): the CRI event stream's runtime. The e2e suite above ran them on 1.6.
    // The files whose calls differ by runtime (lifecycle, exec for probes and hooks, subPath bind
    // mounts, hostile files); env and init containers are the core's logic on the same calls, and
    // run on 1.6.
    name: "containerd2",
    run: async () => {
      ensurePackages();
      const files = ["nanolet", "pod-runtime", "probes", "hooks", "hostile", "subpath", "hardware"].map((f) => `tests/e2e/${f}.e2e.test.mjs`);
      return nodeTestCounts(await run(process.execPath, ["--test", "--test-reporter=tap", "--test-concurrency=1", ...files], { ...process.env, NANOLET_E2E_CONTAINERD: "2" }));
    },
  },
];

/**
 * The real control plane (kube-apiserver, etcd, kubectl, the upstream kubelet) for the suites that
 * need it, found as envtest finds it: KUBEBUILDER_ASSETS, else ../shared/k8s beside the checkout
 * (unpacked once into ~/.cache/nanolet/k8s-assets). Without either those files skip, each saying why.
 */
function findControlPlane() {
  if (process.env.KUBEBUILDER_ASSETS) return;
  const shared = path.join(root, "../shared/k8s");
  if (!fs.existsSync(path.join(shared, "SHA256SUMS"))) {
    // The files that need it are those that ask control-plane.mjs whether to skip.
    const e2e = path.join(root, "tests/e2e");
    const needing = fs.readdirSync(e2e).filter((f) => f.endsWith(".e2e.test.mjs") && fs.readFileSync(path.join(e2e, f), "utf8").includes("controlPlaneSkipReason()"));
    process.stdout.write(`note: no KUBEBUILDER_ASSETS and no ${shared}: the e2e files that need the real kube-apiserver (${needing.map((f) => f.replace(".e2e.test.mjs", "")).join(", ")}) skip those tests, each saying why\n`);
    return;
  }
  process.env.KUBEBUILDER_ASSETS = execFileSync(process.execPath, [path.join(root, "build/k8s-assets.mjs"), shared], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  process.stdout.write(`control plane: KUBEBUILDER_ASSETS=${process.env.KUBEBUILDER_ASSETS} (from ${shared})\n`);
}

findControlPlane();
await build();
let passed = 0;
let failed = 0;
for (const suite of suites) {
  if (only.length > 0 && !only.includes(suite.name)) continue;
  process.stdout.write(`\n=== ${suite.name} tests ===\n`);
  const startedAt = Date.now();
  const counts = await suite.run();
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  process.stdout.write(`=== ${suite.name}: ${counts.passed} passed, ${counts.failed} failed (${seconds} s) ===\n`);
  passed += counts.passed;
  failed += counts.failed;
}
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 ? 0 : 1;

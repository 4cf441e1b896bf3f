// The artifact to flash (build/artifact.mjs) and `nanolet install` / `uninstall`: the artifact runs
// from another directory with no node_modules tree (the component loads, the CRI proto loads), and
// installs into a root directory of the test's own, idempotently, keeping an operator's files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildArtifact, packageVersion } from "../../build/artifact.mjs";
import { resolveConfig } from "../../dist/config/kubelet-config.js";
import { NANOLET_VERSION } from "../../dist/common/version.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const work = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-install-"));
let artifact;

/** Runs the copied artifact's launcher from `/`, as a device would. */
function nanolet(args, options = {}) {
  return spawnSync(path.join(artifact, "bin/nanolet"), args, { cwd: "/", encoding: "utf8", ...options });
}

function allFiles(dir) {
  return fs.readdirSync(dir, { recursive: true }).map(String);
}

test("the artifact: one directory without node_modules that runs from anywhere", async () => {
  const built = await buildArtifact({ outDir: path.join(work, "out") });
  // Moved elsewhere, as flashing does: nothing may point back into the repository.
  artifact = path.join(work, "flashed", path.basename(built));
  fs.mkdirSync(path.dirname(artifact), { recursive: true });
  fs.renameSync(built, artifact);
  assert.ok(!allFiles(artifact).some((f) => f.includes("node_modules")), "no node_modules tree");
  assert.deepEqual(fs.readdirSync(artifact).sort(), ["VERSION", "bin", "lib"]);
  assert.equal(NANOLET_VERSION, packageVersion(), "host/common/version.ts follows package.json");
  const version = nanolet(["version"]);
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, new RegExp(`^nanolet ${NANOLET_VERSION.replace(/\./g, "\\.")} \\(kubelet v1\\.36\\.\\d+\\+nanolet; node v\\d+.*\\)\\n$`));
  assert.ok(!version.stdout.includes("source tree"));
  // The component loads from the artifact: the simulator runs the core.
  const sim = nanolet(["sim", "--quiet", "--seeds", "1..2"]);
  assert.match(sim.stdout, /^2 runs, 0 failed/m, sim.stderr);
});

test("the artifact's agent starts (config, CRI proto, gRPC client) and says the runtime is not there", async () => {
  const root = path.join(work, "agent-root");
  const child = spawn(path.join(artifact, "bin/nanolet"), [
    "run", "--root-dir", root, "--pod-manifest-path", path.join(work, "manifests"), "--pod-logs-dir", path.join(work, "logs"),
    "--container-runtime-endpoint", `unix://${path.join(work, "no-such.sock")}`, "--port", "0", "--healthz-port", "0",
  ], { cwd: "/", stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  try {
    const deadline = Date.now() + 60_000;
    while (!stderr.includes("nanolet started")) {
      if (child.exitCode !== null) assert.fail(`exited ${child.exitCode}:\n${stderr}`);
      if (Date.now() > deadline) assert.fail(`never started:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(stderr, /Container runtime not reachable/);
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
});

test("install into a root: the service, the config with every default, directories; again: nothing changes", () => {
  const root = path.join(work, "root");
  const first = nanolet(["install", "--root", root]);
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /not enabled: .* is not this machine's root/);
  const unit = fs.readFileSync(path.join(root, "etc/systemd/system/nanolet.service"), "utf8");
  assert.match(unit, /^ExecStart=\/opt\/nanolet\/bin\/nanolet run --config \/etc\/nanolet\/config\.yaml \$NANOLET_ARGS$/m);
  assert.match(unit, /^EnvironmentFile=-\/etc\/default\/nanolet$/m);
  assert.match(unit, /^KillMode=process$/m);
  assert.match(unit, /^WantedBy=multi-user\.target$/m);
  assert.equal(fs.readlinkSync(path.join(root, "usr/local/bin/nanolet")), "/opt/nanolet/bin/nanolet");
  assert.ok(fs.existsSync(path.join(root, "opt/nanolet/lib/nanolet.mjs")));
  for (const dir of ["var/lib/nanolet", "var/log/pods", "etc/kubernetes/manifests"]) assert.ok(fs.statSync(path.join(root, dir)).isDirectory(), dir);
  assert.equal(fs.statSync(path.join(root, "var/lib/nanolet")).mode & 0o777, 0o700);
  // The config file loads as nanolet loads it, without a warning, and says the defaults.
  const configFile = path.join(root, "etc/nanolet/config.yaml");
  assert.equal(fs.statSync(configFile).mode & 0o777, 0o600);
  const { config, warnings } = resolveConfig({ file: configFile, flags: {}, hasKubeconfig: false });
  assert.deepEqual(warnings, []);
  assert.equal(config.maxPods, 110);
  assert.equal(config.authorization.mode, "AlwaysAllow", "a node on its own needs no apiserver to authorize");
  assert.deepEqual(config.evictionHard, resolveConfig({ flags: {}, hasKubeconfig: false }).config.evictionHard);
  assert.match(fs.readFileSync(path.join(root, "etc/default/nanolet"), "utf8"), /^NANOLET_ARGS=""$/m);

  // The operator's edits stay; a second install changes nothing else.
  fs.appendFileSync(configFile, "maxPods: 20\n");
  const mtimes = () => Object.fromEntries(["etc/systemd/system/nanolet.service", "opt/nanolet/lib/nanolet.mjs", "etc/nanolet/config.yaml"].map((f) => [f, fs.statSync(path.join(root, f)).mtimeMs]));
  const before = mtimes();
  const again = nanolet(["install", "--root", root, "--no-enable"]);
  assert.equal(again.status, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /^(wrote|installed|linked|made) /m, again.stdout);
  assert.match(again.stdout, /kept +.*config\.yaml \(changed by you\)/);
  // The flags file nobody edited is the installer's own, not the operator's.
  assert.match(again.stdout, /unchanged +.*etc\/default\/nanolet$/m);
  assert.deepEqual(mtimes(), before);
  assert.match(fs.readFileSync(configFile, "utf8"), /maxPods: 20\n$/);
});

test("uninstall takes the service out and keeps config and state; --purge takes those too", () => {
  const root = path.join(work, "root");
  fs.writeFileSync(path.join(root, "var/lib/nanolet/pods.json"), "{}");
  const out = nanolet(["uninstall", "--root", root]);
  assert.equal(out.status, 0, out.stderr);
  for (const gone of ["etc/systemd/system/nanolet.service", "usr/local/bin/nanolet", "opt/nanolet"]) assert.equal(fs.existsSync(path.join(root, gone)), false, gone);
  assert.ok(fs.existsSync(path.join(root, "etc/nanolet/config.yaml")));
  assert.ok(fs.existsSync(path.join(root, "var/lib/nanolet/pods.json")));
  const purge = nanolet(["uninstall", "--root", root, "--purge"]);
  assert.equal(purge.status, 0, purge.stderr);
  for (const gone of ["etc/nanolet", "etc/default/nanolet", "var/lib/nanolet"]) assert.equal(fs.existsSync(path.join(root, gone)), false, gone);
});

test("install from the source tree says to build the artifact; version says where it runs", () => {
  const bin = path.join(here, "../../bin/nanolet");
  const r = spawnSync(process.execPath, [bin, "install", "--root", path.join(work, "other")], { encoding: "utf8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /npm run artifact/);
  assert.match(spawnSync(process.execPath, [bin, "version"], { encoding: "utf8" }).stdout, /from the source tree/);
});

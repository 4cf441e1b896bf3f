// `nanolet install` and `nanolet uninstall`: put the artifact this command runs from in place as a
// systemd service, as an operator flashing a device wants it, and take it out again.
//
//   /opt/nanolet/                    the artifact (bin/, lib/)
//   /usr/local/bin/nanolet           -> /opt/nanolet/bin/nanolet
//   /etc/systemd/system/nanolet.service
//   /etc/nanolet/config.yaml         KubeletConfiguration with the defaults (kept if present)
//   /etc/default/nanolet             NANOLET_ARGS for flags (kept if present)
//   /var/lib/nanolet, /var/log/pods, /etc/kubernetes/manifests
//
// Everything is written under `root` ("/" on a device; a directory of a test's own in tests).
// Installing again changes only what differs; an operator's config and flags are never replaced.
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { FIELDS } from "../config/kubelet-config.js";

export const UNIT_NAME = "nanolet.service";

/** Where things go, relative to the root. */
export const LAYOUT = {
  artifact: "opt/nanolet",
  link: "usr/local/bin/nanolet",
  unit: `etc/systemd/system/${UNIT_NAME}`,
  config: "etc/nanolet/config.yaml",
  environment: "etc/default/nanolet",
  state: "var/lib/nanolet",
  logs: "var/log/pods",
  manifests: "etc/kubernetes/manifests",
};

export const UNIT_FILE = `[Unit]
Description=nanolet: a Kubernetes node agent for small devices
Documentation=https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/
Wants=network-online.target containerd.service
After=network-online.target containerd.service

[Service]
EnvironmentFile=-/etc/default/nanolet
ExecStart=/opt/nanolet/bin/nanolet run --config /etc/nanolet/config.yaml $NANOLET_ARGS
Restart=always
RestartSec=10
# Like the kubelet's unit: stopping the agent leaves the pods running (a restart adopts them).
KillMode=process
Delegate=yes
OOMScoreAdjust=-999
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target
`;

export const ENVIRONMENT_FILE = `# Flags for nanolet (systemd: EnvironmentFile of ${UNIT_NAME}). A flag given here wins over
# /etc/nanolet/config.yaml. To join a cluster, for example:
#   NANOLET_ARGS="--kubeconfig /etc/nanolet/kubelet.conf --hostname-override edge-1"
NANOLET_ARGS=""
`;

/** The configuration file an install writes: every field nanolet acts on, at its default. */
export function defaultConfigFile(): string {
  const lines = [
    "# nanolet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1): every field nanolet acts on,",
    "# at the upstream kubelet's default. Flags in /etc/default/nanolet win over this file.",
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    "# A node on its own (static pods only) has no apiserver to ask: the kubelet API accepts",
    "# client certificates of authentication.x509.clientCAFile alone. When the node joins a",
    "# cluster, set authentication.webhook.enabled: true and authorization.mode: Webhook.",
    "authentication:",
    "  anonymous:",
    "    enabled: false",
    "  webhook:",
    "    enabled: false",
    "authorization:",
    "  mode: AlwaysAllow",
  ];
  for (const field of FIELDS) {
    if (field.path.startsWith("authentication.") || field.path.startsWith("authorization.") || field.default === undefined) continue;
    const parts = field.path.split(".");
    const value = field.default;
    const text = (v: unknown) => (typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v));
    if (parts.length === 1 && value !== null && typeof value === "object" && !Array.isArray(value)) {
      const entries = Object.entries(value as Record<string, string>);
      lines.push(entries.length === 0 ? `${parts[0]}: {}` : `${parts[0]}:`);
      for (const [k, v] of entries) lines.push(`  ${k}: ${text(v)}`);
    } else if (parts.length === 1) {
      lines.push(`${parts[0]}: ${text(value)}`);
    } else {
      lines.push(`${parts[0]}:`, `  ${parts[1]}: ${text(value)}`);
    }
  }
  return lines.join("\n") + "\n";
}

export interface InstallOptions {
  /** The artifact's directory (bin/, lib/) to copy. */
  artifactDir: string;
  /** Where `/` is: "/" on a device. */
  root: string;
  /** systemctl daemon-reload and enable (only when root is "/" and systemd runs). */
  enable: boolean;
  /** Also start (or restart) the service. */
  now?: boolean;
  log: (line: string) => void;
}

/** A digest of a directory tree: names, modes, link targets and contents. */
function treeDigest(dir: string): string {
  const hash = crypto.createHash("sha256");
  const walk = (at: string, rel: string) => {
    for (const name of fs.readdirSync(at).sort()) {
      const full = path.join(at, name);
      const st = fs.lstatSync(full);
      hash.update(`${rel}/${name}\0${st.mode}\0`);
      if (st.isSymbolicLink()) hash.update(fs.readlinkSync(full));
      else if (st.isDirectory()) walk(full, `${rel}/${name}`);
      else hash.update(fs.readFileSync(full));
    }
  };
  if (fs.existsSync(dir)) walk(dir, "");
  return hash.digest("hex");
}

/** Writes `content` to `file` unless it already says that; `keep`: never replace an existing file. */
function writeFile(file: string, content: string, mode: number, keep: boolean, log: (line: string) => void): void {
  if (fs.existsSync(file)) {
    // Compared first: a file this installer wrote and nobody changed is not "yours".
    if (fs.readFileSync(file, "utf8") === content) return log(`unchanged ${file}`);
    if (keep) return log(`kept      ${file} (changed by you)`);
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.nanolet-new`;
  fs.writeFileSync(temporary, content, { mode });
  fs.renameSync(temporary, file);
  log(`wrote     ${file}`);
}

function systemd(root: string): boolean {
  return path.resolve(root) === "/" && fs.existsSync("/run/systemd/system");
}

function systemctl(args: string[], log: (line: string) => void): void {
  const r = spawnSync("systemctl", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`systemctl ${args.join(" ")}: ${(r.stderr || r.error?.message || "").trim()}`);
  log(`systemctl ${args.join(" ")}`);
}

export function install(o: InstallOptions): void {
  const at = (rel: string) => path.join(o.root, rel);
  if (!fs.existsSync(path.join(o.artifactDir, "lib/nanolet.mjs"))) throw new Error(`${o.artifactDir} is not a nanolet artifact (no lib/nanolet.mjs)`);
  // The artifact: copied whole to a new directory, then swapped in, so a service restarting
  // meanwhile finds the old one or the new one.
  const target = at(LAYOUT.artifact);
  if (path.resolve(o.artifactDir) === path.resolve(target)) {
    o.log(`unchanged ${target} (running from it)`);
  } else if (treeDigest(o.artifactDir) === treeDigest(target)) {
    o.log(`unchanged ${target}`);
  } else {
    const fresh = `${target}.new`;
    fs.rmSync(fresh, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.cpSync(o.artifactDir, fresh, { recursive: true, verbatimSymlinks: true });
    const old = `${target}.old`;
    fs.rmSync(old, { recursive: true, force: true });
    if (fs.existsSync(target)) fs.renameSync(target, old);
    fs.renameSync(fresh, target);
    fs.rmSync(old, { recursive: true, force: true });
    o.log(`installed ${target}`);
  }
  // The command on the PATH: a link whose target is the device's path, not the root's.
  const link = at(LAYOUT.link);
  const linkTarget = `/${LAYOUT.artifact}/bin/nanolet`;
  let current: string | undefined;
  try {
    current = fs.readlinkSync(link);
  } catch {
    current = undefined;
  }
  if (current === linkTarget) o.log(`unchanged ${link}`);
  else {
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.rmSync(link, { force: true });
    fs.symlinkSync(linkTarget, link);
    o.log(`linked    ${link} -> ${linkTarget}`);
  }
  writeFile(at(LAYOUT.unit), UNIT_FILE, 0o644, false, o.log);
  writeFile(at(LAYOUT.config), defaultConfigFile(), 0o600, true, o.log);
  writeFile(at(LAYOUT.environment), ENVIRONMENT_FILE, 0o644, true, o.log);
  for (const [dir, mode] of [[LAYOUT.state, 0o700], [LAYOUT.logs, 0o755], [LAYOUT.manifests, 0o755]] as const) {
    if (!fs.existsSync(at(dir))) {
      fs.mkdirSync(at(dir), { recursive: true, mode });
      o.log(`made      ${at(dir)}`);
    }
  }
  if (o.enable && systemd(o.root)) {
    systemctl(["daemon-reload"], o.log);
    systemctl(["enable", UNIT_NAME], o.log);
    if (o.now) systemctl(["restart", UNIT_NAME], o.log);
  } else if (o.enable) {
    o.log(`not enabled: ${path.resolve(o.root) === "/" ? "systemd is not running here" : `${o.root} is not this machine's root`}`);
  }
}

export interface UninstallOptions {
  root: string;
  /** Also remove the configuration, the flags file, the state and the checkpoints. */
  purge: boolean;
  log: (line: string) => void;
}

export function uninstall(o: UninstallOptions): void {
  const at = (rel: string) => path.join(o.root, rel);
  if (systemd(o.root) && fs.existsSync(at(LAYOUT.unit))) {
    // Stopping the agent leaves its pods running (KillMode=process), as stopping a kubelet does.
    spawnSync("systemctl", ["disable", "--now", UNIT_NAME], { stdio: "ignore" });
    o.log(`systemctl disable --now ${UNIT_NAME}`);
  }
  const remove = (rel: string) => {
    const file = at(rel);
    if (!fs.existsSync(file) && !isLink(file)) return;
    fs.rmSync(file, { recursive: true, force: true });
    o.log(`removed   ${file}`);
  };
  remove(LAYOUT.unit);
  remove(LAYOUT.link);
  remove(LAYOUT.artifact);
  if (systemd(o.root)) spawnSync("systemctl", ["daemon-reload"], { stdio: "ignore" });
  if (o.purge) {
    remove(path.dirname(LAYOUT.config));
    remove(LAYOUT.environment);
    remove(LAYOUT.state);
  } else {
    o.log(`kept      ${at(path.dirname(LAYOUT.config))}, ${at(LAYOUT.environment)}, ${at(LAYOUT.state)} (--purge removes them)`);
  }
}

function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

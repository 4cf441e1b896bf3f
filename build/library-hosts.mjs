// The hosts the library tests run the core in besides Node.js: wabt's spectest-interp (the core
// module alone) and Chromium (the component in a page). Installed from Debian when missing.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { have } from "./containerd.mjs";

export function ensureLibraryHosts() {
  if (have("spectest-interp") && have("wast2json") && fs.existsSync("/usr/bin/chromium")) return;
  if (process.getuid?.() !== 0) throw new Error("wabt or chromium missing, and not root to install them");
  process.stderr.write("library hosts: installing wabt chromium\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-q"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-q", "wabt", "chromium"], { stdio: "inherit", env });
}

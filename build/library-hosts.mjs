// The hosts the library tests run the core in besides Node.js: wabt's spectest-interp (the core
// module alone) and Chromium (the component in a page). Installed from Debian when missing.
import { aptInstall } from "./apt.mjs";
import fs from "node:fs";
import { have } from "./containerd.mjs";

export function ensureLibraryHosts() {
  if (have("spectest-interp") && have("wast2json") && fs.existsSync("/usr/bin/chromium")) return;
  aptInstall(["wabt", "chromium"], "the library tests' other WebAssembly hosts (wabt's interpreter, headless Chromium)");
}

// `nanolet install` and `uninstall`: the artifact in place as a systemd service, and out again.
import path from "node:path";
import { parseArgs } from "node:util";
import { ARTIFACT_DIR } from "../common/asset-paths.js";
import { install, uninstall } from "../install/installer.js";
import { USAGE, wantsHelp } from "./usage.js";

export function installCommand(argv: string[]): number {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({ args: argv, options: { root: { type: "string", default: "/" }, "no-enable": { type: "boolean", default: false }, now: { type: "boolean", default: false } }, strict: true });
  if (!ARTIFACT_DIR) throw new Error("install copies the artifact it runs from: build one with `npm run artifact` and run its bin/nanolet install");
  if (path.resolve(values.root!) === "/" && process.getuid?.() !== 0) throw new Error("install writes /opt, /etc and /usr/local/bin: run it as root");
  install({ artifactDir: ARTIFACT_DIR, root: values.root!, enable: !values["no-enable"], now: values.now, log: (line) => process.stdout.write(line + "\n") });
  return 0;
}

export function uninstallCommand(argv: string[]): number {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({ args: argv, options: { root: { type: "string", default: "/" }, purge: { type: "boolean", default: false } }, strict: true });
  if (path.resolve(values.root!) === "/" && process.getuid?.() !== 0) throw new Error("uninstall removes files under /opt, /etc and /usr/local/bin: run it as root");
  uninstall({ root: values.root!, purge: values.purge!, log: (line) => process.stdout.write(line + "\n") });
  return 0;
}


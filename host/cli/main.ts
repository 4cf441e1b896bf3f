// The nanolet command line: one file per command beside this one. Flags follow the kubelet's
// names where the kubelet has one.
import { USAGE } from "./usage.js";
import { runCommand } from "./run.js";
import { podsCommand } from "./pods.js";
import { versionText } from "./version.js";
import { installCommand, uninstallCommand } from "./install.js";
import { StartupError } from "./run-settings.js";
import { simCommand } from "./sim.js";

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === "version" || command === "--version") {
      process.stdout.write(versionText());
      return 0;
    }
    if (command === "install") return installCommand(rest);
    if (command === "uninstall") return uninstallCommand(rest);
    if (command === "run") return await runCommand(rest);
    if (command === "pods") return await podsCommand(rest);
    if (command === "sim") return await simCommand(rest);
    if (command === undefined || command === "help" || command === "--help" || command === "-h") {
      process.stdout.write(USAGE);
      return 0;
    }
    // The word is shown cut and escaped: it is input, and may be anything.
    process.stderr.write(`nanolet: unknown command ${JSON.stringify(command.slice(0, 64))}\nRun 'nanolet --help' for the commands and their flags.\n`);
    return 2;
  } catch (error) {
    process.stderr.write(`nanolet: ${(error as Error).message}\n`);
    return error instanceof StartupError ? 1 : 2;
  }
}

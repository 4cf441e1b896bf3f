// `nanolet pods`: what the running agent runs, asked over its control socket, or the last
// state it wrote when it is not running.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { formatPodTable, type PodTableSnapshot } from "../agent/pod-table.js";
import { fetchPods } from "../server/control-socket.js";
import { readBoundedText } from "../files/bounded-file.js";
import { USAGE, wantsHelp } from "./usage.js";

export async function podsCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { values } = parseArgs({
    args: argv,
    options: { "root-dir": { type: "string", default: "/var/lib/nanolet" }, o: { type: "string", short: "o" } },
    strict: true,
  });
  const rootDir = path.resolve(values["root-dir"]!);
  let snapshot: PodTableSnapshot;
  let stale = false;
  try {
    snapshot = (await fetchPods(path.join(rootDir, "nanolet.sock"))) as PodTableSnapshot;
  } catch {
    const file = path.join(rootDir, "pods.json");
    if (!fs.existsSync(file)) {
      process.stderr.write(`nanolet pods: no agent is answering at ${rootDir}/nanolet.sock and there is no ${file}\n`);
      return 1;
    }
    snapshot = JSON.parse(readBoundedText(file, 16 * 1024 * 1024));
    stale = true;
  }
  if (values.o === "json") {
    process.stdout.write(JSON.stringify(snapshot, null, 2) + "\n");
  } else {
    if (stale) process.stdout.write(`(agent not running; last state written ${new Date(snapshot.writtenAtMs).toISOString()})\n`);
    process.stdout.write(formatPodTable(snapshot));
  }
  return 0;
}


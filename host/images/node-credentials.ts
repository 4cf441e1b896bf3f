// The node's own registry credentials, where the kubelet looks for them: a docker `config.json` in
// the agent's root directory, the working directory, $HOME/.docker and /.docker, else an old
// `.dockercfg` in the root directory, the working directory, $HOME and /. The first file found
// and read wins. Each is read as every file is (regular, bounded); one that cannot be read or
// parsed is logged by name and reason, never by content, and the search goes on.
import os from "node:os";
import path from "node:path";
import { FILE_LIMITS, FileReadError, readBoundedText } from "../files/bounded-file.js";
import type { Logger } from "../common/log.js";

/** A docker config's `auths`: registry key -> { auth, username, password, ... }. */
export type DockerAuths = Record<string, Record<string, any>>;

/** The places, in upstream's order: config.json ones first, then .dockercfg ones. */
export function nodeCredentialFiles(rootDir: string, cwd = process.cwd(), home = os.homedir()): { file: string; format: "json" | "dockercfg" }[] {
  const json = [rootDir, cwd, path.join(home, ".docker"), "/.docker"].map((dir) => ({ file: path.join(dir, "config.json"), format: "json" as const }));
  const cfg = [rootDir, cwd, home, "/"].map((dir) => ({ file: path.join(dir, ".dockercfg"), format: "dockercfg" as const }));
  return [...json, ...cfg];
}

function isAuths(value: unknown): value is DockerAuths {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "object" && v !== null && !Array.isArray(v));
}

/** The node's credentials (`{}` when no file has any); `log` hears of files that could not be used. */
export function readNodeCredentials(rootDir: string, log?: Logger, places = nodeCredentialFiles(rootDir)): DockerAuths {
  for (const { file, format } of places) {
    let text: string;
    try {
      text = readBoundedText(file, FILE_LIMITS.smallBytes);
    } catch (error) {
      if (error instanceof FileReadError && error.code === "ENOENT") continue;
      log?.log("warn", "Node registry credentials file skipped", { file, error: (error as Error).message });
      continue;
    }
    try {
      const parsed = JSON.parse(text);
      const auths = format === "json" ? parsed?.auths : parsed;
      if (!isAuths(auths)) throw new Error(format === "json" ? 'no "auths" object of registry entries' : "not an object of registry entries");
      return auths;
    } catch (error) {
      // The message of JSON.parse may quote the file: say only where it failed.
      const reason = error instanceof SyntaxError ? "not valid JSON" : (error as Error).message;
      log?.log("warn", "Node registry credentials file skipped", { file, error: reason });
    }
  }
  return {};
}

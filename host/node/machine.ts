// What the node is, read from the machine: CPUs, memory, the root filesystem's size, the OS,
// kernel, architecture, identifiers and addresses. The kubelet's cadvisor-based MachineInfo,
// reduced to what Node objects carry.
import fs from "node:fs";
import os from "node:os";

export interface MachineInfo {
  cpuCount: number;
  memoryBytes: number;
  /** Size of the filesystem holding the agent's root directory (pods' writable layers, logs). */
  ephemeralStorageBytes: number;
  osImage: string;
  kernelVersion: string;
  /** GOARCH spelling, as Kubernetes labels use it. */
  architecture: string;
  machineId: string;
  bootId: string;
  systemUuid: string;
  hostname: string;
  internalIp: string;
}

const ARCHES: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64" };

function readTrimmed(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}

function osImage(): string {
  const release = readTrimmed("/etc/os-release");
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release);
  return m ? m[1] : "Linux";
}

/** The first non-internal IPv4 address: the node's InternalIP. */
export function primaryIpv4(): string {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return "127.0.0.1";
}

export function readMachineInfo(rootDir: string): MachineInfo {
  let ephemeralStorageBytes = 0;
  try {
    const s = fs.statfsSync(rootDir);
    ephemeralStorageBytes = s.blocks * s.bsize;
  } catch {
    ephemeralStorageBytes = 0;
  }
  return {
    cpuCount: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    ephemeralStorageBytes,
    osImage: osImage(),
    kernelVersion: os.release(),
    architecture: ARCHES[process.arch] ?? process.arch,
    machineId: readTrimmed("/etc/machine-id"),
    bootId: readTrimmed("/proc/sys/kernel/random/boot_id"),
    systemUuid: readTrimmed("/sys/class/dmi/id/product_uuid"),
    hostname: os.hostname(),
    internalIp: primaryIpv4(),
  };
}

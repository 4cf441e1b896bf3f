// What the node is, read from the machine: CPUs, memory, the root filesystem's size, the OS,
// kernel, architecture, identifiers and addresses. The kubelet's cadvisor-based MachineInfo,
// reduced to what Node objects carry.
import fs from "node:fs";
import os from "node:os";
import { readKernelText } from "../files/bounded-file.js";

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
  /** A dual-stack node's two addresses (--node-ip with both), the first being internalIp. */
  internalIps?: string[];
  /** Huge page pools, as the Node lists them: `hugepages-2Mi` to the bytes reserved (often 0). */
  hugepages: { resource: string; bytes: number }[];
}

const ARCHES: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64" };

/** Machine facts are a line or a few: more than this is not the file it should be. */
const FACT_FILE_BYTES = 64 * 1024;

function readTrimmed(file: string): string {
  try {
    return readKernelText(file, FACT_FILE_BYTES).trim();
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

/**
 * The machine's UUID where cadvisor looks for it: DMI on PCs and most VMs, the device tree on ARM
 * and POWER boards (their firmware's system-id or the hypervisor's vm,uuid). Empty when none has it.
 */
/**
 * The firmware's system UUID (DMI, or the device tree of a board without DMI); without either, the
 * machine ID, which is what the kubelet reports on such a machine (seen beside it: most ARM boards
 * and containers have no DMI).
 */
function systemUuid(): string {
  for (const file of ["/sys/class/dmi/id/product_uuid", "/proc/device-tree/system-id", "/proc/device-tree/vm,uuid"]) {
    const text = readTrimmed(file).replace(/\0+$/, "");
    if (text) return text;
  }
  return readTrimmed("/etc/machine-id");
}

/** A huge page size in KiB as a quantity suffix: 2048 -> 2Mi, 1048576 -> 1Gi. */
function pageSizeName(kib: number): string {
  if (kib % (1024 * 1024) === 0) return `${kib / (1024 * 1024)}Gi`;
  if (kib % 1024 === 0) return `${kib / 1024}Mi`;
  return `${kib}Ki`;
}

/** Each pool under /sys/kernel/mm/hugepages (`hugepages-2048kB`), with the bytes it holds. */
export function hugepagePools(dir = "/sys/kernel/mm/hugepages"): { resource: string; bytes: number }[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const pools: { resource: string; bytes: number; kib: number }[] = [];
  for (const name of names) {
    const m = /^hugepages-(\d+)kB$/.exec(name);
    if (!m) continue;
    const kib = Number(m[1]);
    const count = Number(readTrimmed(`${dir}/${name}/nr_hugepages`) || "0");
    pools.push({ resource: `hugepages-${pageSizeName(kib)}`, bytes: (Number.isFinite(count) ? count : 0) * kib * 1024, kib });
  }
  return pools.sort((a, b) => a.kib - b.kib).map(({ resource, bytes }) => ({ resource, bytes }));
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
    systemUuid: systemUuid(),
    hostname: os.hostname(),
    internalIp: primaryIpv4(),
    hugepages: hugepagePools(),
  };
}

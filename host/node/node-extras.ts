// The node's network, swap and I/O pressure as the kubelet's /stats/summary gives them: the
// interfaces of the node's network namespace from sysfs (as cAdvisor counts them: loopback and
// container veths left out; the top-level figures are eth0's, else the first's), swap from
// /proc/meminfo, and I/O pressure (PSI) from /proc/pressure/io.
import fs from "node:fs";
import path from "node:path";
import { readText } from "./stats.js";

/** Interfaces cAdvisor leaves out of a node's network stats, by name prefix. */
const IGNORED_INTERFACES = ["lo", "veth", "docker", "nerdctl"];
/** The interface the kubelet reports at the top level when there is one. */
const DEFAULT_INTERFACE = "eth0";
/** Interfaces read at most (a node with thousands of them is counted by its first ones). */
const MAX_INTERFACES = 256;

interface InterfaceStats {
  name: string;
  rxBytes: number;
  rxErrors: number;
  txBytes: number;
  txErrors: number;
}

function counter(file: string): number {
  const value = Number((readText(file) ?? "").trim());
  return Number.isFinite(value) ? value : 0;
}

/** `network`: every counted interface, and the default one's figures at the top level. */
export function nodeNetwork(time: string, sysRoot = "/sys"): Record<string, unknown> | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(sysRoot, "class/net")).sort().slice(0, MAX_INTERFACES);
  } catch {
    return undefined;
  }
  const interfaces: InterfaceStats[] = names
    .filter((name) => !IGNORED_INTERFACES.some((prefix) => name.startsWith(prefix)))
    .map((name) => {
      const dir = path.join(sysRoot, "class/net", name, "statistics");
      return { name, rxBytes: counter(path.join(dir, "rx_bytes")), rxErrors: counter(path.join(dir, "rx_errors")), txBytes: counter(path.join(dir, "tx_bytes")), txErrors: counter(path.join(dir, "tx_errors")) };
    });
  if (interfaces.length === 0) return undefined;
  const main = interfaces.find((i) => i.name === DEFAULT_INTERFACE) ?? interfaces[0];
  return { time, ...main, interfaces };
}

/** `swap`: what is free of it, and what is used (both 0 on a node without swap). */
export function nodeSwap(time: string, meminfo: Map<string, number>): Record<string, unknown> {
  const total = meminfo.get("SwapTotal") ?? 0;
  const free = meminfo.get("SwapFree") ?? 0;
  return { time, swapAvailableBytes: free, swapUsageBytes: Math.max(0, total - free) };
}

/** A PSI file's `some` and `full` lines: averages in percent, total stall time in microseconds. */
export function parsePsi(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const line of text.split("\n")) {
    const m = /^(some|full) avg10=([\d.]+) avg60=([\d.]+) avg300=([\d.]+) total=(\d+)$/.exec(line.trim());
    if (m) out[m[1]] = { total: Number(m[5]), avg10: Number(m[2]), avg60: Number(m[3]), avg300: Number(m[4]) };
  }
  return out.some && out.full ? { full: out.full, some: out.some } : undefined;
}

/** `io`: the node's I/O pressure, where the kernel keeps it (PSI, Linux 4.20+, not disabled). */
export function nodeIo(time: string, procRoot = "/proc"): Record<string, unknown> | undefined {
  const psi = parsePsi(readText(path.join(procRoot, "pressure/io")) ?? "");
  return psi ? { time, psi } : undefined;
}

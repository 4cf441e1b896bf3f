// A process's resident memory as the flood benches read it: now, and once it stops moving.
import fs from "node:fs";

/** VmRSS of process `pid`, in MiB. */
export function rssMiB(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;
}

/** RSS once it stops moving: sampled every second until five samples agree within 0.5 MiB (at most 60 s). */
export async function settledRssMiB(pid) {
  const samples = [];
  for (let i = 0; i < 60; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    samples.push(rssMiB(pid));
    const last = samples.slice(-5);
    if (last.length === 5 && Math.max(...last) - Math.min(...last) <= 0.5) break;
  }
  return Math.min(...samples.slice(-5));
}

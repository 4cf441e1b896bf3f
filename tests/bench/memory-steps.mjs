// One process's RSS as nanolet's parts are loaded one after another (run by memory.mjs under each
// set of Node.js flags; prints one JSON line). After each step a full GC, so that what is left
// is what the part keeps, not what loading it churned.
import path from "node:path";
import v8 from "node:v8";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const mib = (bytes) => Math.round((bytes / 1048576) * 10) / 10;
const steps = [];
const mark = (part) => {
  globalThis.gc?.();
  const m = process.memoryUsage();
  steps.push({ part, rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), externalMiB: mib(m.external) });
};

mark("node");
const grpc = await import("@grpc/grpc-js");
mark("@grpc/grpc-js");
const protoLoader = await import("@grpc/proto-loader");
grpc.loadPackageDefinition(protoLoader.loadSync(path.join(repo, "host/cri/runtime-v1.proto"), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true }));
mark("CRI proto loaded");
await import("yaml");
mark("yaml");
const { CoreAgent } = await import(path.join(repo, "dist/core/core.js"));
const core = await CoreAgent.create({ nodeName: "memory", relistPeriodMs: 1000, backoffInitialMs: 10_000, backoffMaxMs: 300_000, workerErrorBackoffMs: 2000 });
core.pollActions(0);
mark("the component, one agent");
await import(path.join(repo, "dist/cli/main.js"));
mark("the host's modules");
const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mib(s.space_used_size)]));
console.log(JSON.stringify({ steps, heapSpacesMiB: spaces }));

#!/usr/bin/env node
// A sample device plugin (device plugin API v1beta1), as upstream keeps one for its tests: it
// announces N devices of one extended resource and gives a container, for each device it gets,
// an environment variable, a file mounted at /var/run/sample/<id> and the node's /dev/null as
// /dev/sample-<id>. It registers with the node agent on `<dir>/kubelet.sock` (or through
// `plugins_registry` with --via-registry) and registers again when the agent restarts.
//
//   node examples/device-plugin/sample-device-plugin.mjs --resource example.com/sample --devices 2 \
//     --dir /var/lib/kubelet/device-plugins
//
// --unhealthy FILE: device IDs listed in FILE (one per line) are announced Unhealthy.
// --numa LIST: NUMA node of each device, comma separated (`0,0,1`), for topology tests.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const here = path.dirname(fileURLToPath(import.meta.url));
const PROTOS = path.join(here, "../../host/devices");
const { values } = parseArgs({
  options: {
    resource: { type: "string", default: "example.com/sample" },
    devices: { type: "string", default: "2" },
    dir: { type: "string", default: "/var/lib/kubelet/device-plugins" },
    "registry-dir": { type: "string" },
    "via-registry": { type: "boolean", default: false },
    "state-dir": { type: "string" },
    unhealthy: { type: "string" },
    numa: { type: "string" },
    "pre-start": { type: "boolean", default: false },
  },
});

const load = (file) => grpc.loadPackageDefinition(protoLoader.loadSync(path.join(PROTOS, file), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true }));
const api = load("deviceplugin-v1beta1.proto").v1beta1;
const registration = load("pluginregistration-v1.proto").pluginregistration;

const resource = values.resource;
const count = Number(values.devices);
const shortName = resource.replace(/[^a-z0-9]+/gi, "-");
const socketName = `${shortName}.sock`;
const socketPath = path.join(values.dir, socketName);
const stateDir = values["state-dir"] ?? path.join(values.dir, `${shortName}-state`);
const numa = (values.numa ?? "").split(",").filter((s) => s !== "").map(Number);
const ids = Array.from({ length: count }, (_, i) => `dev-${i}`);
const log = (msg, fields = {}) => process.stderr.write(`${new Date().toISOString()} sample-device-plugin: ${msg} ${JSON.stringify(fields)}\n`);

fs.mkdirSync(stateDir, { recursive: true });
for (const id of ids) fs.writeFileSync(path.join(stateDir, id), `${resource} ${id}\n`);

function unhealthySet() {
  try {
    return new Set(fs.readFileSync(values.unhealthy, "utf8").split("\n").map((s) => s.trim()).filter(Boolean));
  } catch {
    return new Set();
  }
}

function deviceList() {
  const bad = unhealthySet();
  return ids.map((id, i) => ({
    ID: id,
    health: bad.has(id) ? "Unhealthy" : "Healthy",
    ...(numa[i] !== undefined ? { topology: { nodes: [{ ID: String(numa[i]) }] } } : {}),
  }));
}

const watchers = new Set();
let lastList = JSON.stringify(deviceList());
setInterval(() => {
  const next = JSON.stringify(deviceList());
  if (next === lastList) return;
  lastList = next;
  for (const call of watchers) call.write({ devices: deviceList() });
}, 500).unref();

const server = new grpc.Server();
server.addService(api.DevicePlugin.service, {
  GetDevicePluginOptions: (_call, callback) => callback(null, { preStartRequired: values["pre-start"], getPreferredAllocationAvailable: true }),
  ListAndWatch: (call) => {
    watchers.add(call);
    call.write({ devices: deviceList() });
    call.on("cancelled", () => watchers.delete(call));
    call.on("close", () => watchers.delete(call));
  },
  // The lowest ids first (the ones that must be included before them): the same devices on every node.
  GetPreferredAllocation: (call, callback) => {
    const responses = call.request.containerRequests.map((r) => ({
      deviceIDs: [...r.mustIncludeDeviceIDs, ...[...r.availableDeviceIDs].sort().filter((id) => !r.mustIncludeDeviceIDs.includes(id))].slice(0, r.allocationSize),
    }));
    callback(null, { containerResponses: responses });
  },
  Allocate: (call, callback) => {
    const containerResponses = [];
    for (const request of call.request.containerRequests) {
      // The kubelet passes its set unordered: the answer is the same whatever the order.
      request.devicesIds = [...request.devicesIds].sort();
      const unknown = request.devicesIds.filter((id) => !ids.includes(id));
      if (unknown.length > 0) return callback({ code: grpc.status.INVALID_ARGUMENT, details: `unknown devices ${unknown.join(",")}` });
      log("Allocate", { devices: request.devicesIds });
      containerResponses.push({
        envs: { SAMPLE_DEVICES: request.devicesIds.join(",") },
        mounts: request.devicesIds.map((id) => ({ containerPath: `/var/run/sample/${id}`, hostPath: path.join(stateDir, id), readOnly: true })),
        devices: request.devicesIds.map((id) => ({ containerPath: `/dev/sample-${id}`, hostPath: "/dev/null", permissions: "rw" })),
        annotations: { "example.com/sample-devices": request.devicesIds.join(",") },
      });
    }
    callback(null, { containerResponses });
  },
  PreStartContainer: (call, callback) => {
    log("PreStartContainer", { devices: call.request.devicesIds });
    callback(null, {});
  },
});

// The registration socket of the plugin watcher's way: GetInfo says who this is.
server.addService(registration.Registration.service, {
  GetInfo: (_call, callback) => callback(null, { type: "DevicePlugin", name: resource, endpoint: socketPath, supportedVersions: ["v1beta1"] }),
  NotifyRegistrationStatus: (call, callback) => {
    log("registration status", call.request);
    callback(null, {});
  },
});

fs.rmSync(socketPath, { force: true });
await new Promise((resolve, reject) => server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
log("serving", { socket: socketPath, devices: ids });

const kubeletSocket = path.join(values.dir, "kubelet.sock");
let registeredWith = "";

function socketIdentity(file) {
  try {
    const s = fs.statSync(file);
    return `${s.ino}:${s.ctimeMs}`;
  } catch {
    return "";
  }
}

async function register() {
  const identity = socketIdentity(kubeletSocket);
  if (!identity || identity === registeredWith) return;
  const client = new api.Registration(`unix:${kubeletSocket}`, grpc.credentials.createInsecure());
  try {
    await new Promise((resolve, reject) => client.Register({
      version: "v1beta1", endpoint: socketName, resourceName: resource,
      options: { preStartRequired: values["pre-start"], getPreferredAllocationAvailable: true },
    }, { deadline: Date.now() + 5000 }, (e) => (e ? reject(e) : resolve())));
    registeredWith = identity;
    log("registered", { with: kubeletSocket });
  } catch (error) {
    log("registration failed; trying again", { error: error.message });
  } finally {
    client.close();
  }
}

let registryLink = "";
if (values["via-registry"]) {
  // The plugin watcher finds this socket (a link in plugins_registry) and asks GetInfo.
  const registryDir = values["registry-dir"] ?? path.join(path.dirname(values.dir), "plugins_registry");
  fs.mkdirSync(registryDir, { recursive: true });
  const link = path.join(registryDir, `${shortName}-reg.sock`);
  registryLink = link;
  fs.rmSync(link, { force: true });
  const regServer = new grpc.Server();
  regServer.addService(registration.Registration.service, {
    GetInfo: (_call, callback) => callback(null, { type: "DevicePlugin", name: resource, endpoint: socketPath, supportedVersions: ["v1beta1"] }),
    NotifyRegistrationStatus: (call, callback) => {
      log("registration status", call.request);
      callback(null, {});
    },
  });
  await new Promise((resolve, reject) => regServer.bindAsync(`unix:${link}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
} else {
  // Register now, and again whenever the agent's socket is made anew (the agent restarted).
  await register();
  setInterval(() => void register(), 1000);
}

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.forceShutdown();
    fs.rmSync(socketPath, { force: true });
    if (registryLink) fs.rmSync(registryLink, { force: true });
    process.exit(0);
  });
}

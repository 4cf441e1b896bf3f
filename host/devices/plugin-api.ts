// The device plugin API v1beta1 as grpc-js sees it: the service definitions loaded from the
// project's proto, the messages in the shapes proto-loader gives, and the names and words of the
// API (versions, health values, the kubelet's socket).
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { DEVICE_PLUGIN_PROTO_PATH, PLUGIN_REGISTRATION_PROTO_PATH } from "../common/asset-paths.js";

export const DEVICE_PLUGIN_VERSION = "v1beta1";
export const KUBELET_SOCKET = "kubelet.sock";
export const HEALTHY = "Healthy";
export const UNHEALTHY = "Unhealthy";

export interface DeviceMessage {
  ID: string;
  health: string;
  topology?: { nodes?: { ID: string | number }[] } | null;
}

export interface ContainerAllocateResponse {
  envs?: Record<string, string>;
  mounts?: { containerPath: string; hostPath: string; readOnly: boolean }[];
  devices?: { containerPath: string; hostPath: string; permissions: string }[];
  annotations?: Record<string, string>;
  cdiDevices?: { name: string }[];
}

export interface RegisterRequest {
  version: string;
  endpoint: string;
  resourceName: string;
  options?: { preStartRequired?: boolean; getPreferredAllocationAvailable?: boolean } | null;
}

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

type ServiceCtor = grpc.ServiceClientConstructor;

let loaded: { registration: ServiceCtor; devicePlugin: ServiceCtor; pluginRegistration: ServiceCtor } | undefined;

/** The services, loaded once (proto-loader's parse is the costly part). */
export function services(): { registration: ServiceCtor; devicePlugin: ServiceCtor; pluginRegistration: ServiceCtor } {
  if (loaded) return loaded;
  const device = grpc.loadPackageDefinition(protoLoader.loadSync(DEVICE_PLUGIN_PROTO_PATH, LOADER_OPTIONS)) as any;
  const registration = grpc.loadPackageDefinition(protoLoader.loadSync(PLUGIN_REGISTRATION_PROTO_PATH, LOADER_OPTIONS)) as any;
  loaded = { registration: device.v1beta1.Registration, devicePlugin: device.v1beta1.DevicePlugin, pluginRegistration: registration.pluginregistration.Registration };
  return loaded;
}

/** A resource name a device plugin may announce (upstream's extended resource rules). */
export function validResourceName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const slash = name.indexOf("/");
  if (slash <= 0 || name.indexOf("/", slash + 1) >= 0) return false;
  const domain = name.slice(0, slash), local = name.slice(slash + 1);
  if (domain === "kubernetes.io" || domain.endsWith(".kubernetes.io") || name.startsWith("requests.")) return false;
  const dns = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  const qualified = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
  return dns.test(domain) && domain.length <= 253 && local.length <= 63 && qualified.test(local);
}

/** The NUMA nodes a device message names. */
export function numaNodesOf(device: DeviceMessage): number[] {
  const out: number[] = [];
  for (const n of device.topology?.nodes ?? []) {
    const id = Number(n.ID);
    if (Number.isInteger(id) && id >= 0 && id < 64 && !out.includes(id)) out.push(id);
  }
  return out.sort((a, b) => a - b);
}

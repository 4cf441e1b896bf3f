// What the runtime needs of a pod beyond the core's sandbox and container specs: hostname, DNS,
// ports, namespaces and security for the sandbox; security, stdin/tty and the managed /etc/hosts for
// a container. All of it is read from the pod's object as the source gave it; none of it is a
// decision over time (that is the core's), only the kubelet's translation of the Pod API to CRI.
import type { ContainerConfig, ImageUser, SandboxConfig } from "../cri/runtime.js";
import { podDnsConfig, podHostnameAndDomain, sandboxHostname, type DnsSettings, type DnsWarning } from "./dns.js";
import { ETC_HOSTS_PATH, hostNetworkHostsContent, managedHostsContent, mountsOwnHostsFile, writeHostsFile } from "./etc-hosts.js";
import { portMappings } from "./ports-and-sysctls.js";
import { containerNamed, containerSecurity, podNamespaces, sandboxSecurity } from "./security-context.js";
import { FILE_LIMITS, readBoundedText } from "../files/bounded-file.js";

type Json = Record<string, any>;

/** The node's settings these translations use (flags of `nanolet run`). */
export interface PodRuntimeSettings {
  dns: DnsSettings;
  /** `<root-dir>/seccomp`: where Localhost seccomp profiles are. */
  seccompRoot: string;
  /** The node's hosts file, copied for pods on the node's network. */
  nodeHostsFile: string;
}

/** The pod as these translations read it: its names, annotations and spec. */
export interface PodObjectFacts {
  name: string;
  namespace: string;
  uid: string;
  annotations: Record<string, string>;
  spec: Json;
}

export const DEFAULT_POD_RUNTIME_SETTINGS: PodRuntimeSettings = {
  dns: { clusterDns: [], clusterDomain: "", resolvConf: undefined, nodeIps: [] },
  seccompRoot: "/var/lib/nanolet/seccomp",
  nodeHostsFile: "/etc/hosts",
};

/** Reads --resolv-conf: its text, "" for no file asked, undefined when it cannot be read. */
export function readResolvConf(file: string): string | undefined {
  if (file === "") return "";
  try {
    return readBoundedText(file, FILE_LIMITS.smallBytes);
  } catch {
    return undefined;
  }
}

function asPod(facts: PodObjectFacts): Json {
  return { metadata: { name: facts.name, namespace: facts.namespace, uid: facts.uid, annotations: facts.annotations }, spec: facts.spec };
}

/** The sandbox's settings from the pod, and the DNS warnings to send as its events. */
export function withSandboxSettings(base: SandboxConfig, facts: PodObjectFacts | undefined, settings: PodRuntimeSettings): { config: SandboxConfig; warnings: DnsWarning[] } {
  if (!facts) return { config: base, warnings: [] };
  const spec = facts.spec;
  const { dns, warnings } = podDnsConfig(spec, facts.namespace, settings.dns);
  const config: SandboxConfig = {
    ...base,
    // A sandbox on the node's network has the node's name; the runtime refuses another.
    hostname: base.hostNetwork ? "" : sandboxHostname(spec, facts.name, facts.namespace, settings.dns.clusterDomain),
    dns,
    portMappings: portMappings(spec),
    namespaces: podNamespaces(spec),
    security: sandboxSecurity(asPod(facts), settings.seccompRoot),
  };
  return { config, warnings };
}

/** A container's settings from the pod: security (with its image's user), stdin/tty. */
export function withContainerSettings(base: ContainerConfig, facts: PodObjectFacts | undefined, imageUser: ImageUser, settings: PodRuntimeSettings): ContainerConfig {
  if (!facts) return base;
  const container = containerNamed(facts.spec, base.name);
  return {
    ...base,
    security: containerSecurity(asPod(facts), base.name, imageUser, settings.seccompRoot),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
  };
}

/**
 * The pod's managed /etc/hosts, written under `podDir` and mounted into the container, when the
 * pod has an IP or is on the node's network (the kubelet's rule) and the container does not mount
 * its own.
 */
export function hostsFileMount(facts: PodObjectFacts, containerName: string, hostNetwork: boolean, podIps: string[], podDir: string, settings: PodRuntimeSettings): { containerPath: string; hostPath: string; readonly: boolean } | undefined {
  if ((podIps.length === 0 && !hostNetwork) || mountsOwnHostsFile(containerNamed(facts.spec, containerName))) return undefined;
  const spec = facts.spec;
  let content: string;
  if (hostNetwork) {
    let nodeHosts = "";
    try {
      nodeHosts = readBoundedText(settings.nodeHostsFile, FILE_LIMITS.smallBytes);
    } catch {
      // A node without a hosts file: the pod gets the aliases alone.
    }
    content = hostNetworkHostsContent(nodeHosts, spec.hostAliases);
  } else {
    const { hostname, domain } = podHostnameAndDomain(spec, facts.name, facts.namespace, settings.dns.clusterDomain);
    content = managedHostsContent(podIps, hostname, domain, spec.hostAliases);
  }
  return { containerPath: ETC_HOSTS_PATH, hostPath: writeHostsFile(podDir, content), readonly: false };
}

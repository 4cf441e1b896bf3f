// The /etc/hosts the kubelet writes for each pod (`<root-dir>/pods/<uid>/etc-hosts`) and mounts into
// its containers: the usual local names and the pod's own name at its IPs, or on the node's
// network a copy of the node's file; then `hostAliases`.
import fs from "node:fs";
import path from "node:path";

type Json = Record<string, any>;

export const ETC_HOSTS_PATH = "/etc/hosts";

function aliasLines(hostAliases: unknown): string {
  if (!Array.isArray(hostAliases) || hostAliases.length === 0) return "";
  const lines = hostAliases.map((a: Json) => `${a.ip}\t${(Array.isArray(a.hostnames) ? a.hostnames : []).join("\t")}\n`);
  return "\n# Entries added by HostAliases.\n" + lines.join("");
}

/** The file of a pod with its own network: local names, the pod at each of its IPs, aliases. */
export function managedHostsContent(podIps: string[], hostname: string, domain: string, hostAliases: unknown): string {
  let text = "# Kubernetes-managed hosts file.\n";
  text += "127.0.0.1\tlocalhost\n";
  text += "::1\tlocalhost ip6-localhost ip6-loopback\n";
  text += "fe00::0\tip6-localnet\n";
  text += "fe00::0\tip6-mcastprefix\n";
  text += "fe00::1\tip6-allnodes\n";
  text += "fe00::2\tip6-allrouters\n";
  for (const ip of podIps) text += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return text + aliasLines(hostAliases);
}

/** The file of a pod on the node's network: the node's own file, then the aliases. */
export function hostNetworkHostsContent(nodeHostsText: string, hostAliases: unknown): string {
  return "# Kubernetes-managed hosts file (host network).\n" + nodeHostsText + aliasLines(hostAliases);
}

/** Whether a container mounts its own file at /etc/hosts (then the kubelet's is not mounted). */
export function mountsOwnHostsFile(container: Json): boolean {
  return Array.isArray(container.volumeMounts) && container.volumeMounts.some((m: Json) => m?.mountPath === ETC_HOSTS_PATH);
}

/** Writes the pod's hosts file (again at each container creation, as the kubelet does) and returns its path. */
export function writeHostsFile(podDir: string, content: string): string {
  fs.mkdirSync(podDir, { recursive: true });
  const file = path.join(podDir, "etc-hosts");
  fs.writeFileSync(file, content, { mode: 0o644 });
  return file;
}

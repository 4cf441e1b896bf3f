// Two more pieces of a pod's runtime settings: its containers' ports as the sandbox's CRI port
// mappings (upstream MakePortMappings), and the node's sysctl admission (upstream's sysctl
// allowlist: the safe sysctls, plus --allowed-unsafe-sysctls).
import type { PortMapping } from "../cri/runtime.js";
import { isIpcSysctl, isNetSysctl } from "../sources/security-fields.js";

type Json = Record<string, any>;

/** Every container port, as the runtime's port forwarding wants it (one per name, per container). */
export function portMappings(spec: Json): PortMapping[] {
  const out: PortMapping[] = [];
  const containers = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    // Sidecars run as long as the pod: their ports are the pod's too.
    ...(Array.isArray(spec.initContainers) ? spec.initContainers.filter((c: Json) => c?.restartPolicy === "Always") : []),
  ];
  for (const c of containers) {
    const names = new Set<string>();
    for (const p of Array.isArray(c?.ports) ? c.ports : []) {
      const protocol = p.protocol === "UDP" || p.protocol === "SCTP" ? p.protocol : "TCP";
      const name = p.name ? `${c.name}-${p.name}` : `${c.name}-${protocol}:${p.containerPort}`;
      if (names.has(name)) continue;
      names.add(name);
      out.push({ protocol, containerPort: Number(p.containerPort ?? 0), hostPort: Number(p.hostPort ?? 0), hostIp: typeof p.hostIP === "string" ? p.hostIP : "" });
    }
  }
  return out;
}

/** The sysctls a pod may set on any node (upstream SafeSysctlAllowlist). */
export const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
];

/** `a/b.c` and `a.b.c` name one sysctl. */
function normalize(name: string): string {
  return name.includes("/") ? name.replace(/\./g, "\u0000").replace(/\//g, ".").replace(/\u0000/g, "/") : name;
}

/** --allowed-unsafe-sysctls: names, or prefixes ending in `*`, each of a namespaced group. */
export function checkAllowedUnsafeSysctls(patterns: string[]): void {
  for (const p of patterns) {
    const name = p.endsWith("*") ? p.slice(0, -1) : p;
    if (!isNetSysctl(name) && !isIpcSysctl(name) && !(p.endsWith("*") && ["kernel.shm", "kernel.msg", "fs.mqueue."].some((g) => name.startsWith(g)))) {
      throw new Error(`--allowed-unsafe-sysctls: the sysctl "${p}" is not known to be namespaced`);
    }
  }
}

/**
 * The node's admission of a pod's sysctls: the first one that is neither safe nor allowed, or a
 * network or IPC one on a pod that shares the node's network or IPC namespace. Undefined: admitted.
 */
export function sysctlRefusal(spec: Json, allowedUnsafe: string[]): { field: string; message: string } | undefined {
  const sc = spec.securityContext && typeof spec.securityContext === "object" ? (spec.securityContext as Json) : {};
  const sysctls: Json[] = Array.isArray(sc.sysctls) ? sc.sysctls : [];
  const allowed = [...SAFE_SYSCTLS, ...allowedUnsafe];
  for (let i = 0; i < sysctls.length; i++) {
    const name = normalize(String(sysctls[i]?.name ?? ""));
    const field = `spec.securityContext.sysctls[${i}].name`;
    const listed = allowed.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
    if (!listed) return { field, message: `forbidden sysctl: "${name}" not allowlisted` };
    if (isNetSysctl(name) && spec.hostNetwork === true) return { field, message: `forbidden sysctl: "${name}" not allowed with host net enabled` };
    if (isIpcSysctl(name) && spec.hostIPC === true) return { field, message: `forbidden sysctl: "${name}" not allowed with host ipc enabled` };
  }
  return undefined;
}

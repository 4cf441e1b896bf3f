// The service environment variables the kubelet gives every container (getServiceEnvVarMap and
// envvars.FromServices): for each Service with a cluster IP in the pod's namespace (when
// `enableServiceLinks`, the default) and always for `kubernetes` in `default`,
// `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` (the first port), `<NAME>_SERVICE_PORT_<PORTNAME>`
// and Docker's link variables `<NAME>_PORT`, `<NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]`.

type Json = Record<string, any>;

/** The apiserver's own Services, given to pods of every namespace. */
const MASTER_SERVICES = new Set(["kubernetes"]);

function envName(serviceOrPort: string): string {
  return serviceOrPort.replace(/-/g, "_").toUpperCase();
}

function clusterIpOf(service: Json): string {
  const ip = service?.spec?.clusterIP;
  return typeof ip === "string" && ip !== "" && ip !== "None" ? ip : "";
}

/** One Service's variables, in upstream's order. */
export function serviceVariables(service: Json): [string, string][] {
  const ip = clusterIpOf(service);
  const ports: Json[] = Array.isArray(service?.spec?.ports) ? service.spec.ports : [];
  if (ip === "" || ports.length === 0) return [];
  const prefix = envName(String(service.metadata?.name ?? ""));
  const out: [string, string][] = [[`${prefix}_SERVICE_HOST`, ip], [`${prefix}_SERVICE_PORT`, String(ports[0].port)]];
  for (const p of ports) if (p.name) out.push([`${prefix}_SERVICE_PORT_${envName(String(p.name))}`, String(p.port)]);
  const hostPort = (port: unknown) => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
  ports.forEach((p, i) => {
    const protocol = typeof p.protocol === "string" && p.protocol !== "" ? p.protocol : "TCP";
    const url = `${protocol.toLowerCase()}://${hostPort(p.port)}`;
    if (i === 0) out.push([`${prefix}_PORT`, url]); // Docker's special case: the first port
    const portPrefix = `${prefix}_PORT_${p.port}_${protocol.toUpperCase()}`;
    out.push([portPrefix, url], [`${portPrefix}_PROTO`, protocol.toLowerCase()], [`${portPrefix}_PORT`, String(p.port)], [`${portPrefix}_ADDR`, ip]);
  });
  return out;
}

/** The variables for a pod in `namespace` from every known Service. */
export function serviceEnvironment(services: Iterable<Json>, namespace: string, enableServiceLinks: boolean): Record<string, string> {
  const chosen = new Map<string, Json>();
  for (const service of services) {
    if (clusterIpOf(service) === "") continue;
    const name = String(service.metadata?.name ?? "");
    const ns = String(service.metadata?.namespace ?? "");
    if (ns === "default" && MASTER_SERVICES.has(name)) {
      if (!chosen.has(name)) chosen.set(name, service);
    } else if (ns === namespace && enableServiceLinks) {
      chosen.set(name, service);
    }
  }
  const env: Record<string, string> = {};
  for (const service of chosen.values()) for (const [k, v] of serviceVariables(service)) env[k] = v;
  return env;
}

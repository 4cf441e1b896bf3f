// A pod's DNS settings and hostname as the kubelet gives them to its sandbox (network/dns/dns.go,
// GeneratePodHostNameAndDomain): the policy picks the cluster's DNS or the node's resolv.conf,
// `dnsConfig` is merged in, and the result is cut to the resolver's limits with an event saying so.
import type { DnsConfig } from "../cri/runtime.js";

type Json = Record<string, any>;

/** The kubelet's DNS flags: --cluster-dns, --cluster-domain, --resolv-conf. */
export interface DnsSettings {
  clusterDns: string[];
  clusterDomain: string;
  /** The node's resolv.conf: its text ("" when --resolv-conf is empty: no host DNS). */
  resolvConf: string | undefined;
  /** The node's IPs: with --resolv-conf "", the host policy points at the local resolver. */
  nodeIps: string[];
}

export const MAX_NAMESERVERS = 3;
export const MAX_SEARCHES = 32;
export const MAX_SEARCH_LINE_CHARS = 2048;
const DEFAULT_CLUSTER_OPTIONS = ["ndots:5"];
const MAX_HOSTNAME_CHARS = 63;
const MAX_FQDN_CHARS = 64;

/** A warning the kubelet sends as a pod event while forming the DNS settings. */
export interface DnsWarning {
  reason: "MissingClusterDNS" | "DNSConfigForming";
  message: string;
}

export class HostnameError extends Error {}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/** The nameservers, search domains and options of a resolv.conf text (the last search line wins). */
export function parseResolvConf(text: string): DnsConfig {
  const out: DnsConfig = { servers: [], searches: [], options: [] };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const fields = line.split(/\s+/);
    if (fields[0] === "nameserver" && fields.length > 1) out.servers.push(fields[1]);
    // A domain with and without its trailing dot is one domain; "." alone is no domain.
    if (fields[0] === "search") out.searches = fields.slice(1).filter((s) => s !== ".").map((s) => s.replace(/\.$/, ""));
    if (fields[0] === "options") out.options = mergeOptions(out.options, fields.slice(1));
  }
  return out;
}

/** Options by name: a later `name[:value]` replaces an earlier one of the same name. */
function mergeOptions(existing: string[], added: string[]): string[] {
  const byName = new Map<string, string>();
  for (const option of [...existing, ...added]) byName.set(option.split(":")[0], option);
  return [...byName.values()];
}

type PolicyKind = "none" | "cluster" | "host";

function policyKind(spec: Json): PolicyKind {
  const policy = typeof spec.dnsPolicy === "string" && spec.dnsPolicy !== "" ? spec.dnsPolicy : "ClusterFirst";
  if (policy === "None") return "none";
  if (policy === "ClusterFirstWithHostNet") return "cluster";
  if (policy === "ClusterFirst" && spec.hostNetwork !== true) return "cluster";
  return "host"; // Default, and ClusterFirst on the node's network
}

/** The sandbox's DNS config for a pod in `namespace`, and the warnings to send as its events. */
export function podDnsConfig(spec: Json, namespace: string, settings: DnsSettings): { dns: DnsConfig; warnings: DnsWarning[] } {
  const warnings: DnsWarning[] = [];
  const host = settings.resolvConf ? parseResolvConf(settings.resolvConf) : { servers: [], searches: [], options: [] };
  let dns: DnsConfig = host;
  let kind = policyKind(spec);
  if (kind === "cluster" && settings.clusterDns.length === 0) {
    warnings.push({
      reason: "MissingClusterDNS",
      message: 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    });
    kind = "host";
  }
  if (kind === "none") dns = { servers: [], searches: [], options: [] };
  else if (kind === "cluster") {
    const domain = settings.clusterDomain;
    const searches = domain ? unique([`${namespace}.svc.${domain}`, `svc.${domain}`, domain, ...host.searches]) : host.searches;
    dns = { servers: [...settings.clusterDns], searches, options: [...DEFAULT_CLUSTER_OPTIONS] };
  } else if (settings.resolvConf === "") {
    // No resolv.conf for the node: the local resolver, and no search path at all.
    dns = { servers: settings.nodeIps.length > 0 ? settings.nodeIps.map((ip) => (ip.includes(":") ? "::1" : "127.0.0.1")) : ["127.0.0.1"], searches: ["."], options: [] };
  }
  const own = spec.dnsConfig && typeof spec.dnsConfig === "object" ? (spec.dnsConfig as Json) : undefined;
  if (own) {
    const ownOptions = (Array.isArray(own.options) ? own.options : []).map((o: Json) => (o.value !== undefined && o.value !== null ? `${o.name}:${o.value}` : String(o.name)));
    dns = {
      servers: unique([...dns.servers, ...(Array.isArray(own.nameservers) ? own.nameservers : [])]),
      searches: unique([...dns.searches, ...(Array.isArray(own.searches) ? own.searches : [])]),
      options: mergeOptions(dns.options, ownOptions),
    };
  }
  return { dns: fitLimits(dns, warnings), warnings };
}

/** At most 3 nameservers and 32 search domains of 2048 characters in all, as the resolver reads them. */
function fitLimits(dns: DnsConfig, warnings: DnsWarning[]): DnsConfig {
  let servers = dns.servers;
  if (servers.length > MAX_NAMESERVERS) {
    servers = servers.slice(0, MAX_NAMESERVERS);
    warnings.push({ reason: "DNSConfigForming", message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(" ")}` });
  }
  let searches = dns.searches;
  let cut = false;
  if (searches.join(" ").length > MAX_SEARCH_LINE_CHARS) {
    let chars = 0;
    const kept: string[] = [];
    for (const s of searches) {
      chars += s.length + (kept.length > 0 ? 1 : 0);
      if (chars > MAX_SEARCH_LINE_CHARS) break;
      kept.push(s);
    }
    searches = kept;
    cut = true;
  }
  if (searches.length > MAX_SEARCHES) {
    searches = searches.slice(0, MAX_SEARCHES);
    cut = true;
  }
  if (cut) warnings.push({ reason: "DNSConfigForming", message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(" ")}` });
  return { servers, searches, options: dns.options };
}

/**
 * The pod's hostname and domain: `spec.hostname` or the pod's name (cut to 63 characters, no
 * trailing '-' or '.'), and `<subdomain>.<namespace>.svc.<cluster domain>` when a subdomain is set.
 */
export function podHostnameAndDomain(spec: Json, podName: string, namespace: string, clusterDomain: string): { hostname: string; domain: string } {
  let hostname = typeof spec.hostname === "string" && spec.hostname !== "" ? spec.hostname : podName;
  if (hostname.length > MAX_HOSTNAME_CHARS) hostname = hostname.slice(0, MAX_HOSTNAME_CHARS).replace(/[-.]+$/, "");
  const domain = typeof spec.subdomain === "string" && spec.subdomain !== "" ? `${spec.subdomain}.${namespace}.svc.${clusterDomain}` : "";
  return { hostname, domain };
}

/** The sandbox's hostname: the FQDN with setHostnameAsFQDN (at most 64 characters), else the short name. */
export function sandboxHostname(spec: Json, podName: string, namespace: string, clusterDomain: string): string {
  const { hostname, domain } = podHostnameAndDomain(spec, podName, namespace, clusterDomain);
  if (spec.setHostnameAsFQDN !== true || domain === "") return hostname;
  const fqdn = `${hostname}.${domain}`;
  if (fqdn.length > MAX_FQDN_CHARS) {
    throw new HostnameError(`failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${MAX_FQDN_CHARS} characters is the max, ${fqdn.length} characters requested)`);
  }
  return fqdn;
}

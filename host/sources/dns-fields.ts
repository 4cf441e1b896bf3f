// The naming fields of a Pod: dnsPolicy, dnsConfig, hostname, subdomain, hostAliases, checked
// with the apiserver's rules and words (validateDNSPolicy, validatePodDNSConfig,
// validateHostAliases) so that a static pod is refused as a created one is.
import { FieldReader, type JsonObject } from "./field-reader.js";

const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;
const MAX_SEARCH_CHARS = 2048;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const IP_WORDS = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

function supported(value: string, values: string[]): string {
  return `Unsupported value: "${value}": supported values: ${values.map((v) => `"${v}"`).join(", ")}`;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * An IPv4 (no leading zeros, as Go's parser since 1.17) or IPv6 address. Written here rather than
 * node:net's isIP because the manifest reader also runs in the simulator's browser report page.
 */
export function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(":") || text.includes("%")) return false;
  let groups = text;
  const budget = 8;
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    if (!IPV4.test(text.slice(lastColon + 1))) return false;
    groups = text.slice(0, lastColon + 1) + "0:0"; // the IPv4 tail is two groups
  }
  const halves = groups.split("::");
  if (halves.length > 2) return false;
  const parts = (half: string) => (half === "" ? [] : half.split(":"));
  const all = halves.flatMap(parts);
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? all.length < budget : all.length === budget;
}

/** An RFC 1123 label (hostname, subdomain), with the apiserver's words. */
export function labelProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 63) out.push("must be no more than 63 characters");
  if (!LABEL.test(value)) {
    out.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return out;
}

/** An RFC 1123 subdomain (a search domain, a host alias), with the apiserver's words. */
export function subdomainProblems(value: string): string[] {
  const out: string[] = [];
  if (value.length > 253) out.push("must be no more than 253 characters");
  if (!SUBDOMAIN.test(value)) {
    out.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return out;
}

/** dnsPolicy, dnsConfig, hostname, subdomain, setHostnameAsFQDN and hostAliases of `spec`. */
export function checkNamingFields(r: FieldReader, spec: JsonObject): void {
  const policy = r.string(spec.dnsPolicy, "spec.dnsPolicy") ?? "";
  if (policy !== "" && !DNS_POLICIES.includes(policy)) r.add("spec.dnsPolicy", supported(policy, DNS_POLICIES));
  checkDnsConfig(r, spec.dnsConfig, policy === "None");
  for (const key of ["hostname", "subdomain"] as const) {
    const value = r.string(spec[key], `spec.${key}`);
    if (value) for (const p of labelProblems(value)) r.add(`spec.${key}`, `Invalid value: "${value}": ${p}`);
  }
  r.boolean(spec.setHostnameAsFQDN, "spec.setHostnameAsFQDN");
  r.array(spec.hostAliases, "spec.hostAliases").forEach((item, i) => {
    const path = `spec.hostAliases[${i}]`;
    const alias = r.object(item, path, true);
    if (!alias) return;
    r.onlyFields(alias, path, new Set(["ip", "hostnames"]));
    const ip = r.string(alias.ip, `${path}.ip`) ?? "";
    if (ip === "") r.add(`${path}.ip`, "Required value");
    else if (!isIpAddress(ip)) r.add(`${path}.ip`, `Invalid value: "${ip}": ${IP_WORDS}`);
    r.stringList(alias.hostnames, `${path}.hostnames`).forEach((h, j) => {
      for (const p of subdomainProblems(h)) r.add(`${path}.hostnames[${j}]`, `Invalid value: "${h}": ${p}`);
    });
  });
}

function checkDnsConfig(r: FieldReader, value: unknown, policyNone: boolean): void {
  const field = "spec.dnsConfig";
  const config = r.object(value, field);
  if (!config) {
    if (policyNone) r.add(field, "Required value: must provide `dnsConfig` when `dnsPolicy` is None");
    return;
  }
  r.onlyFields(config, field, new Set(["nameservers", "searches", "options"]));
  const servers = r.stringList(config.nameservers, `${field}.nameservers`);
  if (policyNone && servers.length === 0) r.add(`${field}.nameservers`, "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None");
  if (servers.length > MAX_NAMESERVERS) r.add(`${field}.nameservers`, `Invalid value: ${JSON.stringify(servers)}: must not have more than ${MAX_NAMESERVERS} nameservers`);
  servers.forEach((ip, i) => {
    if (!isIpAddress(ip)) r.add(`${field}.nameservers[${i}]`, `Invalid value: "${ip}": ${IP_WORDS}`);
  });
  const searches = r.stringList(config.searches, `${field}.searches`);
  if (searches.length > MAX_SEARCHES) r.add(`${field}.searches`, `Invalid value: ${JSON.stringify(searches)}: must not have more than ${MAX_SEARCHES} search paths`);
  if (searches.join(" ").length > MAX_SEARCH_CHARS) r.add(`${field}.searches`, `Invalid value: ${JSON.stringify(searches)}: must not have more than ${MAX_SEARCH_CHARS} characters (including spaces) in the search list`);
  searches.forEach((s, i) => {
    // "." alone is allowed (no search domain); otherwise a subdomain, with or without its final dot.
    if (s === ".") return;
    const name = s.endsWith(".") ? s.slice(0, -1) : s;
    for (const p of subdomainProblems(name)) r.add(`${field}.searches[${i}]`, `Invalid value: "${s}": ${p}`);
  });
  r.array(config.options, `${field}.options`).forEach((item, i) => {
    const option = r.object(item, `${field}.options[${i}]`, true);
    if (!option) return;
    r.onlyFields(option, `${field}.options[${i}]`, new Set(["name", "value"]));
    const name = r.string(option.name, `${field}.options[${i}].name`) ?? "";
    r.string(option.value, `${field}.options[${i}].value`);
    if (name === "") r.add(`${field}.options[${i}]`, "Required value: Option.Name must not be empty");
  });
}

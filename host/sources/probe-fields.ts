// Container probes and ports as the core's pod-spec wants them: the Pod API's defaults filled in
// (SetDefaults_Probe, SetDefaults_HTTPGetAction) and the apiserver's checks (validateProbe,
// validateHandler) with its field paths and words, so a static pod is refused as a created one is.
import type { ContainerPort, Probe, ProbeHandler } from "../core/types.js";
import { FieldReader, isObject, type JsonObject } from "./field-reader.js";

const PROBE_FIELDS = new Set([
  "exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds", "periodSeconds",
  "successThreshold", "failureThreshold", "terminationGracePeriodSeconds",
]);
const HANDLER_ORDER = ["exec", "httpGet", "tcpSocket", "grpc"] as const;
/** A lifecycle hook's handlers, in the order validateHandler checks them. */
const HOOK_HANDLERS = ["exec", "httpGet", "tcpSocket", "sleep"] as const;
const SCHEMES = ["HTTP", "HTTPS"];
const HEADER_NAME = /^[-A-Za-z0-9]+$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export type ProbeKind = "startupProbe" | "livenessProbe" | "readinessProbe";

/** `ports[]` as the core wants them. checkPorts reports their problems; this only reads them. */
export function portsOf(value: unknown): ContainerPort[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item) => {
    if (!isObject(item)) return [];
    const port = item as JsonObject;
    const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX ? v : 0);
    const text = (v: unknown) => (typeof v === "string" ? v : "");
    return [{ name: text(port.name), containerPort: int(port.containerPort), hostPort: int(port.hostPort), protocol: text(port.protocol) || "TCP", hostIp: text(port.hostIP) }];
  });
}

/** A non-negative int32 field with its default for 0 or absent (the apiserver defaults first). */
function count(r: FieldReader, value: unknown, field: string, fallback: number): number {
  const n = r.integer(value, field, INT32_MIN, INT32_MAX);
  if (n === undefined || n === 0) return fallback;
  if (n < 0) r.add(field, `Invalid value: ${n}: must be greater than or equal to 0`);
  return n;
}

/**
 * A port given as a number or a name: numbers 1..65535; a name must be one of the container's
 * ports (the kubelet could not resolve it, so the probe could never run).
 */
function portOf(r: FieldReader, value: unknown, field: string, portNames: ReadonlySet<string>): string {
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 1 || value > 65535) r.add(field, `Invalid value: ${value}: must be between 1 and 65535, inclusive`);
    return String(value);
  }
  const name = r.string(value, field, true);
  if (name === undefined) return "";
  if (/^[0-9]+$/.test(name)) return portOf(r, Number(name), field, portNames);
  if (!portNames.has(name)) r.add(field, `Invalid value: "${name}": must be a number or the name of one of the container's ports`);
  return name;
}

function handlerOf(r: FieldReader, probe: JsonObject, field: string, portNames: ReadonlySet<string>, order: readonly string[] = HANDLER_ORDER): ProbeHandler | undefined {
  const given = order.filter((key) => probe[key] !== undefined && probe[key] !== null);
  if (given.length === 0) {
    r.add(field, "Required value: must specify a handler type");
    return undefined;
  }
  for (const extra of given.slice(1)) r.add(`${field}.${extra}`, "Forbidden: may not specify more than 1 handler type");
  const key = given[0];
  const path = `${field}.${key}`;
  const body = r.object(probe[key], path, true) ?? {};
  switch (key) {
    case "exec": {
      r.onlyFields(body, path, new Set(["command"]));
      const command = r.stringList(body.command, `${path}.command`);
      if (command.length === 0) r.add(`${path}.command`, "Required value");
      return { tag: "exec", val: command };
    }
    case "httpGet": {
      r.onlyFields(body, path, new Set(["path", "port", "host", "scheme", "httpHeaders"]));
      const scheme = r.string(body.scheme, `${path}.scheme`) || "HTTP";
      if (!SCHEMES.includes(scheme)) r.add(`${path}.scheme`, `Unsupported value: "${scheme}": supported values: "HTTP", "HTTPS"`);
      const headers = r.array(body.httpHeaders, `${path}.httpHeaders`).map((h, i) => {
        const header = r.object(h, `${path}.httpHeaders[${i}]`, true) ?? {};
        const name = r.string(header.name, `${path}.httpHeaders[${i}].name`, true) ?? "";
        if (!HEADER_NAME.test(name)) {
          r.add(`${path}.httpHeaders[${i}].name`, `Invalid value: "${name}": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')`);
        }
        return { name, value: r.string(header.value, `${path}.httpHeaders[${i}].value`) ?? "" };
      });
      return {
        tag: "http-get",
        val: {
          scheme,
          host: r.string(body.host, `${path}.host`) ?? "",
          port: portOf(r, body.port, `${path}.port`, portNames),
          path: r.string(body.path, `${path}.path`) || "/",
          headers,
        },
      };
    }
    case "tcpSocket":
      r.onlyFields(body, path, new Set(["port", "host"]));
      return { tag: "tcp-socket", val: { host: r.string(body.host, `${path}.host`) ?? "", port: portOf(r, body.port, `${path}.port`, portNames) } };
    case "grpc": {
      r.onlyFields(body, path, new Set(["port", "service"]));
      const port = r.integer(body.port, `${path}.port`, INT32_MIN, INT32_MAX);
      if (port === undefined) r.add(`${path}.port`, "Required value");
      else if (port < 1 || port > 65535) r.add(`${path}.port`, `Invalid value: ${port}: must be between 1 and 65535, inclusive`);
      const service = r.string(body.service, `${path}.service`);
      return { tag: "grpc", val: { port: port ?? 0, service: service ?? undefined } };
    }
    case "sleep": {
      r.onlyFields(body, path, new Set(["seconds"]));
      const seconds = r.integer(body.seconds, `${path}.seconds`);
      if (seconds === undefined) r.add(`${path}.seconds`, "Required value");
      else if (seconds < 0) r.add(`${path}.seconds`, `Invalid value: ${seconds}: must be non-negative`);
      return { tag: "sleep", val: BigInt(seconds ?? 0) };
    }
  }
  return undefined;
}

/** `lifecycle`: the postStart and preStop hooks. */
export function lifecycleOf(r: FieldReader, value: unknown, field: string, portNames: ReadonlySet<string>): { postStart?: ProbeHandler; preStop?: ProbeHandler } {
  if (value === undefined || value === null) return {};
  const lifecycle = r.object(value, field, true);
  if (!lifecycle) return {};
  r.onlyFields(lifecycle, field, new Set(["postStart", "preStop"]), new Set(["stopSignal"]));
  const hook = (key: "postStart" | "preStop") => {
    const body = lifecycle[key];
    if (body === undefined || body === null) return undefined;
    const handler = r.object(body, `${field}.${key}`, true);
    if (!handler) return undefined;
    r.onlyFields(handler, `${field}.${key}`, new Set(HOOK_HANDLERS));
    return handlerOf(r, handler, `${field}.${key}`, portNames, HOOK_HANDLERS);
  };
  return { postStart: hook("postStart"), preStop: hook("preStop") };
}

/** One probe of a container, defaulted and checked; undefined when absent or invalid. */
export function probeOf(r: FieldReader, value: unknown, field: string, kind: ProbeKind, portNames: ReadonlySet<string>): Probe | undefined {
  if (value === undefined || value === null) return undefined;
  const probe = r.object(value, field, true);
  if (!probe) return undefined;
  r.onlyFields(probe, field, PROBE_FIELDS);
  const handler = handlerOf(r, probe, field, portNames);
  const successThreshold = count(r, probe.successThreshold, `${field}.successThreshold`, 1);
  if (kind !== "readinessProbe" && successThreshold !== 1) r.add(`${field}.successThreshold`, `Invalid value: ${successThreshold}: must be 1`);
  const grace = r.integer(probe.terminationGracePeriodSeconds, `${field}.terminationGracePeriodSeconds`);
  if (grace !== undefined && grace <= 0) r.add(`${field}.terminationGracePeriodSeconds`, `Invalid value: ${grace}: must be greater than 0`);
  if (grace !== undefined && kind === "readinessProbe") r.add(`${field}.terminationGracePeriodSeconds`, "Invalid value: " + grace + ": must not be set for readinessProbes");
  const periodSeconds = r.integer(probe.periodSeconds, `${field}.periodSeconds`, INT32_MIN, INT32_MAX);
  if (periodSeconds === 0) r.add(`${field}.periodSeconds`, "Invalid value: 0: must be greater than 0");
  const initialDelaySeconds = r.integer(probe.initialDelaySeconds, `${field}.initialDelaySeconds`, INT32_MIN, INT32_MAX) ?? 0;
  if (initialDelaySeconds < 0) r.add(`${field}.initialDelaySeconds`, `Invalid value: ${initialDelaySeconds}: must be greater than or equal to 0`);
  if (!handler) return undefined;
  return {
    handler,
    initialDelaySeconds,
    timeoutSeconds: count(r, probe.timeoutSeconds, `${field}.timeoutSeconds`, 1),
    periodSeconds: count(r, periodSeconds, `${field}.periodSeconds`, 10),
    successThreshold,
    failureThreshold: count(r, probe.failureThreshold, `${field}.failureThreshold`, 3),
    terminationGracePeriodSeconds: grace === undefined ? undefined : BigInt(grace),
  };
}

/** `spec.readinessGates`, each with the status of its condition in `status.conditions`. */
export function readinessGatesOf(r: FieldReader, value: unknown, status: JsonObject | undefined): { conditionType: string; status: string }[] {
  const conditions = Array.isArray(status?.conditions) ? (status!.conditions as JsonObject[]) : [];
  return r.array(value, "spec.readinessGates").map((g, i) => {
    const gate = r.object(g, `spec.readinessGates[${i}]`, true) ?? {};
    const conditionType = r.string(gate.conditionType, `spec.readinessGates[${i}].conditionType`, true) ?? "";
    const condition = conditions.find((c) => c && typeof c === "object" && (c as JsonObject).type === conditionType);
    return { conditionType, status: condition ? String(condition.status ?? "") : "" };
  });
}

// Runs one probe the core asked for (upstream pkg/probe: exec, http, tcp, grpc) and says what it
// found. No decision is made here: thresholds, schedules and what a failure means are the core's.
import http from "node:http";
import https from "node:https";
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import type { ProbeHandler, ProbeOutcome, ProbeRequest } from "../core/types.js";
import { GrpcCode, RuntimeError, type Runtime } from "../cri/runtime.js";
import { KUBELET_VERSION } from "../cluster/node-object.js";
import { bytesField, readVarintField } from "../common/proto-wire.js";
import type { ExecSlots } from "./exec-slots.js";

/** Upstream keeps at most this much of a probe's output or response body. */
const MAX_OUTPUT_BYTES = 10 * 1024;
/** Upstream tries a probe that errors this many times before giving the error. */
const MAX_ATTEMPTS = 3;
const MAX_REDIRECTS = 10;
const USER_AGENT = `kube-probe/${KUBELET_VERSION.replace(/^v/, "").split(".").slice(0, 2).join(".")}`;

export interface ProbeFinding {
  outcome: ProbeOutcome;
  output: string;
}

export interface ProbeTarget {
  /** Where a probe without a host connects: the pod's IP (the node's for host-network pods). */
  podIp: string;
  runtime: Runtime;
  /** The node's bound on exec probes at once (none: unbounded). */
  execSlots?: ExecSlots;
}

function bounded(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= MAX_OUTPUT_BYTES ? text : bytes.subarray(0, MAX_OUTPUT_BYTES).toString();
}

/** Runs the probe, retrying one that errors (not one that fails), as upstream does. */
export async function runProbe(request: ProbeRequest, target: ProbeTarget): Promise<ProbeFinding> {
  let finding: ProbeFinding = { outcome: "error", output: "" };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    finding = await runOnce(request.handler, request, target);
    if (finding.outcome !== "error") break;
  }
  return { outcome: finding.outcome, output: bounded(finding.output) };
}

function runOnce(handler: ProbeHandler, request: ProbeRequest, target: ProbeTarget): Promise<ProbeFinding> {
  const timeoutMs = Math.max(1, request.timeoutSeconds) * 1000;
  switch (handler.tag) {
    case "exec":
      return execProbe(target.runtime, request.containerId, handler.val, request.timeoutSeconds, target.execSlots);
    case "http-get": {
      const { scheme, host, port, path, headers } = handler.val;
      return httpProbe(scheme.toLowerCase(), host || target.podIp, port, path, headers, timeoutMs);
    }
    case "tcp-socket":
      return tcpProbe(handler.val.host || target.podIp, handler.val.port, timeoutMs);
    case "grpc":
      return grpcProbe(target.podIp, handler.val.port, handler.val.service ?? "", timeoutMs);
    default:
      return Promise.resolve({ outcome: "unknown", output: `a ${handler.tag} handler cannot probe` });
  }
}

function isTimeout(error: unknown): boolean {
  if (error instanceof RuntimeError && error.grpcCode === GrpcCode.DEADLINE_EXCEEDED) return true;
  return /timeout|deadline exceeded|timed out/i.test(String((error as Error)?.message ?? error));
}

async function execProbe(runtime: Runtime, containerId: string, command: string[], timeoutSeconds: number, slots?: ExecSlots): Promise<ProbeFinding> {
  // A command that ran past its timeout fails the probe (upstream's ExecProbeTimeout, GA).
  const timedOut: ProbeFinding = { outcome: "failure", output: `command timed out: "${command.join(" ")}" timed out after ${timeoutSeconds}s` };
  const deadlineMs = Date.now() + Math.max(1, timeoutSeconds) * 1000;
  if (slots && !(await slots.acquire(deadlineMs))) return timedOut;
  try {
    // The wait for a slot was part of the timeout: the command gets what is left (whole seconds, as CRI takes them).
    const leftSeconds = slots ? Math.max(1, Math.ceil((deadlineMs - Date.now()) / 1000)) : timeoutSeconds;
    const r = await runtime.execSync(containerId, command, leftSeconds);
    const output = Buffer.concat([r.stdout, r.stderr]).toString();
    return { outcome: r.exitCode === 0 ? "success" : "failure", output };
  } catch (error) {
    if (isTimeout(error)) return timedOut;
    return { outcome: "error", output: (error as Error).message };
  } finally {
    slots?.release();
  }
}

function hostPort(host: string, port: string): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Go's words for a dial error, which is what users of the kubelet read in the event. */
function dialError(address: string, error: NodeJS.ErrnoException): string {
  if (error.code === "ECONNREFUSED") return `dial tcp ${address}: connect: connection refused`;
  if (error.code === "EHOSTUNREACH") return `dial tcp ${address}: connect: no route to host`;
  if (error.code === "ENETUNREACH") return `dial tcp ${address}: connect: network is unreachable`;
  return `dial tcp ${address}: ${error.message}`;
}

function httpProbe(scheme: string, host: string, port: string, path: string, headers: { name: string; value: string }[], timeoutMs: number): Promise<ProbeFinding> {
  const requestHeaders: Record<string, string> = {};
  for (const h of headers) requestHeaders[h.name] = h.value;
  const lower = new Set(Object.keys(requestHeaders).map((k) => k.toLowerCase()));
  if (!lower.has("user-agent")) requestHeaders["User-Agent"] = USER_AGENT;
  if (!lower.has("accept")) requestHeaders["Accept"] = "*/*";
  const target = new URL(`${scheme}://${hostPort(host, port)}${path.startsWith("/") ? path : `/${path}`}`);
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const get = (url: URL, redirects: number): void => {
      const client = url.protocol === "https:" ? https : http;
      const remaining = Math.max(1, deadline - Date.now());
      const req = client.get(url, { headers: requestHeaders, timeout: remaining, rejectUnauthorized: false }, (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location && redirects < MAX_REDIRECTS) {
          const next = new URL(location, url);
          // Redirects are followed on the same host only; another host ends them with a warning.
          if (next.hostname === url.hostname) {
            res.resume();
            get(next, redirects + 1);
            return;
          }
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < MAX_OUTPUT_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        res.on("end", () => {
          const body = Buffer.concat(chunks).subarray(0, MAX_OUTPUT_BYTES).toString();
          if (status >= 200 && status < 300) resolve({ outcome: "success", output: body });
          else if (status >= 300 && status < 400) resolve({ outcome: "warning", output: `Probe terminated redirects, Response body: ${body}` });
          else resolve({ outcome: "failure", output: `HTTP probe failed with statuscode: ${status}` });
        });
        res.on("error", (error) => resolve({ outcome: "failure", output: `Get "${url.href}": ${error.message}` }));
      });
      req.on("timeout", () => {
        req.destroy();
        resolve({ outcome: "failure", output: `Get "${url.href}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
      });
      req.on("error", (error: NodeJS.ErrnoException) => resolve({ outcome: "failure", output: `Get "${url.href}": ${dialError(url.host, error)}` }));
    };
    get(target, 0);
  });
}

function tcpProbe(host: string, port: string, timeoutMs: number): Promise<ProbeFinding> {
  const address = hostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ outcome: "failure", output: `dial tcp ${address}: i/o timeout` });
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome: "success", output: "" });
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ outcome: "failure", output: dialError(address, error) });
    });
  });
}

/** grpc.health.v1 HealthCheckRequest { string service = 1; }: empty when no service is named. */
function encodeHealthRequest(service: string): Buffer {
  return service === "" ? Buffer.alloc(0) : bytesField(1, service);
}

/** HealthCheckResponse { ServingStatus status = 1; }: the status number, 0 when absent. */
function decodeHealthStatus(bytes: Buffer): number {
  return readVarintField(bytes, 1) ?? 0;
}

const SERVING_STATUS = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeFinding> {
  const address = hostPort(host, String(port));
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    const deadline = new Date(Date.now() + timeoutMs);
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (request: Buffer) => request,
      (response: Buffer) => response,
      encodeHealthRequest(service),
      new grpc.Metadata({}),
      { deadline },
      (error, response) => {
        client.close();
        if (error) {
          const code = (error as grpc.ServiceError).code;
          if (code === grpc.status.UNIMPLEMENTED) {
            resolve({ outcome: "failure", output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${error.details}` });
          } else if (code === grpc.status.DEADLINE_EXCEEDED) {
            resolve({ outcome: "failure", output: `timeout: health rpc did not complete within ${timeoutMs / 1000}s` });
          } else if (code === grpc.status.UNAVAILABLE) {
            resolve({ outcome: "failure", output: `timeout: failed to connect service "${address}" within ${timeoutMs / 1000}s: ${error.details}` });
          } else {
            resolve({ outcome: "failure", output: `error: health rpc probe failed: ${error.details}` });
          }
          return;
        }
        const status = decodeHealthStatus(response ?? Buffer.alloc(0));
        if (status === 1) resolve({ outcome: "success", output: "" });
        else resolve({ outcome: "failure", output: `service unhealthy (responded with "${SERVING_STATUS[status] ?? status}")` });
      },
    );
  });
}

// Canonical-ABI lift/lower of the probe family: container-port, http-header, the handler records,
// probe-handler, probe (and option<probe>), readiness-gate, probe-request and probe-result.
import {
  ContainerPort,
  GrpcAction,
  HandlerTag,
  HookRequest,
  HttpGetAction,
  HttpHeader,
  Probe,
  ProbeHandler,
  ProbeRequest,
  ProbeResult,
  ReadinessGate,
  TcpSocketAction,
} from "../core/probe-types";
import { liftList, liftString, liftStringElement, lowerList, lowerString, lowerStringElement } from "./memory";

// container-port { name @0, container-port s32 @8, host-port s32 @12, protocol @16, host-ip @24 }: 32, align 4.
export const CONTAINER_PORT_SIZE: usize = 32;
// http-header { name @0, value @8 }: 16, align 4. readiness-gate has the same shape.
const HTTP_HEADER_SIZE: usize = 16;
export const READINESS_GATE_SIZE: usize = 16;
// http-get-action { scheme @0, host @8, port @16, path @24, headers @32 }: 40, align 4.
// tcp-socket-action { host @0, port @8 }: 16, align 4.
// grpc-action { port s32 @0, service: option<string> @4 (tag u8, string @8) }: 16, align 4.
// probe-handler: tag u8 @0, payload @8 (largest http-get-action, 40; sleep's s64 aligns it to 8): 48, align 8.
const HANDLER_PAYLOAD_OFFSET: usize = 8;
const PROBE_HANDLER_SIZE: usize = 48;
// probe { handler @0 (48), initial-delay-seconds @48, timeout-seconds @52, period-seconds @56,
//   success-threshold @60, failure-threshold @64,
//   termination-grace-period-seconds: option<s64> @72 (tag u8, s64 @+8) }: 88, align 8.
// option<probe>: tag u8 @0, probe @8: 96, align 8.
export const OPTION_PROBE_SIZE: usize = 96;
// probe-request { container-id @0, container-name @8, probe-type u8 @16, handler @24 (48),
//   timeout-seconds s32 @72 }: 80, align 8.
export const PROBE_REQUEST_SIZE: usize = 80;
// probe-result { action-id u64 @0, outcome u8 @8, output @12 }: 24, align 8.
export const PROBE_RESULT_SIZE: usize = 24;

export function liftContainerPort(ptr: usize): ContainerPort {
  return new ContainerPort(liftString(ptr), load<i32>(ptr + 8), load<i32>(ptr + 12), liftString(ptr + 16), liftString(ptr + 24));
}

export function lowerContainerPort(ptr: usize, port: ContainerPort): void {
  lowerString(ptr, port.name);
  store<i32>(ptr + 8, port.containerPort);
  store<i32>(ptr + 12, port.hostPort);
  lowerString(ptr + 16, port.protocol);
  lowerString(ptr + 24, port.hostIp);
}

function liftHttpHeader(ptr: usize): HttpHeader {
  return new HttpHeader(liftString(ptr), liftString(ptr + 8));
}

function lowerHttpHeader(ptr: usize, header: HttpHeader): void {
  lowerString(ptr, header.name);
  lowerString(ptr + 8, header.value);
}

export function liftReadinessGate(ptr: usize): ReadinessGate {
  return new ReadinessGate(liftString(ptr), liftString(ptr + 8));
}

export function lowerReadinessGate(ptr: usize, gate: ReadinessGate): void {
  lowerString(ptr, gate.conditionType);
  lowerString(ptr + 8, gate.status);
}

function liftProbeHandler(ptr: usize): ProbeHandler {
  const handler = new ProbeHandler();
  const tag = load<u8>(ptr);
  const payload = ptr + HANDLER_PAYLOAD_OFFSET;
  handler.tag = tag;
  switch (tag) {
    case HandlerTag.Exec:
      handler.command = liftList<string>(payload, 8, liftStringElement);
      break;
    case HandlerTag.HttpGet: {
      const get = new HttpGetAction();
      get.scheme = liftString(payload);
      get.host = liftString(payload + 8);
      get.port = liftString(payload + 16);
      get.path = liftString(payload + 24);
      get.headers = liftList<HttpHeader>(payload + 32, HTTP_HEADER_SIZE, liftHttpHeader);
      handler.httpGet = get;
      break;
    }
    case HandlerTag.TcpSocket:
      handler.tcpSocket = new TcpSocketAction(liftString(payload), liftString(payload + 8));
      break;
    case HandlerTag.Grpc: {
      const grpc = new GrpcAction();
      grpc.port = load<i32>(payload);
      grpc.service = load<u8>(payload + 4) != 0 ? liftString(payload + 8) : null;
      handler.grpc = grpc;
      break;
    }
    case HandlerTag.Sleep:
      handler.sleepSeconds = load<i64>(payload);
      break;
    default:
      assert(false, "abi: unknown probe-handler case");
  }
  return handler;
}

function lowerProbeHandler(ptr: usize, handler: ProbeHandler): void {
  const payload = ptr + HANDLER_PAYLOAD_OFFSET;
  store<u8>(ptr, <u8>handler.tag);
  switch (handler.tag) {
    case HandlerTag.Exec:
      lowerList<string>(payload, handler.command, 8, lowerStringElement);
      break;
    case HandlerTag.HttpGet: {
      const get = changetype<HttpGetAction>(handler.httpGet);
      lowerString(payload, get.scheme);
      lowerString(payload + 8, get.host);
      lowerString(payload + 16, get.port);
      lowerString(payload + 24, get.path);
      lowerList<HttpHeader>(payload + 32, get.headers, HTTP_HEADER_SIZE, lowerHttpHeader);
      break;
    }
    case HandlerTag.TcpSocket: {
      const tcp = changetype<TcpSocketAction>(handler.tcpSocket);
      lowerString(payload, tcp.host);
      lowerString(payload + 8, tcp.port);
      break;
    }
    case HandlerTag.Grpc: {
      const grpc = changetype<GrpcAction>(handler.grpc);
      store<i32>(payload, grpc.port);
      const service = grpc.service;
      store<u8>(payload + 4, <u8>(service !== null ? 1 : 0));
      if (service !== null) lowerString(payload + 8, service);
      break;
    }
    case HandlerTag.Sleep:
      store<i64>(payload, handler.sleepSeconds);
      break;
    default:
      assert(false, "abi: unknown probe-handler case");
  }
}

/// Lifts the option<probe> stored at `ptr`.
export function liftOptionProbe(ptr: usize): Probe | null {
  if (load<u8>(ptr) == 0) return null;
  const at = ptr + 8;
  const probe = new Probe();
  probe.handler = liftProbeHandler(at);
  probe.initialDelaySeconds = load<i32>(at + 48);
  probe.timeoutSeconds = load<i32>(at + 52);
  probe.periodSeconds = load<i32>(at + 56);
  probe.successThreshold = load<i32>(at + 60);
  probe.failureThreshold = load<i32>(at + 64);
  probe.hasGracePeriod = load<u8>(at + 72) != 0;
  probe.terminationGracePeriodSeconds = probe.hasGracePeriod ? load<i64>(at + 80) : 0;
  return probe;
}

export function lowerOptionProbe(ptr: usize, probe: Probe | null): void {
  if (probe === null) {
    store<u8>(ptr, 0);
    return;
  }
  store<u8>(ptr, 1);
  const at = ptr + 8;
  lowerProbeHandler(at, probe.handler);
  store<i32>(at + 48, probe.initialDelaySeconds);
  store<i32>(at + 52, probe.timeoutSeconds);
  store<i32>(at + 56, probe.periodSeconds);
  store<i32>(at + 60, probe.successThreshold);
  store<i32>(at + 64, probe.failureThreshold);
  store<u8>(at + 72, <u8>(probe.hasGracePeriod ? 1 : 0));
  store<i64>(at + 80, probe.hasGracePeriod ? probe.terminationGracePeriodSeconds : 0);
}

/// Lifts the option<probe-handler> stored at `ptr` (tag u8, handler @8; 56 bytes).
export function liftOptionHandler(ptr: usize): ProbeHandler | null {
  return load<u8>(ptr) != 0 ? liftProbeHandler(ptr + 8) : null;
}

export function lowerOptionHandler(ptr: usize, handler: ProbeHandler | null): void {
  store<u8>(ptr, <u8>(handler !== null ? 1 : 0));
  if (handler !== null) lowerProbeHandler(ptr + 8, handler);
}

// hook-request { container-id @0, container-name @8, hook-type u8 @16, handler @24 (48),
//   timeout-seconds s64 @72 }: 80, align 8.
export function liftHookRequest(ptr: usize): HookRequest {
  const request = new HookRequest();
  request.containerId = liftString(ptr);
  request.containerName = liftString(ptr + 8);
  request.hookType = load<u8>(ptr + 16);
  request.handler = liftProbeHandler(ptr + 24);
  request.timeoutSeconds = load<i64>(ptr + 72);
  return request;
}

export function lowerHookRequest(ptr: usize, request: HookRequest): void {
  lowerString(ptr, request.containerId);
  lowerString(ptr + 8, request.containerName);
  store<u8>(ptr + 16, <u8>request.hookType);
  lowerProbeHandler(ptr + 24, request.handler);
  store<i64>(ptr + 72, request.timeoutSeconds);
}

export function liftProbeRequest(ptr: usize): ProbeRequest {
  const request = new ProbeRequest();
  request.containerId = liftString(ptr);
  request.containerName = liftString(ptr + 8);
  request.probeType = load<u8>(ptr + 16);
  request.handler = liftProbeHandler(ptr + 24);
  request.timeoutSeconds = load<i32>(ptr + 24 + PROBE_HANDLER_SIZE);
  return request;
}

export function lowerProbeRequest(ptr: usize, request: ProbeRequest): void {
  lowerString(ptr, request.containerId);
  lowerString(ptr + 8, request.containerName);
  store<u8>(ptr + 16, <u8>request.probeType);
  lowerProbeHandler(ptr + 24, request.handler);
  store<i32>(ptr + 24 + PROBE_HANDLER_SIZE, request.timeoutSeconds);
}

export function liftProbeResult(ptr: usize): ProbeResult {
  return new ProbeResult(load<u64>(ptr), load<u8>(ptr + 8), liftString(ptr + 12));
}

export function lowerProbeResult(ptr: usize, result: ProbeResult): void {
  store<u64>(ptr, result.actionId);
  store<u8>(ptr + 8, <u8>result.outcome);
  lowerString(ptr + 12, result.output);
}

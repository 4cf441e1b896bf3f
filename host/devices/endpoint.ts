// One registered device plugin: a gRPC client on its socket, the ListAndWatch stream kept open,
// and the calls the device manager makes (Allocate, PreStartContainer) with deadlines.
import * as grpc from "@grpc/grpc-js";
import { bytesField, readBytesField } from "../common/proto-wire.js";
import { services, type ContainerAllocateResponse, type DeviceMessage } from "./plugin-api.js";

/** A plugin's answer may not keep a pod waiting longer than this. */
const CALL_DEADLINE_MS = 30_000;
/** Largest answer a plugin may send (a device list, an Allocate answer). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export interface EndpointEvents {
  devices(list: DeviceMessage[]): void;
  ended(why: string): void;
}

type Client = grpc.Client & Record<string, any>;

export class Endpoint {
  private client: Client;
  private stream: grpc.ClientReadableStream<{ devices: DeviceMessage[] }> | undefined;
  private closed = false;
  readonly preStartRequired: boolean;

  constructor(readonly resource: string, readonly socket: string, options: { preStartRequired?: boolean }, private events: EndpointEvents) {
    this.preStartRequired = options.preStartRequired === true;
    const Ctor = services().devicePlugin;
    this.client = new Ctor(`unix:${socket}`, grpc.credentials.createInsecure(), {
      "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    }) as Client;
  }

  listAndWatch(): void {
    const stream = this.client.ListAndWatch({}) as grpc.ClientReadableStream<{ devices: DeviceMessage[] }>;
    this.stream = stream;
    stream.on("data", (message) => this.events.devices(Array.isArray(message.devices) ? message.devices : []));
    stream.on("error", (error: Error) => this.finish(error.message));
    stream.on("end", () => this.finish("stream ended"));
  }

  private finish(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
    this.events.ended(why);
  }

  close(): void {
    this.closed = true;
    this.stream?.cancel();
    this.client.close();
  }

  private unary<T>(method: string, request: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client[method](request, { deadline: Date.now() + CALL_DEADLINE_MS }, (error: grpc.ServiceError | null, response: T) => {
        if (error) reject(new Error(`device plugin ${method} rpc failed with err: ${error.details || error.message}`));
        else resolve(response);
      });
    });
  }

  /** Allocate for one container: the answer, and its protobuf bytes for the checkpoint. */
  async allocate(deviceIds: string[]): Promise<{ response: ContainerAllocateResponse; bytes: Buffer }> {
    const answer = await this.unary<{ containerResponses: ContainerAllocateResponse[] }>("Allocate", { containerRequests: [{ devicesIds: deviceIds }] });
    const response = answer.containerResponses?.[0];
    if (!response) throw new Error(`device plugin Allocate of ${this.resource} answered no container response`);
    return { response, bytes: Endpoint.encodeContainerResponse(response) };
  }

  async preStart(deviceIds: string[]): Promise<void> {
    await this.unary("PreStartContainer", { devicesIds: deviceIds });
  }

  /** A ContainerAllocateResponse's protobuf bytes (the checkpoint's AllocResp). */
  static encodeContainerResponse(response: ContainerAllocateResponse): Buffer {
    const serialize = services().devicePlugin.service.Allocate.responseSerialize;
    const whole = serialize({ containerResponses: [response] });
    return readBytesField(whole, 1) ?? Buffer.alloc(0);
  }

  static decodeContainerResponse(bytes: Buffer): ContainerAllocateResponse {
    const deserialize = services().devicePlugin.service.Allocate.responseDeserialize;
    const whole = deserialize(bytesField(1, bytes)) as { containerResponses: ContainerAllocateResponse[] };
    return whole.containerResponses?.[0] ?? {};
  }
}

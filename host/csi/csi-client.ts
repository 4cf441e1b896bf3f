// A CSI driver's node side over gRPC on its unix socket: the calls a node agent makes, with
// deadlines, and errors in the words upstream's events show (`rpc error: code = X desc = Y`).
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { CSI_PROTO_PATH } from "../common/asset-paths.js";

const CALL_DEADLINE_MS = 2 * 60 * 1000;
const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true };

let loaded: { identity: grpc.ServiceClientConstructor; node: grpc.ServiceClientConstructor } | undefined;

function services() {
  if (loaded) return loaded;
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(CSI_PROTO_PATH, LOADER_OPTIONS)) as any;
  loaded = { identity: pkg.csi.v1.Identity, node: pkg.csi.v1.Node };
  return loaded;
}

/** A CSI call that failed, worded as grpc-go prints a status. */
export class CsiError extends Error {}

export interface NodeInfo {
  nodeId: string;
  maxVolumesPerNode: number;
  topologySegments: Record<string, string>;
}

export interface VolumeRequest {
  volumeId: string;
  targetPath: string;
  stagingTargetPath?: string;
  readonly: boolean;
  fsType: string;
  volumeContext: Record<string, string>;
  publishContext?: Record<string, string>;
}

const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).filter(([, v]) => typeof v === "number").map(([k, v]) => [v, k])) as Record<number, string>;

function camelCode(code: number): string {
  const name = CODE_NAMES[code] ?? "Unknown";
  return name.toLowerCase().split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

export class CsiClient {
  private node: grpc.Client & Record<string, any>;

  constructor(readonly socket: string) {
    this.node = new (services().node)(`unix:${socket}`, grpc.credentials.createInsecure(), { "grpc.max_receive_message_length": 1024 * 1024 }) as any;
  }

  close(): void {
    this.node.close();
  }

  private call<T>(method: string, request: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.node[method](request, { deadline: Date.now() + CALL_DEADLINE_MS }, (error: grpc.ServiceError | null, answer: T) => {
        if (error) reject(new CsiError(`rpc error: code = ${camelCode(error.code)} desc = ${error.details}`));
        else resolve(answer);
      });
    });
  }

  async nodeGetInfo(): Promise<NodeInfo> {
    const answer = await this.call<{ nodeId: string; maxVolumesPerNode: number; accessibleTopology?: { segments?: Record<string, string> } | null }>("NodeGetInfo", {});
    return { nodeId: String(answer.nodeId ?? ""), maxVolumesPerNode: Number(answer.maxVolumesPerNode ?? 0), topologySegments: answer.accessibleTopology?.segments ?? {} };
  }

  /** Whether the driver stages volumes (STAGE_UNSTAGE_VOLUME). */
  async stagesVolumes(): Promise<boolean> {
    const answer = await this.call<{ capabilities: { rpc?: { type: string } }[] }>("NodeGetCapabilities", {});
    return (answer.capabilities ?? []).some((c) => c.rpc?.type === "STAGE_UNSTAGE_VOLUME");
  }

  private capability(request: VolumeRequest) {
    return {
      mount: { fsType: request.fsType, mountFlags: [] },
      accessMode: { mode: request.readonly ? "SINGLE_NODE_READER_ONLY" : "SINGLE_NODE_WRITER" },
    };
  }

  async stage(request: VolumeRequest): Promise<void> {
    await this.call("NodeStageVolume", {
      volumeId: request.volumeId, publishContext: request.publishContext ?? {}, stagingTargetPath: request.stagingTargetPath,
      volumeCapability: this.capability(request), secrets: {}, volumeContext: request.volumeContext,
    });
  }

  async unstage(volumeId: string, stagingTargetPath: string): Promise<void> {
    await this.call("NodeUnstageVolume", { volumeId, stagingTargetPath });
  }

  async publish(request: VolumeRequest): Promise<void> {
    await this.call("NodePublishVolume", {
      volumeId: request.volumeId, publishContext: request.publishContext ?? {}, stagingTargetPath: request.stagingTargetPath ?? "",
      targetPath: request.targetPath, volumeCapability: this.capability(request), readonly: request.readonly, secrets: {},
      volumeContext: request.volumeContext,
    });
  }

  async unpublish(volumeId: string, targetPath: string): Promise<void> {
    await this.call("NodeUnpublishVolume", { volumeId, targetPath });
  }
}

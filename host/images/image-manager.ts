// A container's image as its pull policy wants it (upstream's EnsureImageExists, v1.36): present
// and usable by this pod (its credentials checked against who pulled it), else pulled through CRI
// with the pod's secrets and then the node's credentials, one pull at a time by default
// (serializeImagePulls) or up to maxParallelImagePulls, and a pull under way shared by every pod
// asking for the same image with the same credentials. The events say what happened in
// upstream's words; no credential ever reaches a log line, an event or a status.
import type { Logger } from "../common/log.js";
import { formatGoDuration } from "../config/go-duration.js";
import { RuntimeError, type ImageUser, type Runtime } from "../cri/runtime.js";
import { readNodeCredentials, type DockerAuths } from "./node-credentials.js";
import { trackedCredentialsFor, type TrackedCredential } from "./pull-credentials.js";
import { PulledRecords, type SecretRecord } from "./pulled-records.js";
import { PullQueue } from "./pull-queue.js";

/** The pull failed: the message is the runtime's, as upstream's status and event carry it. */
export class ImagePullError extends Error {}
/** Policy Never and the image absent (or present but not this pod's to use). */
export class ImageNeverPullError extends Error {}

/** A runtime's refusal as the kubelet's status and event carry it: the runtime's own words. */
function pullFailureText(error: unknown): string {
  if (!(error instanceof RuntimeError)) return String((error as Error)?.message ?? error);
  return error.message.startsWith(`${error.call}: `) ? error.message.slice(error.call.length + 2) : error.message;
}

const goDurationOfMs = (ms: number) => formatGoDuration(BigInt(Math.max(0, Math.trunc(ms))) * 1_000_000n);

/** What the image manager needs of the pod asking. */
export interface PodImageRequest {
  podName: string;
  podNamespace: string;
  podUid: string;
  image: string;
  /** As the container says; "" takes the API's default for the image. */
  pullPolicy: string;
  /** The pod's imagePullSecrets, fetched (those that could not be are left out and logged). */
  secrets: Record<string, any>[];
}

export interface ImageManagerOptions {
  runtime: Runtime;
  log: Logger;
  /** The agent's root directory: the node's config.json is looked for there first, records kept under it. */
  rootDir?: string;
  serializeImagePulls?: boolean;
  maxParallelImagePulls?: number;
  records?: PulledRecords;
  /** The node's credentials (read from the kubelet's places when not given). */
  nodeCredentials?: () => DockerAuths;
  now?: () => number;
}

/** The Pod API's default pull policy: Always for `:latest` or no tag (and no digest), else IfNotPresent. */
export function defaultPullPolicy(image: string): string {
  if (image.includes("@")) return "IfNotPresent";
  const lastPart = image.slice(image.lastIndexOf("/") + 1);
  const colon = lastPart.lastIndexOf(":");
  const tag = colon >= 0 ? lastPart.slice(colon + 1) : "";
  return tag === "" || tag === "latest" ? "Always" : "IfNotPresent";
}

export class ImageManager {
  private readonly queue: PullQueue;
  readonly records: PulledRecords;
  private readonly now: () => number;
  /** Pulls under way, by image and credentials. */
  private readonly inFlight = new Map<string, Promise<{ pullMs: number }>>();

  constructor(private readonly options: ImageManagerOptions) {
    const parallel = options.serializeImagePulls === false ? (options.maxParallelImagePulls ?? Infinity) : 1;
    this.queue = new PullQueue(parallel);
    this.records = options.records ?? new PulledRecords(undefined);
    this.now = options.now ?? Date.now;
  }

  /**
   * Makes the image usable by the pod; `event` hears Pulling and Pulled. Returns who the image
   * runs as. Throws ImageNeverPullError or ImagePullError (the core turns those into the
   * container's waiting reason, its back-off and the Failed event).
   */
  /** The image present (pulled if it must be): who it runs as, and its ID (the runtime's image reference). */
  async ensure(request: PodImageRequest, event: (reason: string, message: string) => void): Promise<{ user: ImageUser; imageId: string }> {
    const { runtime, log } = this.options;
    const { image } = request;
    const policy = request.pullPolicy || defaultPullPolicy(image);
    const startedMs = this.now();
    // Worked out (the node's credential files read) only when a check or a pull needs them, once.
    let known: TrackedCredential[] | undefined;
    const credentials = () => (known ??= trackedCredentialsFor(image, request.secrets, this.nodeAuths()));
    if (policy !== "Always") {
      const present = await runtime.imageInfo(image);
      if (present && !this.records.mustAttemptPull(image, present.id, () => secretsOf(credentials()), startedMs)) {
        event("Pulled", `Container image "${image}" already present on machine and can be accessed by the pod`);
        return { user: present.user, imageId: present.id };
      }
      if (policy === "Never") throw new ImageNeverPullError(`Container image "${image}" is not present with pull policy of Never`);
    }
    const pod = `${request.podNamespace}/${request.podName}`;
    log.log("info", "Pulling image", { pod, image });
    event("Pulling", `Pulling image "${image}"`);
    // Pods asking for the same image with the same credentials while it is being pulled wait for
    // that pull instead of queueing their own: twenty pods of a new image pull it once.
    const tried = credentials();
    const key = `${image}\u0000${tried.map((c) => c.hash).join(",")}`;
    let inFlight = this.inFlight.get(key);
    if (!inFlight) {
      inFlight = this.queue.run(() => this.pull(image, tried)).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, inFlight);
    }
    const pulled = await inFlight;
    const info = await runtime.imageInfo(image);
    const sizeBytes = info?.sizeBytes ?? 0;
    log.log("info", "Pulled image", { pod, image, pullMs: pulled.pullMs, sizeBytes });
    event("Pulled", `Successfully pulled image "${image}" in ${goDurationOfMs(pulled.pullMs)} (${goDurationOfMs(this.now() - startedMs)} including waiting). Image size: ${sizeBytes} bytes.`);
    return { user: info?.user ?? {}, imageId: info?.id ?? "" };
  }

  /** Each credential in turn until one works; none at all: anonymously. Records who pulled it. */
  private async pull(image: string, credentials: TrackedCredential[]): Promise<{ pullMs: number }> {
    const started = this.now();
    this.records.recordIntent(image);
    const errors: string[] = [];
    for (const credential of credentials.length > 0 ? credentials : [undefined]) {
      try {
        const imageRef = await this.options.runtime.pullImage(image, credential?.auth);
        const secret = credential?.secret ? { ...credential.secret, credentialHash: credential.hash } : undefined;
        this.records.recordPulled(image, imageRef, secret, this.now());
        return { pullMs: this.now() - started };
      } catch (error) {
        errors.push(pullFailureText(error));
      }
    }
    this.records.pullFailed(image);
    // One failure reads as itself; several as Go's aggregate error does.
    throw new ImagePullError(errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`);
  }

  private nodeAuths(): DockerAuths {
    if (this.options.nodeCredentials) return this.options.nodeCredentials();
    return this.options.rootDir ? readNodeCredentials(this.options.rootDir, this.options.log) : {};
  }
}

/** The pod's credentials that came from its secrets, as records compare them. */
function secretsOf(credentials: TrackedCredential[]): SecretRecord[] {
  return credentials.filter((c) => c.secret).map((c) => ({ ...c.secret!, credentialHash: c.hash }));
}

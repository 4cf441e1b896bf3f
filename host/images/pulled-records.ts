// Who may use an image the agent pulled (upstream's KubeletEnsureSecretPulledImages, beta and on
// since v1.35): a pull with a pod's secret is recorded by the image's ID with that secret's
// coordinates and its credential's hash; an image pulled anonymously or with the node's own
// credentials is open to every pod. A later pod whose policy is IfNotPresent (or Never) may use
// the present image only if one of its secrets matches the record; else it must pull again, so
// the registry checks its credentials. Records live as one small file per image under
// <root>/image_manager/pulled/, and an intent per pull in flight under .../pulling/ (an image
// found present after a crash mid-pull was the agent's, not preloaded).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { FILE_LIMITS, FileReadError, readBoundedText } from "../files/bounded-file.js";
import type { Logger } from "../common/log.js";
import { registryOf } from "./pull-credentials.js";
import type { VerificationPolicy } from "../config/kubelet-config.js";

export type { VerificationPolicy };


/** A secret as a record keeps it: where it is and its credential's hash. */
export interface SecretRecord {
  uid: string;
  namespace: string;
  name: string;
  credentialHash: string;
}

/** Who pulled an image (by name without tag or digest). */
export interface CredentialsRecord {
  nodePodsAccessible?: boolean;
  kubernetesSecrets?: SecretRecord[];
}

export interface PulledRecord {
  imageRef: string;
  lastUpdatedMs: number;
  credentialMapping: Record<string, CredentialsRecord>;
}

/** Upstream stops adding matching secrets to a record at this many. */
const SECRETS_WRITTEN_WHILE_MATCHING = 100;

/** An image's name without tag or digest, with its registry (`docker.io/library/busybox`). */
export function imageName(image: string): string {
  const { host, path: repo } = registryOf(image);
  return `${host}/${repo}`;
}

const fileNameOf = (key: string) => `sha256-${crypto.createHash("sha256").update(key).digest("hex")}`;

/** Whether `image` is in an allowlist of names and `name/*` prefixes. */
export function allowlisted(image: string, allowlist: string[]): boolean {
  const name = imageName(image);
  return allowlist.some((entry) => (entry.endsWith("/*") ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

export class PulledRecords {
  private readonly pulledDir?: string;
  private readonly pullingDir?: string;
  private readonly intents = new Map<string, number>();

  /** `dir`: <root>/image_manager (undefined: in memory only, for tests and the simulator). */
  constructor(
    dir: string | undefined,
    private readonly policy: VerificationPolicy = "NeverVerifyPreloadedImages",
    private readonly allowlist: string[] = [],
    private readonly log?: Logger,
    private readonly memory = new Map<string, PulledRecord>(),
  ) {
    if (dir) {
      this.pulledDir = path.join(dir, "pulled");
      this.pullingDir = path.join(dir, "pulling");
      for (const d of [this.pulledDir, this.pullingDir]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    }
  }

  /** Before a pull: the image is being pulled by the agent (kept until recordPulled or pullFailed). */
  recordIntent(image: string): void {
    this.intents.set(image, (this.intents.get(image) ?? 0) + 1);
    if (this.pullingDir) this.writeJson(this.pullingDir, fileNameOf(image), { image });
  }

  /** After a failed pull. */
  pullFailed(image: string): void {
    this.dropIntent(image);
  }

  /** After a successful pull: who pulled it (`secret` undefined: anonymously or with the node's credentials). */
  recordPulled(image: string, imageRef: string, secret: SecretRecord | undefined, nowMs: number): void {
    this.merge(image, imageRef, secret ? { kubernetesSecrets: [secret] } : { nodePodsAccessible: true }, nowMs);
    this.dropIntent(image);
  }

  /**
   * Whether a pod with `podSecrets` (those of its secrets whose credentials match the image) must
   * pull `image`, present as `imageRef`, before using it (upstream's MustAttemptImagePull).
   */
  mustAttemptPull(image: string, imageRef: string, podSecrets: SecretRecord[] | (() => SecretRecord[]), nowMs: number): boolean {
    if (imageRef === "") return true;
    const record = this.read(imageRef);
    const pulledByAgent = record !== undefined || (this.intents.get(image) ?? 0) > 0 || this.intentFileExists(image);
    if (!this.requiresVerification(image, pulledByAgent)) return false;
    if (!record) return true;
    const cached = record.credentialMapping[imageName(image)];
    if (!cached) return true;
    if (cached.nodePodsAccessible) return false;
    const secrets = cached.kubernetesSecrets ?? [];
    // The pod's credentials are looked at only now: most images are preloaded or open to all.
    for (const pod of typeof podSecrets === "function" ? podSecrets() : podSecrets) {
      for (const known of secrets) {
        const hashesMatch = known.credentialHash.length > 0 && pod.credentialHash === known.credentialHash;
        const sameSecret = pod.uid === known.uid && pod.namespace === known.namespace && pod.name === known.name;
        if (hashesMatch || sameSecret) {
          // The same credential in another secret, or the same secret with a new credential that
          // worked before: remembered, so the next check finds it directly.
          if (!(hashesMatch && sameSecret) && secrets.length < SECRETS_WRITTEN_WHILE_MATCHING) this.merge(image, imageRef, { kubernetesSecrets: [pod] }, nowMs);
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Forgets records of images no longer present (run after image garbage collection), except
   * those written since `sinceMs`: an image pulled after the images were listed keeps its record.
   */
  prune(presentImageRefs: Set<string>, sinceMs: number): void {
    if (!this.pulledDir) {
      for (const [ref, record] of [...this.memory]) if (!presentImageRefs.has(ref) && record.lastUpdatedMs < sinceMs) this.memory.delete(ref);
      return;
    }
    const keep = new Set([...presentImageRefs].map(fileNameOf));
    for (const name of fs.readdirSync(this.pulledDir)) {
      if (!name.startsWith("sha256-") || keep.has(name)) continue;
      const file = path.join(this.pulledDir, name);
      let updatedMs = 0;
      try {
        updatedMs = Number(JSON.parse(readBoundedText(file, FILE_LIMITS.smallBytes)).lastUpdatedMs) || 0;
      } catch {
        // unreadable: nothing to keep
      }
      if (updatedMs < sinceMs) fs.rmSync(file, { force: true });
    }
  }

  private requiresVerification(image: string, pulledByAgent: boolean): boolean {
    switch (this.policy) {
      case "NeverVerify":
        return false;
      case "AlwaysVerify":
        return true;
      case "NeverVerifyAllowlistedImages":
        return !allowlisted(image, this.allowlist);
      default:
        return pulledByAgent;
    }
  }

  private merge(image: string, imageRef: string, credentials: CredentialsRecord, nowMs: number): void {
    const record = this.read(imageRef) ?? { imageRef, lastUpdatedMs: nowMs, credentialMapping: {} };
    const name = imageName(image);
    const current = record.credentialMapping[name];
    if (current?.nodePodsAccessible) return;
    if (credentials.nodePodsAccessible || !current) {
      record.credentialMapping[name] = credentials;
    } else {
      const byCoordinates = new Map((current.kubernetesSecrets ?? []).map((s) => [`${s.namespace}/${s.name}/${s.uid}`, s]));
      for (const s of credentials.kubernetesSecrets ?? []) byCoordinates.set(`${s.namespace}/${s.name}/${s.uid}`, s);
      record.credentialMapping[name] = { kubernetesSecrets: [...byCoordinates.values()].sort((a, b) => `${a.namespace}/${a.name}/${a.uid}`.localeCompare(`${b.namespace}/${b.name}/${b.uid}`)) };
    }
    record.lastUpdatedMs = nowMs;
    if (this.pulledDir) this.writeJson(this.pulledDir, fileNameOf(imageRef), record);
    else this.memory.set(imageRef, record);
  }

  private read(imageRef: string): PulledRecord | undefined {
    if (!this.pulledDir) return this.memory.get(imageRef);
    const file = path.join(this.pulledDir, fileNameOf(imageRef));
    try {
      const record = JSON.parse(readBoundedText(file, FILE_LIMITS.smallBytes));
      if (record?.imageRef !== imageRef || typeof record.credentialMapping !== "object" || record.credentialMapping === null) throw new Error("not a pulled-image record of this image");
      return record as PulledRecord;
    } catch (error) {
      if (error instanceof FileReadError && error.code === "ENOENT") return undefined;
      // An unreadable record verifies nothing: the pod pulls (upstream does the same).
      this.log?.log("warn", "Pulled-image record unreadable; credentials will be verified again", { file, error: error instanceof SyntaxError ? "not valid JSON" : (error as Error).message });
      return { imageRef, lastUpdatedMs: 0, credentialMapping: {} };
    }
  }

  private intentFileExists(image: string): boolean {
    return this.pullingDir !== undefined && fs.existsSync(path.join(this.pullingDir, fileNameOf(image)));
  }

  private dropIntent(image: string): void {
    const left = (this.intents.get(image) ?? 1) - 1;
    if (left > 0) {
      this.intents.set(image, left);
      return;
    }
    this.intents.delete(image);
    if (this.pullingDir) fs.rmSync(path.join(this.pullingDir, fileNameOf(image)), { force: true });
  }

  private writeJson(dir: string, name: string, value: unknown): void {
    // Written whole and renamed: a crash leaves the old record or the new one, never half.
    const temporary = path.join(dir, `.${name}.tmp`);
    try {
      fs.writeFileSync(temporary, JSON.stringify(value), { mode: 0o600 });
      fs.renameSync(temporary, path.join(dir, name));
    } catch (error) {
      this.log?.log("warn", "Pulled-image record not written", { dir, error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
  }
}

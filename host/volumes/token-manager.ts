// The kubelet's TokenManager: service-account tokens for projected volumes, asked of the
// apiserver with a TokenRequest bound to the pod, kept while fresh, and asked again once 80% of
// their life has passed or they are older than 24 hours (upstream requiresRefresh).
import crypto from "node:crypto";
import type { ApiClient } from "../cluster/api-client.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";

/** upstream maxTTL: a token older than this is refreshed whatever its expiry. */
export const MAX_TOKEN_AGE_MS = 24 * 60 * 60 * 1000;
/** The share of a token's life after which it is refreshed. */
export const REFRESH_AT_FRACTION = 0.8;

export interface TokenRequestSpec {
  namespace: string;
  serviceAccountName: string;
  /** Empty: the apiserver's own audiences. */
  audience: string;
  expirationSeconds: number;
  podName: string;
  podUid: string;
}

interface Held {
  token: string;
  issuedAtMs: number;
  expiresAtMs: number;
}

export class TokenManager {
  private tokens = new Map<string, Held>();
  /** TokenRequests sent (the benchmark counts API requests per pod). */
  requestCount = 0;

  constructor(
    private client: ApiClient,
    private nowMs: () => number = Date.now,
    /** Tokens checkpointed for a node restarted without its apiserver (see token()). */
    private checkpoints?: CheckpointStore,
  ) {}

  /** The pod's uid (for the sweep) and a digest of the rest of the request. */
  private static checkpointName(key: string): string {
    const uid = key.slice(key.lastIndexOf("/") + 1);
    return `${uid}_${crypto.createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
  }

  /** Removes the checkpointed tokens of pods not desired now (once the apiserver's pods are known). */
  sweepCheckpoints(uids: ReadonlySet<string>): void {
    for (const name of this.checkpoints?.names() ?? []) if (!uids.has(name.slice(0, name.indexOf("_")))) this.checkpoints!.remove(name);
  }

  private static keyOf(s: TokenRequestSpec): string {
    return [s.namespace, s.serviceAccountName, s.audience, s.expirationSeconds, s.podName, s.podUid].join("/");
  }

  /** True when a held token must be asked for again (upstream requiresRefresh). */
  static needsRefresh(held: { issuedAtMs: number; expiresAtMs: number }, nowMs: number): boolean {
    if (nowMs >= held.expiresAtMs) return true;
    if (nowMs - held.issuedAtMs > MAX_TOKEN_AGE_MS) return true;
    return nowMs >= held.issuedAtMs + (held.expiresAtMs - held.issuedAtMs) * REFRESH_AT_FRACTION;
  }

  async token(spec: TokenRequestSpec): Promise<string> {
    const key = TokenManager.keyOf(spec);
    const held = this.tokens.get(key);
    const now = this.nowMs();
    if (held && !TokenManager.needsRefresh(held, now)) return held.token;
    const body = {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        audiences: spec.audience ? [spec.audience] : [],
        expirationSeconds: spec.expirationSeconds,
        boundObjectRef: { apiVersion: "v1", kind: "Pod", name: spec.podName, uid: spec.podUid },
      },
    };
    this.requestCount++;
    let answer: any;
    try {
      answer = await this.client.request("POST", `/api/v1/namespaces/${encodeURIComponent(spec.namespace)}/serviceaccounts/${encodeURIComponent(spec.serviceAccountName)}/token`, body);
    } catch (error) {
      // A token still valid is better than none while the apiserver cannot be reached.
      if (held && now < held.expiresAtMs) return held.token;
      // After a restart offline: the last token this pod had. Even an expired one keeps the pod's
      // volume as it was (the pod runs; nothing could check the token without the apiserver anyway),
      // and it is replaced as soon as a TokenRequest succeeds.
      const kept = this.checkpoints?.read(TokenManager.checkpointName(key)) as Held | undefined;
      if (kept && typeof kept.token === "string" && kept.token !== "") {
        this.tokens.set(key, { ...kept, expiresAtMs: Math.min(kept.expiresAtMs, now) });
        return kept.token;
      }
      throw new Error(`failed to fetch token: ${(error as Error).message}`);
    }
    const token = answer?.status?.token;
    if (typeof token !== "string" || token === "") throw new Error("failed to fetch token: the TokenRequest answer has no status.token");
    const expires = Date.parse(String(answer?.status?.expirationTimestamp ?? ""));
    const expiresAtMs = Number.isFinite(expires) ? expires : now + spec.expirationSeconds * 1000;
    this.tokens.set(key, { token, issuedAtMs: now, expiresAtMs });
    this.checkpoints?.write(TokenManager.checkpointName(key), { token, issuedAtMs: now, expiresAtMs });
    return token;
  }

  /** Forgets the tokens of pods no longer here (by uid). */
  retain(uids: ReadonlySet<string>): void {
    for (const key of [...this.tokens.keys()]) {
      if (uids.has(key.slice(key.lastIndexOf("/") + 1))) continue;
      this.tokens.delete(key);
      this.checkpoints?.remove(TokenManager.checkpointName(key));
    }
  }
}

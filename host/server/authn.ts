// Who is asking the kubelet API: a client certificate signed by --client-ca-file (CN is the user,
// O the groups), else a bearer token the apiserver vouches for by TokenReview
// (--authentication-token-webhook; answers cached 2 min, as the kubelet's default), else anonymous
// when --anonymous-auth allows it, else nobody (401).
import type http from "node:http";
import type { TLSSocket } from "node:tls";
import type { ApiClient } from "../cluster/api-client.js";
import { TtlCache } from "./ttl-cache.js";

export interface UserInfo {
  name: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

export const ANONYMOUS: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] };

export interface AuthenticatorOptions {
  /** TokenReview through the apiserver; off without a cluster. */
  tokenReviewer?: ApiClient;
  anonymous: boolean;
  tokenCacheTtlMs?: number;
  /** Most distinct tokens remembered: a flood of bad tokens cannot grow memory without end. */
  tokenCacheEntries?: number;
}

/** Splits an X.509 subject field that may hold several values (`O=a\nO=b` arrives as an array). */
function values(field: string | string[] | undefined): string[] {
  if (field === undefined) return [];
  return Array.isArray(field) ? field : [field];
}

export class Authenticator {
  private tokens: TtlCache<UserInfo | null>;

  constructor(private options: AuthenticatorOptions) {
    this.tokens = new TtlCache(options.tokenCacheTtlMs ?? 120_000, options.tokenCacheEntries ?? 1024);
  }

  /** The user, or undefined for 401. */
  async authenticate(req: http.IncomingMessage, nowMs: number): Promise<UserInfo | undefined> {
    const socket = req.socket as TLSSocket;
    // The TLS layer verified the chain against the client CA; an unverified certificate is no identity.
    if (typeof socket.getPeerCertificate === "function" && socket.authorized) {
      const cert = socket.getPeerCertificate();
      const cn = values(cert?.subject?.CN)[0];
      if (cn) return { name: cn, groups: [...values(cert.subject.O), "system:authenticated"] };
    }
    const header = req.headers.authorization;
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (m && this.options.tokenReviewer) {
      const user = await this.reviewToken(m[1], nowMs);
      if (user) return user;
      return undefined; // a token that is not valid is not anonymous: 401
    }
    return this.options.anonymous ? ANONYMOUS : undefined;
  }

  private async reviewToken(token: string, nowMs: number): Promise<UserInfo | undefined> {
    const cached = this.tokens.get(token, nowMs);
    if (cached !== undefined) return cached ?? undefined;
    const review = await this.options.tokenReviewer!.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token },
    });
    const status = review?.status ?? {};
    const user: UserInfo | null =
      status.authenticated === true && typeof status.user?.username === "string"
        ? { name: status.user.username, groups: Array.isArray(status.user.groups) ? status.user.groups : [], uid: status.user.uid, extra: status.user.extra }
        : null;
    this.tokens.set(token, user, nowMs);
    return user ?? undefined;
  }
}

// What a user may do on the kubelet API: the kubelet's attributes (resource `nodes`, the node's
// name, a verb from the HTTP method, a subresource from the path) decided by the apiserver through
// SubjectAccessReview (--authorization-mode=Webhook; allowed answers cached 5 min, denied 30 s),
// or AlwaysAllow for a node without a cluster.
import type { ApiClient } from "../cluster/api-client.js";
import type { UserInfo } from "./authn.js";
import { TtlCache } from "./ttl-cache.js";

export interface Attributes {
  verb: string;
  subresource: string;
}

const VERBS: Record<string, string> = { POST: "create", GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** `path` is `prefix` or below it. */
function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The attributes to check, in order; the request is allowed if any is. Paths with their own
 * subresource (stats, metrics, log) have only it; the fine-grained ones (healthz, pods, configz)
 * fall back to `proxy`, which allows everything, as the kubelet's KubeletFineGrainedAuthz does.
 */
export function requestAttributes(method: string, path: string): Attributes[] {
  const verb = VERBS[method] ?? "";
  if (under(path, "/stats")) return [{ verb, subresource: "stats" }];
  if (under(path, "/metrics")) return [{ verb, subresource: "metrics" }];
  if (under(path, "/logs")) return [{ verb, subresource: "log" }];
  const fine = under(path, "/healthz") ? "healthz" : under(path, "/pods") || under(path, "/runningpods") ? "pods" : under(path, "/configz") ? "configz" : undefined;
  return fine ? [{ verb, subresource: fine }, { verb, subresource: "proxy" }] : [{ verb, subresource: "proxy" }];
}

/** The kubelet's words for a refusal: every subresource tried, as Go prints a list (`[pods proxy]`). */
function attributesText(user: UserInfo, tried: Attributes[]): string {
  return `user=${user.name}, verb=${tried[0]?.verb ?? ""}, resource=nodes, subresource(s)=[${tried.map((a) => a.subresource).join(" ")}]`;
}

/** The kubelet's 403 text, naming every subresource tried. */
export function forbiddenMessage(user: UserInfo, tried: Attributes[]): string {
  return `Forbidden (${attributesText(user, tried)})`;
}

/** The kubelet's 500 text when the authorizer could not answer. */
export function authorizationErrorMessage(user: UserInfo, tried: Attributes[]): string {
  return `Authorization error (${attributesText(user, tried)})`;
}

export interface Authorizer {
  allowed(user: UserInfo, attributes: Attributes, nowMs: number): Promise<boolean>;
}

export class AlwaysAllow implements Authorizer {
  async allowed(): Promise<boolean> {
    return true;
  }
}

export class WebhookAuthorizer implements Authorizer {
  private cache: TtlCache<boolean>;

  constructor(
    private client: ApiClient,
    private nodeName: string,
    private allowTtlMs = 300_000,
    private denyTtlMs = 30_000,
  ) {
    this.cache = new TtlCache(allowTtlMs, 4096);
  }

  async allowed(user: UserInfo, a: Attributes, nowMs: number): Promise<boolean> {
    const key = JSON.stringify([user.name, [...user.groups].sort(), user.uid ?? "", user.extra ?? {}, a.verb, a.subresource]);
    const cached = this.cache.get(key, nowMs);
    if (cached !== undefined) return cached;
    const review = await this.client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: user.name,
        groups: user.groups,
        uid: user.uid,
        extra: user.extra,
        resourceAttributes: { verb: a.verb, version: "v1", resource: "nodes", subresource: a.subresource, name: this.nodeName },
      },
    });
    const allowed = review?.status?.allowed === true;
    this.cache.set(key, allowed, nowMs, allowed ? this.allowTtlMs : this.denyTtlMs);
    return allowed;
  }
}

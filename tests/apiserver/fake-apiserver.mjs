// An in-process kube-apiserver for tests, strict like the real one: authentication by bearer token
// (or client certificate over TLS), the Node authorizer's and NodeRestriction's rules, one
// resourceVersion counter, list and watch with field selectors, bookmarks and 410 Gone, the
// status subresource with merge and strategic merge patches, graceful pod deletion with a uid
// precondition, Nodes, Leases and Events. It can be stopped and started on the same port to play
// an outage. Only what a kubelet uses is served; everything else is refused.
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import { authorize, nodeNameOf } from "./authz.mjs";
import { mergePatch, strategicMergePatch } from "./patch.mjs";
import { ApiError, badRequest, conflict, invalid, methodNotAllowed, notFound, unauthorized, unsupportedMediaType } from "./status.mjs";
import { Store } from "./store.mjs";

/** Resources served, with their API group version, kind and scope. */
const RESOURCES = {
  pods: { groupVersion: "v1", kind: "Pod", namespaced: true, subresources: ["status", "resize"] },
  nodes: { groupVersion: "v1", kind: "Node", namespaced: false, subresources: ["status"] },
  events: { groupVersion: "v1", kind: "Event", namespaced: true, subresources: [] },
  leases: { groupVersion: "coordination.k8s.io/v1", kind: "Lease", namespaced: true, subresources: [] },
  services: { groupVersion: "v1", kind: "Service", namespaced: true, subresources: [] },
};
/** Field selectors the real apiserver supports for these resources (a subset). */
const SELECTABLE_FIELDS = {
  pods: ["metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"],
  nodes: ["metadata.name"],
  events: ["metadata.name", "metadata.namespace", "involvedObject.name", "involvedObject.uid"],
  leases: ["metadata.name", "metadata.namespace"],
  services: ["metadata.name", "metadata.namespace"],
};
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DEFAULT_POD_GRACE_SECONDS = 30;

export class FakeApiServer {
  /**
   * `tokens`: bearer token -> { name, groups }. `tls`: { key, cert, ca, http2 } to serve HTTPS (HTTP/2 and
   * HTTP/1.1, or HTTP/1.1 alone with `http2: false`; `maxStreams` streams per
   * connection, 1000 as kube-apiserver's) and accept
   * client certificates (CN is the user, O the groups). `now`: clock for timestamps.
   */
  constructor({ tokens = {}, tls, bookmarkIntervalMs = 60_000, now = () => new Date() } = {}) {
    this.tokens = tokens;
    this.tls = tls;
    this.bookmarkIntervalMs = bookmarkIntervalMs;
    this.now = now;
    this.store = new Store();
    /** Every request: method, path (with query), user, status code. */
    this.requests = [];
    this.sockets = new Set();
    this.watches = new Set();
    this.port = 0;
    /** TCP connections accepted (a client on one HTTP/2 connection makes one). */
    this.connections = 0;
  }

  static async start(options) {
    const api = new FakeApiServer(options);
    await api.listen();
    return api;
  }

  get url() {
    return `${this.tls ? "https" : "http"}://127.0.0.1:${this.port}`;
  }

  async listen() {
    const handler = (req, res) => void this.handle(req, res);
    this.server = this.tls
      ? (this.tls.http2 === false ? https.createServer : (o, h) => http2.createSecureServer({ ...o, allowHTTP1: true, settings: { maxConcurrentStreams: this.tls.maxStreams ?? 1000 } }, h))({ key: this.tls.key, cert: this.tls.cert, ca: this.tls.ca, requestCert: true, rejectUnauthorized: false }, handler)
      : http.createServer(handler);
    this.server.on("connection", (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = this.server.address().port;
  }

  /** An outage: every connection and watch is cut and nothing answers until `start`. */
  async stop() {
    if (!this.server?.listening) return;
    for (const w of this.watches) w.end();
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Back after an outage, on the same port, with the same objects. */
  async start() {
    await this.listen();
  }

  // --- helpers for tests -------------------------------------------------------------------

  /** Creates an object as the cluster admin would (a pod to schedule, a namespace's events). */
  seed(resource, obj) {
    return this.store.create(resource, this.withKind(resource, obj), this.now());
  }

  get(resource, namespace, name) {
    return this.store.find(resource, namespace, name);
  }

  /** Forgets watch history: a watch from an older version gets 410 Gone. */
  compact() {
    this.store.compactTo();
  }

  withKind(resource, obj) {
    const r = RESOURCES[resource];
    return { kind: r.kind, apiVersion: r.groupVersion, ...obj };
  }

  // --- HTTP --------------------------------------------------------------------------------

  async handle(req, res) {
    const url = new URL(req.url, "http://x");
    const record = { method: req.method, path: url.pathname + url.search, user: undefined, code: 0, httpVersion: req.httpVersion };
    this.requests.push(record);
    try {
      const user = this.authenticate(req);
      record.user = user.name;
      const route = parsePath(url.pathname);
      const body = ["POST", "PUT", "PATCH", "DELETE"].includes(req.method) ? await readBody(req) : undefined;
      await this.serve(req, res, url, route, user, body, record);
    } catch (error) {
      const e = error instanceof ApiError ? error : new ApiError(500, "InternalError", String(error?.stack ?? error));
      record.code = e.code;
      if (!res.headersSent) {
        res.writeHead(e.code, { "content-type": "application/json" });
        res.end(JSON.stringify(e.toStatus()));
      } else res.end();
    }
  }

  authenticate(req) {
    const header = req.headers.authorization;
    if (header?.startsWith("Bearer ")) {
      const user = this.tokens[header.slice(7)];
      if (!user) throw unauthorized();
      return user;
    }
    const cert = req.socket.getPeerCertificate?.();
    if (cert && cert.subject && req.socket.authorized) {
      const groups = [cert.subject.O ?? []].flat();
      return { name: cert.subject.CN, groups };
    }
    throw unauthorized();
  }

  async serve(req, res, url, route, user, body, record) {
    const { resource, namespace, name, subresource } = route;
    const spec = RESOURCES[resource];
    const q = url.searchParams;
    const fieldSelector = parseFieldSelector(q.get("fieldSelector"), resource);
    if (q.get("labelSelector")) throw badRequest("labelSelector is not supported by this test apiserver");
    const stored = name ? this.store.find(resource, namespace, name) : undefined;
    // `as=PartialObjectMetadata` (a client that reads only the metadata of the answer): the object's
    // metadata alone, as the real apiserver transforms it.
    const metadataOnly = /(^|,)\s*application\/json;as=PartialObjectMetadata;g=meta\.k8s\.io;v=v1/.test(req.headers.accept ?? "");
    const ok = (code, obj) => {
      record.code = code;
      record.metadataOnly = metadataOnly;
      res.writeHead(code, { "content-type": "application/json" });
      const single = obj && obj.metadata && !Array.isArray(obj.items) && obj.kind !== "Status";
      res.end(JSON.stringify(metadataOnly && single ? { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: obj.metadata } : obj));
    };

    if (req.method === "GET" && !name) {
      const watch = q.get("watch") === "1" || q.get("watch") === "true";
      authorize(user, watch ? "watch" : "list", { resource, namespace, fieldSelector });
      const filter = (obj) => Object.entries(fieldSelector ?? {}).every(([field, value]) => fieldValue(obj, field) === value);
      if (watch) return this.serveWatch(req, res, resource, namespace, filter, q, record);
      const list = this.store.list(resource, namespace, filter);
      return ok(200, { kind: `${spec.kind}List`, apiVersion: spec.groupVersion, metadata: { resourceVersion: list.resourceVersion }, items: list.items });
    }
    if (req.method === "GET") {
      authorize(user, "get", { resource, namespace, name, subresource, stored });
      if (!stored) throw notFound(resource, name);
      return ok(200, stored);
    }
    if (req.method === "POST") {
      if (name) throw methodNotAllowed();
      const obj = parseObject(body, resource);
      obj.metadata ??= {};
      if (spec.namespaced) {
        if (obj.metadata.namespace && obj.metadata.namespace !== namespace) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
        obj.metadata.namespace = namespace;
      }
      authorize(user, "create", { resource, namespace, body: obj, nodeUid: resource === "pods" ? this.store.find("nodes", undefined, nodeNameOf(user) ?? "")?.metadata?.uid : undefined });
      validate(resource, obj);
      return ok(201, this.store.create(resource, this.withKind(resource, obj), this.now()));
    }
    if (!name) throw methodNotAllowed();
    if (req.method === "PUT") {
      const obj = parseObject(body, resource);
      if (obj.metadata?.name !== name) throw badRequest(`the name of the object (${obj.metadata?.name}) does not match the name on the URL (${name})`);
      authorize(user, "update", { resource, namespace, name, subresource, stored, body: obj });
      if (!stored) throw notFound(resource, name);
      const next = this.merged(resource, stored, obj, subresource);
      if (resource === "pods" && subresource === "status") validatePodStatus(stored, next);
      return ok(200, this.store.update(resource, next, obj.metadata.resourceVersion));
    }
    if (req.method === "PATCH") {
      authorize(user, "patch", { resource, namespace, name, subresource, stored });
      if (!stored) throw notFound(resource, name);
      const type = (req.headers["content-type"] ?? "").split(";")[0].trim();
      if (type !== "application/merge-patch+json" && type !== "application/strategic-merge-patch+json") throw unsupportedMediaType(type);
      const patch = parseObject(body, resource);
      const patched = type === "application/merge-patch+json" ? mergePatch(stored, patch) : strategicMergePatch(stored, patch);
      const uid = patch.metadata?.uid;
      if (uid !== undefined && uid !== stored.metadata.uid) {
        throw conflict(resource, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stored.metadata.uid}`);
      }
      const next = this.merged(resource, stored, patched, subresource);
      if (resource === "pods" && subresource === "status") validatePodStatus(stored, next);
      return ok(200, this.store.update(resource, next, patch.metadata?.resourceVersion));
    }
    if (req.method === "DELETE") {
      authorize(user, "delete", { resource, namespace, name, subresource, stored });
      if (subresource) throw methodNotAllowed();
      if (!stored) throw notFound(resource, name);
      const options = body && body.length > 0 ? parseObject(body, resource) : {};
      const preconditionUid = options.preconditions?.uid;
      if (preconditionUid !== undefined && preconditionUid !== stored.metadata.uid) {
        throw conflict(resource, name, `Precondition failed: UID in precondition: ${preconditionUid}, UID in object meta: ${stored.metadata.uid}`);
      }
      const queryGrace = q.get("gracePeriodSeconds");
      const grace = options.gracePeriodSeconds ?? (queryGrace !== null ? Number(queryGrace) : undefined);
      if (resource === "pods") return ok(200, this.deletePod(stored, grace));
      return ok(200, this.store.remove(resource, namespace, name));
    }
    throw methodNotAllowed();
  }

  /** What an update stores: through the status subresource only status changes; else the rest. */
  merged(resource, stored, incoming, subresource) {
    const spec = RESOURCES[resource];
    if (subresource === "status") return { ...this.withKind(resource, stored), status: incoming.status };
    if (subresource === "resize") return resized(this.withKind(resource, stored), incoming);
    const replaced = { ...incoming, kind: spec.kind, apiVersion: spec.groupVersion, metadata: { ...incoming.metadata, namespace: stored.metadata.namespace } };
    if (spec.subresources.includes("status")) replaced.status = stored.status; // status has its own door
    // A pod's generation counts its spec changes.
    if (resource === "pods") {
      const changed = JSON.stringify(incoming.spec) !== JSON.stringify(stored.spec);
      replaced.metadata.generation = (stored.metadata.generation ?? 1) + (changed ? 1 : 0);
    }
    return replaced;
  }

  /**
   * Graceful deletion: a pod bound to a node gets a deletionTimestamp and stays until its kubelet
   * deletes it with grace 0; an unbound pod, or grace 0, goes at once.
   */
  deletePod(stored, grace) {
    const { namespace, name } = stored.metadata;
    const seconds = grace ?? stored.metadata.deletionGracePeriodSeconds ?? stored.spec?.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
    if (seconds === 0 || !stored.spec?.nodeName) return this.store.remove("pods", namespace, name);
    if (stored.metadata.deletionTimestamp && stored.metadata.deletionGracePeriodSeconds <= seconds) return stored;
    const at = new Date(this.now().getTime() + seconds * 1000).toISOString().replace(/\.\d+Z$/, "Z");
    return this.store.markDeleted("pods", namespace, name, at, seconds);
  }

  serveWatch(req, res, resource, namespace, filter, q, record) {
    const spec = RESOURCES[resource];
    const rvText = q.get("resourceVersion");
    const from = rvText === null || rvText === "" || rvText === "0" ? undefined : Number(rvText);
    if (rvText && !/^\d+$/.test(rvText)) throw badRequest(`invalid resource version: ${rvText}`);
    record.code = 200;
    res.writeHead(200, { "content-type": "application/json" });
    const send = (type, object) => res.write(JSON.stringify({ type, object }) + "\n");
    let stop = () => {};
    const end = () => {
      stop();
      clearInterval(bookmarks);
      clearTimeout(timeout);
      this.watches.delete(watch);
      res.end();
    };
    const watch = { end };
    this.watches.add(watch);
    try {
      stop = this.store.watch(resource, namespace, filter, from, send);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      send("ERROR", error.toStatus());
      this.watches.delete(watch);
      res.end();
      return;
    }
    const bookmarks =
      q.get("allowWatchBookmarks") === "true"
        ? setInterval(() => send("BOOKMARK", { kind: spec.kind, apiVersion: spec.groupVersion, metadata: { resourceVersion: String(this.store.revision) } }), this.bookmarkIntervalMs)
        : undefined;
    const timeoutSeconds = Number(q.get("timeoutSeconds") ?? 0);
    const timeout = timeoutSeconds > 0 ? setTimeout(end, timeoutSeconds * 1000) : undefined;
    req.on("close", end);
  }
}

function parsePath(pathname) {
  let m = /^\/api\/v1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(pathname);
  let group = "v1";
  let route;
  if (m) route = { namespace: m[1], resource: m[2], name: m[3], subresource: m[4] };
  else if ((m = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(pathname))) {
    group = "coordination.k8s.io/v1";
    route = { namespace: m[1], resource: m[2], name: m[3] };
  } else if ((m = /^\/api\/v1\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(pathname))) route = { resource: m[1], name: m[2], subresource: m[3] };
  const spec = route && RESOURCES[route.resource];
  if (!spec || spec.groupVersion !== group) throw notFound("", pathname);
  if (route.subresource && !spec.subresources.includes(route.subresource)) throw notFound(route.resource, `${route.name}/${route.subresource}`);
  if (!spec.namespaced && route.namespace) throw notFound(route.resource, route.name ?? "");
  if (spec.namespaced && !route.namespace && route.name) throw notFound(route.resource, route.name);
  return route;
}

function parseFieldSelector(text, resource) {
  if (!text) return undefined;
  const out = {};
  for (const term of text.split(",")) {
    const m = /^([a-zA-Z.]+)(==?)(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    if (!SELECTABLE_FIELDS[resource].includes(m[1])) throw badRequest(`"${m[1]}" is not a known field selector: only "${SELECTABLE_FIELDS[resource].join('", "')}"`);
    out[m[1]] = m[3];
  }
  return out;
}

function fieldValue(obj, path) {
  return path.split(".").reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), obj) ?? "";
}

function parseObject(body, resource) {
  let value;
  try {
    value = JSON.parse(body?.toString("utf8") ?? "");
  } catch (error) {
    throw badRequest(`the body of the request could not be decoded as JSON: ${error.message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(`${resource}: expected a JSON object`);
  return value;
}

/**
 * The `resize` subresource (in-place resize, GA in 1.35): only the containers' cpu and memory
 * requests and limits (and resize policies) change; the QoS class may not; the spec generation
 * counts it.
 */
function resized(stored, incoming) {
  const name = stored.metadata.name;
  const before = stored.spec?.containers ?? [];
  const after = incoming.spec?.containers ?? [];
  if (after.length !== before.length || after.some((c, i) => c.name !== before[i].name)) {
    throw invalid("pods", name, "spec.containers: Forbidden: containers may not be added, removed or renamed by a resize");
  }
  const containers = before.map((c, i) => {
    const resources = after[i].resources ?? {};
    for (const list of ["requests", "limits"]) {
      const was = c.resources?.[list] ?? {};
      const now = resources[list] ?? {};
      for (const key of new Set([...Object.keys(was), ...Object.keys(now)])) {
        if (key !== "cpu" && key !== "memory" && was[key] !== now[key]) {
          throw invalid("pods", name, `spec.containers[${i}].resources.${list}[${key}]: Forbidden: only cpu and memory resources are mutable`);
        }
      }
    }
    return { ...c, resources, resizePolicy: after[i].resizePolicy ?? c.resizePolicy };
  });
  const next = { ...stored, spec: { ...stored.spec, containers } };
  if (qosClass(next.spec) !== qosClass(stored.spec)) throw invalid("pods", name, "spec: Forbidden: Pod QOS Class may not change as a result of resizing");
  next.metadata = { ...stored.metadata, generation: (stored.metadata.generation ?? 1) + 1 };
  return next;
}

/** The pod's QoS class (v1/helper/qos): requests default to limits. */
function qosClass(spec) {
  let any = false;
  let guaranteed = true;
  for (const c of spec.containers ?? []) {
    for (const r of ["cpu", "memory"]) {
      const limit = c.resources?.limits?.[r];
      const request = c.resources?.requests?.[r] ?? limit;
      if (request !== undefined || limit !== undefined) any = true;
      if (limit === undefined || request !== limit) guaranteed = false;
    }
  }
  return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

function validate(resource, obj) {
  const name = obj.metadata?.name;
  if (!name) throw invalid(resource, "", "metadata.name: Required value: name or generateName is required");
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253) throw invalid(resource, name, `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`);
  if (resource === "pods" && !(Array.isArray(obj.spec?.containers) && obj.spec.containers.length > 0)) {
    throw invalid(resource, name, "spec.containers: Required value");
  }
}

const TERMINAL = new Set(["Succeeded", "Failed"]);
const CONTAINER_STATES = ["waiting", "running", "terminated"];

/** The checks of a pod status update a node's patches must pass (ValidatePodStatusUpdate). */
function validatePodStatus(stored, next) {
  const name = stored.metadata.name;
  const status = next.status ?? {};
  const was = stored.status?.phase;
  if (TERMINAL.has(was) && status.phase !== was) {
    throw invalid("pods", name, `status.phase: Forbidden: cannot transition from terminal phase ${was} to ${status.phase}`);
  }
  for (const [single, list] of [["podIP", "podIPs"], ["hostIP", "hostIPs"]]) {
    const ips = status[list] ?? [];
    if (ips.length > 0 && ips[0]?.ip !== status[single]) throw invalid("pods", name, `status.${list}[0].ip: Invalid value: "${ips[0]?.ip}": must match status.${single} "${status[single]}"`);
    if (status[single] && ips.length === 0) throw invalid("pods", name, `status.${list}: Required value: must be set when status.${single} is`);
    const families = ips.map((p) => (String(p?.ip).includes(":") ? 6 : 4));
    if (new Set(families).size < families.length) {
      const shown = JSON.stringify(ips.map((p) => ({ IP: p?.ip })));
      throw invalid("pods", name, `status.${list}: Invalid value: ${shown}: may specify no more than one IP for each IP family`);
    }
  }
  const names = new Set((next.spec?.containers ?? []).map((c) => c.name));
  (status.containerStatuses ?? []).forEach((c, i) => {
    const at = `status.containerStatuses[${i}]`;
    if (!names.has(c.name)) throw invalid("pods", name, `${at}.name: Not found: "${c.name}"`);
    if (!Number.isInteger(c.restartCount) || c.restartCount < 0) throw invalid("pods", name, `${at}.restartCount: Invalid value: ${c.restartCount}: must be greater than or equal to 0`);
    const states = CONTAINER_STATES.filter((k) => c.state?.[k]);
    if (states.length > 1) throw invalid("pods", name, `${at}.state: Forbidden: may not specify more than 1 state type`);
    const last = CONTAINER_STATES.filter((k) => c.lastState?.[k]);
    if (last.length > 1) throw invalid("pods", name, `${at}.lastState: Forbidden: may not specify more than 1 state type`);
  });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}


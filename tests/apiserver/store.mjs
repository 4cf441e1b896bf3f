// The fake apiserver's storage: every object with a resourceVersion from one counter, as etcd
// gives them, and a bounded history of changes that watches replay from. A watch from a version
// older than the history answers 410 Gone, as the real one does after compaction.
import { randomUUID } from "node:crypto";
import { alreadyExists, conflict, gone, notFound } from "./status.mjs";

export const keyOf = (resource, namespace, name) => `${resource}/${namespace ?? ""}/${name}`;

export class Store {
  constructor({ historyLimit = 10_000 } = {}) {
    this.revision = 1;
    this.objects = new Map();
    this.history = [];
    this.historyLimit = historyLimit;
    /** Oldest version a watch may start from (exclusive); older ones are gone. */
    this.compactedRevision = 0;
    this.watchers = new Set();
  }

  get(resource, namespace, name) {
    const obj = this.objects.get(keyOf(resource, namespace, name));
    if (!obj) throw notFound(resource, name);
    return structuredClone(obj);
  }

  find(resource, namespace, name) {
    const obj = this.objects.get(keyOf(resource, namespace, name));
    return obj ? structuredClone(obj) : undefined;
  }

  list(resource, namespace, filter = () => true) {
    const items = [];
    for (const obj of this.objects.values()) {
      if (obj.__resource !== resource) continue;
      if (namespace && obj.metadata.namespace !== namespace) continue;
      if (filter(obj)) items.push(structuredClone(obj));
    }
    items.sort((a, b) => keyOf(resource, a.metadata.namespace, a.metadata.name).localeCompare(keyOf(resource, b.metadata.namespace, b.metadata.name)));
    return { items: items.map(strip), resourceVersion: String(this.revision) };
  }

  create(resource, obj, now = new Date()) {
    const key = keyOf(resource, obj.metadata.namespace, obj.metadata.name);
    if (this.objects.has(key)) throw alreadyExists(resource, obj.metadata.name);
    const stored = structuredClone(obj);
    stored.metadata.uid ??= randomUUID();
    stored.metadata.creationTimestamp = now.toISOString().replace(/\.\d+Z$/, "Z");
    stored.metadata.resourceVersion = String(++this.revision);
    // Pods carry a generation since v1.33 (PodObservedGenerationTracking): 1, then one more per
    // spec change.
    if (resource === "pods") stored.metadata.generation = 1;
    stored.__resource = resource;
    this.objects.set(key, stored);
    this.record("ADDED", stored);
    return strip(stored);
  }

  /** Replaces an object; `expectedVersion` (if given) must be the stored one, else 409 Conflict. */
  update(resource, obj, expectedVersion) {
    const key = keyOf(resource, obj.metadata.namespace, obj.metadata.name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, obj.metadata.name);
    if (expectedVersion !== undefined && expectedVersion !== "" && expectedVersion !== current.metadata.resourceVersion) {
      throw conflict(resource, obj.metadata.name, "the object has been modified; please apply your changes to the latest version and try again");
    }
    const stored = structuredClone(obj);
    // Identity and bookkeeping are the server's, whatever the client sent.
    stored.metadata.uid = current.metadata.uid;
    stored.metadata.creationTimestamp = current.metadata.creationTimestamp;
    if (current.metadata.deletionTimestamp) stored.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
    if (current.metadata.deletionGracePeriodSeconds !== undefined) stored.metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
    if (JSON.stringify(strip({ ...stored, metadata: { ...stored.metadata, resourceVersion: "" } })) === JSON.stringify(strip({ ...current, metadata: { ...current.metadata, resourceVersion: "" } }))) {
      return strip(structuredClone(current)); // no change: no new version, no event
    }
    stored.metadata.resourceVersion = String(++this.revision);
    stored.__resource = resource;
    this.objects.set(key, stored);
    this.record("MODIFIED", stored);
    return strip(structuredClone(stored));
  }

  /** Graceful deletion begins: the server sets deletionTimestamp and the grace period. */
  markDeleted(resource, namespace, name, deletionTimestamp, gracePeriodSeconds) {
    const current = this.objects.get(keyOf(resource, namespace, name));
    if (!current) throw notFound(resource, name);
    current.metadata.deletionTimestamp = deletionTimestamp;
    current.metadata.deletionGracePeriodSeconds = gracePeriodSeconds;
    current.metadata.resourceVersion = String(++this.revision);
    this.record("MODIFIED", current);
    return strip(structuredClone(current));
  }

  remove(resource, namespace, name) {
    const key = keyOf(resource, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw notFound(resource, name);
    this.objects.delete(key);
    const last = structuredClone(current);
    last.metadata.resourceVersion = String(++this.revision);
    this.record("DELETED", last);
    return strip(last);
  }

  record(type, obj) {
    const event = { type, revision: Number(obj.metadata.resourceVersion), object: structuredClone(obj) };
    this.history.push(event);
    if (this.history.length > this.historyLimit) this.compactTo(this.history[this.history.length - this.historyLimit].revision - 1);
    for (const w of this.watchers) w.offer(event);
  }

  /** Forgets history up to `revision`: watches from before it get 410 Gone. */
  compactTo(revision = this.revision) {
    this.history = this.history.filter((e) => e.revision > revision);
    this.compactedRevision = Math.max(this.compactedRevision, revision);
  }

  /**
   * Starts a watch of `resource` (in `namespace`, matching `filter`) from `fromRevision`
   * (exclusive). `send(type, object)` receives events; returns a function that stops the watch.
   */
  watch(resource, namespace, filter, fromRevision, send) {
    if (fromRevision !== undefined && fromRevision < this.compactedRevision) {
      throw gone(`too old resource version: ${fromRevision} (${this.compactedRevision})`);
    }
    const matches = (e) => e.object.__resource === resource && (!namespace || e.object.metadata.namespace === namespace) && filter(e.object);
    const watcher = { offer: (e) => matches(e) && send(e.type, strip(structuredClone(e.object))) };
    if (fromRevision === undefined) {
      // No version: the current state as ADDED events, then changes (as the real one does).
      for (const obj of this.objects.values()) if (matches({ object: obj })) send("ADDED", strip(structuredClone(obj)));
    } else {
      for (const e of this.history) if (e.revision > fromRevision) watcher.offer(e);
    }
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }
}

/** The object as clients see it, without the store's bookkeeping. */
export function strip(obj) {
  if (!obj || typeof obj !== "object") return obj;
  const { __resource, ...rest } = obj;
  return rest;
}

// The kubelet's ConfigMap and Secret managers: the objects the node's pods use, read by one of
// upstream's change detection strategies (`configMapAndSecretChangeDetectionStrategy`):
//   Watch (default): one watch per object, selected by `metadata.name` as the Node authorizer
//     requires, started when the first pod that uses the object arrives and stopped with the last;
//   Cache: a GET, kept for a TTL;
//   Get: a GET each time.
// Reference counts are by pod uid: a pod registers every object it uses when it is desired.
import { ApiClient, ApiStatusError } from "../cluster/api-client.js";
import { Reflector, type PodObject } from "../cluster/pod-reflector.js";
import type { Logger } from "../common/log.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";

import { keyOf, singular, type ObjectRef } from "./object-refs.js";

export { objectRefsOf, singular, type ObjectRef, type ObjectResource } from "./object-refs.js";
export type ChangeDetectionStrategy = "Watch" | "Cache" | "Get";
export const CHANGE_DETECTION_STRATEGIES: ChangeDetectionStrategy[] = ["Watch", "Cache", "Get"];

/** Upstream's TTL of the Cache strategy when the node has no annotation for it. */
export const DEFAULT_CACHE_TTL_MS = 60_000;
/** How long a get waits for a new watch's first list before it fails as upstream's does. */
export const SYNC_WAIT_MS = 10_000;

/** What the volume manager and container env read. */
export interface ObjectGetter {
  /** The object; undefined when it does not exist. Rejects when it cannot be known (refused, unreachable). */
  get(ref: ObjectRef): Promise<PodObject | undefined>;
}

/** A GET of one object: undefined on 404. */
async function getObject(client: ApiClient, ref: ObjectRef): Promise<PodObject | undefined> {
  try {
    return await client.request("GET", `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/${ref.resource}/${encodeURIComponent(ref.name)}`);
  } catch (error) {
    if (error instanceof ApiStatusError && error.code === 404) return undefined;
    throw error;
  }
}

interface Watched {
  reflector: Reflector;
  pods: Set<string>;
  listed: boolean;
  /** Seen with `immutable: true`: its watch is stopped and this copy kept (upstream does the same). */
  immutable?: PodObject;
  lastError?: Error;
  waiters: (() => void)[];
}

export interface ObjectStoreOptions {
  client: ApiClient;
  log: Logger;
  strategy?: ChangeDetectionStrategy;
  cacheTtlMs?: number;
  /** Overrides SYNC_WAIT_MS (tests). */
  syncWaitMs?: number;
  /**
   * Every object read is checkpointed here; when the apiserver cannot be reached (or its watch has
   * not listed yet), the checkpointed copy answers, so volumes and env of a node restarted offline
   * are made as they were.
   */
  checkpoints?: CheckpointStore;
}

export class ObjectStore implements ObjectGetter {
  private watched = new Map<string, Watched>();
  private cached = new Map<string, { object: PodObject | undefined; atMs: number }>();
  private podRefs = new Map<string, string[]>();
  readonly strategy: ChangeDetectionStrategy;
  /** Requests made, by verb (API requests per pod, in the benchmark). */
  readonly requests = { get: 0, watch: 0 };

  constructor(private options: ObjectStoreOptions) {
    this.strategy = options.strategy ?? "Watch";
  }

  /** The objects pod `uid` uses now (replacing what it used before); an empty list unregisters it. */
  register(uid: string, refs: ObjectRef[]): void {
    const keys = refs.map(keyOf);
    const before = this.podRefs.get(uid) ?? [];
    if (keys.length === 0) this.podRefs.delete(uid);
    else this.podRefs.set(uid, keys);
    if (this.strategy !== "Watch") return;
    refs.forEach((ref, i) => this.watch(keys[i], ref).pods.add(uid));
    for (const key of before) {
      if (keys.includes(key)) continue;
      const w = this.watched.get(key);
      if (!w) continue;
      w.pods.delete(uid);
      if (w.pods.size === 0) {
        w.reflector.stop();
        this.watched.delete(key);
      }
    }
  }

  /** Every pod that is desired now, by uid: the others are unregistered. */
  retain(uids: ReadonlySet<string>): void {
    for (const uid of [...this.podRefs.keys()]) if (!uids.has(uid)) this.register(uid, []);
  }

  private watch(key: string, ref: ObjectRef): Watched {
    const existing = this.watched.get(key);
    if (existing) return existing;
    const w: Watched = { pods: new Set(), listed: false, waiters: [], reflector: undefined as unknown as Reflector };
    w.reflector = new Reflector({
      client: this.options.client,
      log: this.options.log,
      path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/${ref.resource}`,
      selector: `fieldSelector=${encodeURIComponent(`metadata.name=${ref.name}`)}`,
      what: `${ref.resource} ${ref.namespace}/${ref.name}`,
      streamingList: true,
      onObjects: () => {
        w.listed = true;
        w.lastError = undefined;
        for (const wake of w.waiters.splice(0)) wake();
      },
      onError: (error) => {
        w.lastError = error;
        for (const wake of w.waiters.splice(0)) wake();
      },
    });
    this.requests.watch++;
    this.watched.set(key, w);
    w.reflector.start();
    return w;
  }

  async get(ref: ObjectRef): Promise<PodObject | undefined> {
    const store = this.options.checkpoints;
    if (!store) return this.fetch(ref);
    const name = keyOf(ref);
    let object: PodObject | undefined;
    try {
      object = await this.fetch(ref);
    } catch (error) {
      const kept = store.read(name) as PodObject | undefined;
      if (kept === undefined) throw error;
      if (!this.fromCheckpoint.has(name)) {
        this.fromCheckpoint.add(name);
        this.options.log.log("warn", `Using the checkpointed ${singular(ref.resource)} while the apiserver cannot be reached`, { object: `${ref.namespace}/${ref.name}`, error: (error as Error).message });
      }
      return kept;
    }
    this.fromCheckpoint.delete(name);
    if (object === undefined) store.remove(name);
    else store.write(name, object);
    return object;
  }

  /**
   * Removes the checkpoints of objects no registered pod uses. Called once the apiserver's pods are
   * known (not before: at start only static pods are registered).
   */
  sweepCheckpoints(): void {
    const store = this.options.checkpoints;
    if (!store) return;
    const used = new Set<string>();
    for (const keys of this.podRefs.values()) for (const key of keys) used.add(key);
    for (const name of store.names()) if (!used.has(name)) store.remove(name);
  }

  /** Checkpoints in use now (logged once each). */
  private fromCheckpoint = new Set<string>();

  private async fetch(ref: ObjectRef): Promise<PodObject | undefined> {
    const key = keyOf(ref);
    const w = this.watched.get(key);
    if (this.strategy === "Watch" && w) {
      if (w.immutable) return w.immutable;
      if (!w.listed && !w.lastError) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.syncWaitMs ?? SYNC_WAIT_MS);
          w.waiters.push(() => (clearTimeout(timer), resolve()));
        });
      }
      if (!w.listed) {
        if (w.lastError) throw w.lastError;
        throw new Error(`failed to sync ${singular(ref.resource)} cache: timed out waiting for the condition`);
      }
      for (const object of w.reflector.current.values()) {
        if (object?.metadata?.name !== ref.name) continue;
        if (object.immutable === true) {
          // It can never change again: no need to keep watching it.
          w.immutable = object;
          w.reflector.stop();
        }
        return object;
      }
      return undefined;
    }
    if (this.strategy === "Cache") {
      const hit = this.cached.get(key);
      if (hit && Date.now() - hit.atMs < (this.options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS)) return hit.object;
    }
    // Get, a Cache miss, or an object no desired pod registered (read once, as it is now).
    this.requests.get++;
    const object = await getObject(this.options.client, ref);
    if (this.strategy === "Cache") this.cached.set(key, { object, atMs: Date.now() });
    return object;
  }

  /** Watches open now (tests and the benchmark). */
  get watchCount(): number {
    return [...this.watched.values()].filter((w) => !w.immutable).length;
  }

  stop(): void {
    for (const w of this.watched.values()) w.reflector.stop();
    this.watched.clear();
  }
}

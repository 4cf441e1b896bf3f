// The apiserver's objects as client-go's reflector keeps them for the kubelet: list, then watch
// from the list's resourceVersion with bookmarks, relist on 410 Gone, reconnect with a capped
// back-off, and hand the whole current set on at every change. PodReflector is the pod source
// (`fieldSelector=spec.nodeName=<node>`, merged with static pods by the pod manager); the same
// reflector keeps the Services that make the service environment variables.
import { ApiClient, ApiStatusError, CREDENTIALS_PENDING, type WatchEvent } from "./api-client.js";
import type { Logger } from "../common/log.js";

export type PodObject = Record<string, any>;

/** client-go's reflector back-off: 800 ms doubling to 30 s, reset after a healthy watch. */
export const RECONNECT_INITIAL_MS = 800;
export const RECONNECT_MAX_MS = 30_000;
/**
 * Watches ask the server to end them after 5 to 10 minutes, picked at random as client-go picks:
 * watches opened together do not all end together.
 */
export const WATCH_TIMEOUT_SECONDS = 300;
const watchTimeoutSeconds = () => WATCH_TIMEOUT_SECONDS + Math.floor(Math.random() * WATCH_TIMEOUT_SECONDS);
/**
 * A watch silent for longer than the server's own end of it is a dead connection (a network that
 * dropped it without a word, common at the edge): it is given up and opened again.
 */
export const WATCH_IDLE_TIMEOUT_MS = (2 * WATCH_TIMEOUT_SECONDS + 30) * 1000;

/**
 * Whether a watch that failed so can go on from the last resourceVersion seen: a connection that
 * broke or went silent lost nothing the server will not send again (a window gone says 410 and is
 * listed); a stream that was not events, or the server's own error, is listed afresh.
 */
function resumable(error: unknown): boolean {
  return error instanceof ApiStatusError && error.reason === "ConnectionFailed";
}

export interface ReflectorOptions {
  client: ApiClient;
  log: Logger;
  /** The collection, e.g. `/api/v1/services`. */
  path: string;
  /** A query selecting part of it (`fieldSelector=...`), or "". */
  selector: string;
  /** What the objects are called in log lines ("pods", "services"). */
  what: string;
  onObjects: (objects: PodObject[]) => void;
  /** Connectivity changes: true once a list succeeded, false when a list or watch failed. */
  onConnected?: (connected: boolean) => void;
  /** A list or watch failed (before the retry): what the apiserver or the connection said. */
  onError?: (error: Error) => void;
  /**
   * List by a watch that first sends the current objects (`sendInitialEvents`, the apiserver's
   * streaming list, as client-go's WatchList does): one request instead of a list and a watch.
   * An apiserver that refuses it is listed the old way from then on.
   */
  streamingList?: boolean;
  /** Overrides WATCH_IDLE_TIMEOUT_MS (tests). */
  watchIdleTimeoutMs?: number;
}

export class Reflector {
  private objects = new Map<string, PodObject>();
  private resourceVersion = "";
  private abort = new AbortController();
  private stopped = false;
  private delayMs = RECONNECT_INITIAL_MS;
  connected = false;
  listCount = 0;
  /** Objects of a streaming list not yet complete (until its initial-events-end bookmark). */
  private pending: Map<string, PodObject> | undefined;
  private streamingRefused = false;
  /** Ends the current wait between attempts (see `wake`). */
  private endSleep?: () => void;

  constructor(private options: ReflectorOptions) {}

  private query(extra: string): string {
    const parts = [this.options.selector, extra].filter((p) => p !== "");
    return parts.length > 0 ? `${this.options.path}?${parts.join("&")}` : this.options.path;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }

  /** Tries again now, with the back-off afresh (the client just got its credentials). */
  wake(): void {
    this.delayMs = RECONNECT_INITIAL_MS;
    this.endSleep?.();
  }

  /** The objects as last seen, by uid. */
  get current(): ReadonlyMap<string, PodObject> {
    return this.objects;
  }

  private setConnected(connected: boolean): void {
    if (this.connected === connected) return;
    this.connected = connected;
    this.options.onConnected?.(connected);
  }

  private async run(): Promise<void> {
    let needList = true;
    while (!this.stopped) {
      let watching = false;
      try {
        const streaming = needList && this.options.streamingList === true && !this.streamingRefused;
        if (needList && !streaming) await this.list();
        needList = false;
        const started = Date.now();
        watching = true;
        try {
          await this.watch(streaming);
        } catch (error) {
          // An apiserver without streaming lists says so with a 4xx: list the old way.
          if (streaming && error instanceof ApiStatusError && error.code >= 400 && error.code < 500 && error.code !== 410 && error.code !== 403) {
            this.streamingRefused = true;
            needList = true;
            continue;
          }
          throw error;
        }
        if (streaming && this.pending) throw new ApiStatusError(0, "ConnectionFailed", `the streaming list of ${this.options.what} ended before its last object`);
        // A watch that lasted is healthy: the next trouble starts the back-off afresh.
        if (Date.now() - started > 10_000) this.delayMs = RECONNECT_INITIAL_MS;
        continue;
      } catch (error) {
        if (this.stopped) return;
        const gone = error instanceof ApiStatusError && error.code === 410;
        if (gone) {
          this.options.log.log("info", `Watch of ${this.options.what} expired (410 Gone); listing again`, {});
          needList = true;
          continue;
        }
        this.setConnected(false);
        this.options.onError?.(error as Error);
        const pending = error instanceof ApiStatusError && error.reason === CREDENTIALS_PENDING;
        const what = this.options.what;
        const message = pending
          ? `Waiting for the node's client certificate before listing ${what}`
          : error instanceof ApiStatusError && error.code === 403
            ? `The apiserver refuses ${what}; retrying`
            : `Cannot reach the apiserver for ${what}; ${what === "pods" ? "pods keep running, " : ""}retrying`;
        this.options.log.log(pending ? "info" : "warn", message, { error: (error as Error).message, retryInMs: this.delayMs });
        await this.sleep(this.delayMs);
        this.delayMs = Math.min(this.delayMs * 2, RECONNECT_MAX_MS);
        // A watch cut by the connection goes on from its resourceVersion (the apiserver says 410 if
        // that window is gone); anything else, and a streaming list not yet whole, starts from a list.
        needList = !(watching && resumable(error) && this.resourceVersion !== "" && this.pending === undefined);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.endSleep = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.endSleep = done;
      this.abort.signal.addEventListener("abort", done, { once: true });
    });
  }

  private async list(): Promise<void> {
    // A streaming list cut short (or refused) leaves nothing half-made behind a real list.
    this.pending = undefined;
    const list = await this.options.client.request("GET", this.query(""));
    // A list that is not a PodList (an answer cut short, a proxy's page) tells nothing: it must
    // not read as "no pods". It fails like a broken connection, and the last pods stay.
    if (list === null || typeof list !== "object" || !Array.isArray(list.items)) {
      throw new ApiStatusError(0, "BadList", `the ${this.options.what} list answer is not a list (no items array)`);
    }
    const objects = new Map<string, PodObject>();
    for (const item of list.items) {
      const uid = item?.metadata?.uid;
      if (typeof uid === "string" && uid) objects.set(uid, item);
      else this.options.log.log("warn", `Ignored one of the listed ${this.options.what} without metadata.uid`, { name: item?.metadata?.name });
    }
    this.objects = objects;
    const rv = list.metadata?.resourceVersion;
    this.resourceVersion = typeof rv === "string" ? rv : "";
    this.listCount++;
    this.delayMs = RECONNECT_INITIAL_MS;
    this.setConnected(true);
    this.deliver();
  }

  private async watch(streaming = false): Promise<void> {
    const from = streaming ? "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=" : `resourceVersion=${encodeURIComponent(this.resourceVersion)}`;
    if (streaming) this.pending = new Map();
    const path = this.query(`watch=1&allowWatchBookmarks=true&${from}&timeoutSeconds=${watchTimeoutSeconds()}`);
    let failure: Error | undefined;
    // This watch's own abort: the reflector stopping, or the connection found dead.
    const watchAbort = new AbortController();
    const stop = () => watchAbort.abort();
    this.abort.signal.addEventListener("abort", stop, { once: true });
    const idleMs = this.options.watchIdleTimeoutMs ?? WATCH_IDLE_TIMEOUT_MS;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        failure ??= new ApiStatusError(0, "ConnectionFailed", `${this.options.what} watch silent for ${idleMs} ms`);
        watchAbort.abort();
      }, idleMs);
    };
    armIdle();
    try {
      await this.options.client.watch(path, (event) => {
        armIdle();
        if (failure) return;
        failure = this.apply(event);
      }, watchAbort.signal, () => {
        // A watch resumed after an outage is the apiserver back (a streaming list says so at its end).
        if (!streaming) this.setConnected(true);
      });
    } finally {
      clearTimeout(idle);
      this.abort.signal.removeEventListener("abort", stop);
    }
    if (failure) throw failure;
  }

  /** Hands the pods on; a failure there is logged, never let loose on the watch stream. */
  private deliver(): void {
    try {
      this.options.onObjects([...this.objects.values()]);
    } catch (error) {
      this.options.log.log("error", `Update of ${this.options.what} not applied`, { error: (error as Error).stack ?? String(error) });
    }
  }

  /** Applies one watch event; returns the error that ends the watch, if any. */
  private apply(event: WatchEvent): Error | undefined {
    const object = event.object ?? {};
    if (event.type === "ERROR") return new ApiStatusError(object.code ?? 500, object.reason ?? "Unknown", object.message ?? "watch error");
    const rv = object.metadata?.resourceVersion;
    if (typeof rv === "string" && rv) this.resourceVersion = rv;
    if (event.type === "BOOKMARK") {
      // The end of a streaming list: what came so far is the whole set, as a list would be.
      if (this.pending && object.metadata?.annotations?.["k8s.io/initial-events-end"] === "true") {
        this.objects = this.pending;
        this.pending = undefined;
        this.listCount++;
        this.delayMs = RECONNECT_INITIAL_MS;
        this.setConnected(true);
        this.deliver();
      }
      return undefined;
    }
    const uid = object.metadata?.uid;
    if (typeof uid !== "string" || !uid) return undefined;
    const target = this.pending ?? this.objects;
    if (event.type === "DELETED") target.delete(uid);
    else target.set(uid, object);
    if (!this.pending) this.deliver();
    return undefined;
  }
}

export interface PodReflectorOptions extends Omit<ReflectorOptions, "path" | "selector" | "what" | "onObjects"> {
  nodeName: string;
  onPods: (pods: PodObject[]) => void;
}

/** The pods bound to this node. */
export class PodReflector extends Reflector {
  constructor(options: PodReflectorOptions) {
    const { nodeName, onPods, ...rest } = options;
    super({ ...rest, path: "/api/v1/pods", selector: `fieldSelector=${encodeURIComponent(`spec.nodeName=${nodeName}`)}`, what: "pods", onObjects: onPods });
  }
}

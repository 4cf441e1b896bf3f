// Upstream's RuntimeClassManager: RuntimeClass objects (node.k8s.io/v1) watched, and a pod's
// `runtimeClassName` turned into the handler CRI runs its sandbox with. The watch runs only while
// a desired pod names a class (a node without RuntimeClasses in use keeps no watch open), and is
// started by the first lookup or by a pod that names one.
import { Reflector, type PodObject } from "./pod-reflector.js";
import type { ApiClient } from "./api-client.js";
import type { Logger } from "../common/log.js";

/** How long a lookup waits for the first list before failing (upstream waits for its informer). */
const SYNC_WAIT_MS = 10_000;
/** A handler is a DNS label (the apiserver checks it too); anything else is not given to CRI. */
const HANDLER = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export class RuntimeClasses {
  private reflector: Reflector | undefined;
  private listed = false;
  private lastError: Error | undefined;
  private waiters: (() => void)[] = [];

  constructor(private options: { client: ApiClient; log: Logger }) {}

  /** Whether a desired pod names a RuntimeClass: the watch starts with the first, stops with the last. */
  inUse(used: boolean): void {
    if (used) this.ensureWatch();
    else this.stop();
  }

  /** The handler of RuntimeClass `name`; rejects with upstream's words when it is not known. */
  async handlerFor(name: string): Promise<string> {
    this.ensureWatch();
    if (!this.listed) await this.waitListed();
    const found = this.find(name);
    if (found === undefined) {
      if (!this.listed) throw new Error(`failed to lookup RuntimeClass ${name}: ${this.lastError?.message ?? "the RuntimeClasses could not be listed"}`);
      throw new Error(`runtimeclass.node.k8s.io "${name}" not found`);
    }
    const handler = found.handler;
    if (typeof handler !== "string" || !HANDLER.test(handler) || handler.length > 63) throw new Error(`RuntimeClass ${name} has an invalid handler`);
    return handler;
  }

  stop(): void {
    this.reflector?.stop();
    this.reflector = undefined;
    this.listed = false;
  }

  private find(name: string): PodObject | undefined {
    for (const object of this.reflector?.current.values() ?? []) if (object?.metadata?.name === name) return object;
    return undefined;
  }

  private ensureWatch(): void {
    if (this.reflector) return;
    const reflector = new Reflector({
      client: this.options.client,
      log: this.options.log,
      path: "/apis/node.k8s.io/v1/runtimeclasses",
      selector: "",
      what: "runtimeclasses",
      onObjects: () => {
        this.listed = true;
        this.lastError = undefined;
        for (const wake of this.waiters.splice(0)) wake();
      },
      onError: (error) => {
        this.lastError = error;
        for (const wake of this.waiters.splice(0)) wake();
      },
    });
    this.reflector = reflector;
    reflector.start();
  }

  private waitListed(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, SYNC_WAIT_MS);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }
}

// The runtime's pushed exits, turned into relists that see them: containerd announces a task's
// exit before its CRI plugin has taken it in (100-200 ms later, once it has deleted the task), so
// a relist at once would still list the container running.
import type { Logger } from "../common/log.js";
import type { Runtime } from "../cri/runtime.js";
import type { TaskExit } from "../cri/runtime-events.js";
import type { Relister } from "../relist/relister.js";

/** How often and how many times a pushed exit is checked until the CRI shows it (0.5 s in all). */
const EXIT_CHECK_MS = 20;
const EXIT_CHECKS = 25;
/** OOM kills remembered until their exit comes; the oldest is dropped past this many. */
const OOM_KILLS_KEPT = 256;

export class ExitWatch {
  /** Exits pushed by the runtime that the CRI does not show yet (container ids). */
  private awaited = new Set<string>();
  /** Containers containerd said the OOM killer hit, until their exit comes. */
  private oomKilled = new Set<string>();

  constructor(
    private runtime: Runtime,
    private relister: Relister,
    private log: Logger,
    /** Asks the core for a relist now. */
    private relistNow: () => void,
    private stopped: () => boolean,
  ) {}

  /** A pushed exit of `containerId`: a relist once the CRI shows it (at most one per container). */
  exited(containerId: string, exit?: TaskExit): void {
    this.log.log("debug", "Relist asked by a runtime event", { containerId, exitCode: exit?.exitCode });
    if (this.awaited.has(containerId)) return;
    this.awaited.add(containerId);
    void this.relistWhenExited(containerId, exit);
  }

  /** containerd's OOM event for a container: its exit, when it comes, reads OOMKilled. */
  oomKill(containerId: string): void {
    if (!containerId) return;
    this.oomKilled.add(containerId);
    if (this.oomKilled.size > OOM_KILLS_KEPT) this.oomKilled.delete(this.oomKilled.values().next().value!);
  }

  /**
   * The one container is asked about (ContainerStatus, a small call) every 20 ms until the
   * runtime says it is not running, for at most half a second, and then the core relists once;
   * that relist takes the runtime's own details from the last answer (one status call fewer per
   * exit). When the event says how the container exited (code and time) and the first answer
   * still says running, that exit is relisted at once (see Relister.pushExit): the replacement
   * need not wait for the CRI. An ID the runtime does not know as a container (a sandbox's
   * pause) is relisted at once.
   */
  private async relistWhenExited(containerId: string, exit?: TaskExit): Promise<void> {
    const oomKilled = this.oomKilled.delete(containerId);
    try {
      for (let check = 0; check < EXIT_CHECKS && !this.stopped(); check++) {
        const detail = await this.runtime.containerStatus(containerId).catch(() => undefined);
        if (detail?.state === "running") {
          if (exit && check === 0) {
            this.relister.pushExit(detail, { ...exit, oomKilled });
            this.log.log("debug", "Exit taken from containerd's event, ahead of its CRI", { containerId, exitCode: exit.exitCode, oomKilled });
            this.relistNow();
          }
          await new Promise((resolve) => setTimeout(resolve, EXIT_CHECK_MS));
          continue;
        }
        // The relist that follows takes these details instead of asking for them again.
        if (detail) this.relister.remember(detail);
        break;
      }
    } finally {
      this.awaited.delete(containerId);
      this.relistNow();
    }
  }
}

// Starts graceful node shutdown for `nanolet run` when the configuration asks for it: the core
// says how long logind must wait, the manager holds logind's lock and follows its signals.
import type { Logger } from "../common/log.js";
import { DEFAULT_SYSTEM_BUS } from "./dbus-connection.js";
import { SystemdLogind } from "./logind.js";
import { NodeShutdownManager } from "./shutdown-manager.js";

export interface NodeShutdownHooks {
  log: Logger;
  /** The delay the core asks for (0: graceful shutdown is off). */
  delayMs: number;
  /** logind's drop-in directory (--logind-conf-dir). */
  confDir: string;
  /** Gives logind's PrepareForShutdown to the core. */
  onShutdownEvent: (active: boolean) => void;
  nodeEvent?: (type: "Normal" | "Warning", reason: string, message: string) => void;
}

/** The manager, watching logind; undefined when graceful shutdown is off. Never throws. */
export function startNodeShutdown(hooks: NodeShutdownHooks): NodeShutdownManager | undefined {
  if (hooks.delayMs <= 0) {
    hooks.log.log("info", "No graceful configuration specified, node shutdown will be immediate");
    return undefined;
  }
  const busAddress = process.env.DBUS_SYSTEM_BUS_ADDRESS || DEFAULT_SYSTEM_BUS;
  const manager = new NodeShutdownManager({
    log: hooks.log,
    delayMs: hooks.delayMs,
    connect: () =>
      SystemdLogind.connect({
        busAddress,
        confDir: hooks.confDir,
        who: "nanolet",
        why: "nanolet needs time to stop the node's pods gracefully",
        onForged: (sender) => hooks.log.log("warn", "Ignored a PrepareForShutdown signal that did not come from logind", { sender: sender.slice(0, 64) }),
      }),
    onShutdownEvent: hooks.onShutdownEvent,
    nodeEvent: hooks.nodeEvent,
  });
  void manager.start();
  return manager;
}

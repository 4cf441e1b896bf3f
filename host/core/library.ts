// The core's pure interfaces (wit/pleg.wit, eviction.wit, qos.wit, cgroups.wit, status.wit,
// restart.wit, probe.wit, image-gc.wit, hardware.wit) for Node.js callers that want one kubelet decision without running the agent.
import { loadComponent } from "./core.js";

type Bindings = Awaited<ReturnType<typeof loadComponent>>["bindings"];

/** One component instance's pure interfaces. Errors of `result<_, string>` functions throw. */
export type CoreLibrary = Pick<Bindings, "pleg" | "eviction" | "qos" | "cgroups" | "status" | "restart" | "probe" | "imageGc" | "hardware">;

export async function loadLibrary(): Promise<CoreLibrary> {
  const { bindings } = await loadComponent();
  const { pleg, eviction, qos, cgroups, status, restart, probe, imageGc, hardware } = bindings;
  return { pleg, eviction, qos, cgroups, status, restart, probe, imageGc, hardware };
}

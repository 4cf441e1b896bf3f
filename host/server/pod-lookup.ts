// Finds a pod's sandbox and containers by namespace, pod name and container name, as the kubelet
// API's paths name them, by asking the runtime (one ListPodSandbox and one ListContainers, a few
// milliseconds at 100 pods), so that the API never disagrees with what really runs.
import path from "node:path";
import {
  LABEL_CONTAINER_NAME,
  LABEL_MANAGED_BY,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  type ContainerInfo,
  type Runtime,
  type SandboxInfo,
} from "../cri/runtime.js";
import { containerLogName, podLogDirectory } from "../logs/log-paths.js";

export interface FoundContainer {
  sandbox: SandboxInfo;
  /** The newest container of that name, and the one before it (`previous`), if any. */
  current?: ContainerInfo;
  previous?: ContainerInfo;
  /** Every instance of that name the runtime holds, newest first, in any sandbox of the pod. */
  all: ContainerInfo[];
  /** The pod's log directory: `<pod-logs-dir>/<ns>_<pod>_<uid>`. */
  logDir: string;
}

export class PodLookup {
  constructor(
    private runtime: Runtime,
    private podLogsDir: string,
  ) {}

  /** The pod's newest sandbox, or undefined when the node runs no such pod. */
  async sandbox(namespace: string, pod: string): Promise<SandboxInfo | undefined> {
    const sandboxes = await this.runtime.listPodSandboxes({ [LABEL_MANAGED_BY]: "true", [LABEL_POD_NAMESPACE]: namespace, [LABEL_POD_NAME]: pod });
    const mine = sandboxes.filter((s) => s.podNamespace === namespace && s.podName === pod);
    mine.sort((a, b) => (a.createdAtNs < b.createdAtNs ? 1 : a.createdAtNs > b.createdAtNs ? -1 : 0));
    return mine.find((s) => s.state === "ready") ?? mine[0];
  }

  /** The pod and its containers named `container`, newest first; undefined when there is no pod. */
  async container(namespace: string, pod: string, container: string): Promise<FoundContainer | undefined> {
    const sandbox = await this.sandbox(namespace, pod);
    if (!sandbox) return undefined;
    const all = await this.runtime.listContainers({ [LABEL_MANAGED_BY]: "true", [LABEL_CONTAINER_NAME]: container });
    const ofPod = all.filter((c) => c.labels[LABEL_POD_NAMESPACE] === namespace && c.labels[LABEL_POD_NAME] === pod && c.name === container);
    ofPod.sort((a, b) => (b.attempt - a.attempt) || (a.createdAtNs < b.createdAtNs ? 1 : -1));
    const inSandbox = ofPod.filter((c) => c.sandboxId === sandbox.id);
    return { sandbox, current: inSandbox[0] ?? ofPod[0], previous: inSandbox[1], all: ofPod, logDir: podLogDirectory(this.podLogsDir, sandbox) };
  }

  /** The log file of attempt `attempt` of `container` (the runtime writes it where the agent asked). */
  static logFile(found: FoundContainer, container: string, attempt: number): string {
    return path.join(found.logDir, containerLogName(container, attempt));
  }
}

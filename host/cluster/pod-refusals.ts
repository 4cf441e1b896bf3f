// What the node says about pods it will not run as given: a new apiserver pod it cannot run fails
// (as upstream's admission failures do), an update of a running pod it cannot apply is told and
// the pod goes on, a refused static manifest becomes a Node event. Each is said once.
import type { Logger } from "../common/log.js";
import type { SourceProblem } from "../sources/static-pods.js";
import type { ApiClient } from "./api-client.js";
import { apiTime } from "./api-status.js";
import type { EventRecorder } from "./events.js";
import type { PodObject } from "./pod-reflector.js";

/** Refused updates remembered as told, at most (then the memory starts again). */
const MAX_TOLD = 1024;

export class PodRefusals {
  /** Apiserver pods failed as refused (by uid): not failed again. */
  private refused = new Set<string>();
  /** Refused updates already told by an event (uid@resourceVersion). */
  private updatesTold = new Set<string>();
  /** Static manifest problems already sent as Node events. */
  private reportedStatic = new Set<string>();
  /** A refusal could not be written: the pods go to the core (and are refused) again next time. */
  retryWanted = false;

  constructor(
    private client: ApiClient,
    private events: EventRecorder,
    private log: Logger,
  ) {}

  has(uid: string): boolean {
    return this.refused.has(uid);
  }

  /** Forgets pods no longer in the apiserver. */
  retain(uids: ReadonlySet<string> | Map<string, unknown>): void {
    for (const uid of this.refused) if (!uids.has(uid)) this.refused.delete(uid);
  }

  /**
   * A refused static manifest has no object in the apiserver: its event is the Node's, naming the
   * file and the field, once per problem (a rescan does not send it again).
   */
  reportStatic(problems: SourceProblem[]): void {
    const next = new Set<string>();
    for (const p of problems) {
      const key = `${p.origin}\u0000${p.field}\u0000${p.message}`;
      next.add(key);
      if (this.reportedStatic.has(key)) continue;
      this.events.recordNode("Warning", "FailedValidation", `Refused pod manifest ${p.origin}: ${p.field ? `${p.field}: ` : ""}${p.message}`);
    }
    this.reportedStatic = next;
  }

  /**
   * An update of a running pod the node cannot apply: the pod goes on as it was; a Warning event
   * says why, once per version of the object (and a log line, when the agent loop has not
   * logged it: an update the host could not read never reaches the loop).
   */
  updateNotApplied(object: PodObject, field: string, message: string, log = false): void {
    const key = `${object.metadata.uid}@${object.metadata.resourceVersion ?? ""}`;
    if (this.updatesTold.has(key)) return;
    if (this.updatesTold.size >= MAX_TOLD) this.updatesTold.clear();
    this.updatesTold.add(key);
    const { namespace, name, uid } = object.metadata;
    const text = field ? `${field}: ${message}` : message;
    if (log) this.log.log("warn", "Pod update not applied; the pod keeps running as it was", { pod: `${namespace}/${name}`, field, error: message });
    this.events.record({ namespace, podName: name, podUid: uid, containerName: "", type: "Warning", reason: "UpdateNotApplied", message: `Pod update not applied, the pod keeps running as it was: ${text}` });
  }

  /** A pod the node cannot run: it fails, with why, as upstream's admission failures do. */
  refuse(object: PodObject, field: string, message: string, admissionReason?: string): void {
    const uid = object.metadata.uid;
    if (this.refused.has(uid) || object.status?.phase === "Failed") return;
    this.refused.add(uid);
    const { namespace, name } = object.metadata;
    const text = field ? `${field}: ${message}` : message;
    // A valid pod this node's admission refuses fails as upstream's rejectPod fails it; a pod
    // nanolet cannot run at all says so.
    const event = admissionReason ? { reason: admissionReason, message } : { reason: "FailedCreate", message: `Pod refused: ${text}` };
    const status = admissionReason
      ? { phase: "Failed", reason: admissionReason, message: `Pod was rejected: ${message}` }
      : { phase: "Failed", reason: "UnsupportedPodSpec", message: `Pod refused by nanolet: ${text}` };
    this.events.record({ namespace, podName: name, podUid: uid, containerName: "", type: "Warning", ...event });
    const body = { metadata: { uid }, status: { ...status, startTime: apiTime(Date.now()) } };
    void this.client
      .request("PATCH", `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/status`, body, "application/strategic-merge-patch+json", { metadataOnly: true })
      .catch((error) => {
        this.refused.delete(uid); // try again with the next change
        this.retryWanted = true;
        this.log.log("warn", "Could not fail a refused pod", { pod: `${namespace}/${name}`, error: (error as Error).message });
      });
  }
}

// Who may do what: system:masters may do anything; a node (user system:node:<name> in group
// system:nodes) only what the Node authorizer and the NodeRestriction admission plugin allow it,
// with the real apiserver's words when it refuses. When in doubt, this refuses.
import { forbidden } from "./status.mjs";

const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";
const NODE_LEASE_NAMESPACE = "kube-node-lease";

export function nodeNameOf(user) {
  if (!user.groups.includes("system:nodes")) return undefined;
  const m = /^system:node:(.+)$/.exec(user.name);
  return m ? m[1] : undefined;
}

/**
 * Throws a 403 unless `user` may do `verb` on the request. `req` holds resource, subresource,
 * namespace, name, fieldSelector (parsed), the stored object (if any) and the new object (if any).
 */
export function authorize(user, verb, req) {
  if (user.groups.includes("system:masters")) return;
  const node = nodeNameOf(user);
  const deny = (why) => {
    throw forbidden(user.name, verb, req.subresource ? `${req.resource}/${req.subresource}` : req.resource, req.name, req.namespace, why);
  };
  if (!node) deny();
  const boundHere = (pod) => pod?.spec?.nodeName === node;
  switch (req.resource) {
    case "services": {
      // system:node may read every Service (for the service environment variables), nothing more.
      if (verb === "get" || verb === "list" || verb === "watch") return;
      deny();
      break;
    }
    case "nodes": {
      if (verb === "get" || verb === "list" || verb === "watch") return;
      if (req.name !== node && !(verb === "create" && req.body?.metadata?.name === node)) {
        deny(`node "${node}" is not allowed to modify node "${req.name ?? req.body?.metadata?.name}"`);
      }
      return;
    }
    case "pods": {
      if (verb === "list" || verb === "watch") {
        if (req.fieldSelector?.["spec.nodeName"] !== node) deny("can only list/watch pods with spec.nodeName field selector");
        return;
      }
      if (req.subresource === "status") {
        // A node may write the status of pods bound to it, but not read it through the subresource.
        if ((verb === "patch" || verb === "update") && boundHere(req.stored)) return;
        deny(`no relationship found between node '${node}' and this object`);
      }
      if (req.subresource) deny();
      if (verb === "get") {
        if (boundHere(req.stored)) return;
        deny(`no relationship found between node '${node}' and this object`);
      }
      if (verb === "create") {
        const pod = req.body;
        if (!pod?.metadata?.annotations?.[MIRROR_ANNOTATION]) deny(`pod does not have "${MIRROR_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
        if (pod.spec?.nodeName !== node) deny(`node "${node}" can only create pods with spec.nodeName set to itself`);
        const owners = pod.metadata?.ownerReferences ?? [];
        if (owners.length > 1) deny(`node "${node}" can only create pods with a single owner reference set to itself`);
        if (owners.length === 1) {
          const owner = owners[0];
          if (owner.apiVersion !== "v1" || owner.kind !== "Node" || owner.name !== node) deny(`node "${node}" can only create pods with an owner reference set to itself`);
          if (owner.controller !== true) deny(`node "${node}" can only create pods with a controller owner reference set to itself`);
          if (owner.blockOwnerDeletion === true) deny(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
          if (req.nodeUid !== undefined && owner.uid !== req.nodeUid) deny(`the UID in the owner reference (${owner.uid}) does not match the current UID of node "${node}"`);
        }
        if (pod.spec?.serviceAccountName) deny(`node "${node}" can not create pods that reference a service account`);
        return;
      }
      if (verb === "delete") {
        if (boundHere(req.stored)) return;
        deny(`node "${node}" can only delete pods with spec.nodeName set to itself`);
      }
      deny(); // update/patch of a pod's spec is not a node's business
      break;
    }
    case "leases": {
      if (req.namespace !== NODE_LEASE_NAMESPACE) deny(`can only access leases in the ${NODE_LEASE_NAMESPACE} namespace`);
      if (verb === "list" || verb === "watch") deny();
      const name = req.name ?? req.body?.metadata?.name;
      if (name !== node) deny(`can only access node lease with the same name as the requesting node`);
      if (verb === "create" || verb === "update" || verb === "patch" || verb === "get" || verb === "delete") {
        const holder = req.body?.spec?.holderIdentity;
        if (holder !== undefined && holder !== node && verb !== "get" && verb !== "delete") deny(`node "${node}" can only set lease holder to itself`);
        return;
      }
      deny();
      break;
    }
    case "events":
      if (verb === "create" || verb === "update" || verb === "patch") return;
      deny();
      break;
    default:
      deny();
  }
}

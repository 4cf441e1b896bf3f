// The node's admission of a pod's nodeSelector and required node affinity (upstream's
// predicate admit handler, NodeAffinity): a pod bound to this node whose selector this node does
// not match is refused, not run. Preferred affinity and pod (anti-)affinity are the scheduler's
// business alone and mean nothing here.

type Json = Record<string, any>;

/** What a node is matched by: its labels, and its fields (`metadata.name`). */
export interface NodeFacts {
  name: string;
  labels: Record<string, string>;
}

/** Upstream's words for the refusal (reason NodeAffinity). */
export const NODE_AFFINITY_MESSAGE = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector";

function matchesRequirement(values: Record<string, string>, requirement: Json): boolean {
  const key = String(requirement?.key ?? "");
  const operator = String(requirement?.operator ?? "");
  const wanted: string[] = Array.isArray(requirement?.values) ? requirement.values.map(String) : [];
  const has = Object.hasOwn(values, key);
  const value = has ? values[key] : undefined;
  switch (operator) {
    case "In":
      return has && wanted.includes(value!);
    case "NotIn":
      return !has || !wanted.includes(value!);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "Gt":
    case "Lt": {
      // One integer value; the label's value must parse as an integer too.
      if (!has || wanted.length !== 1 || !/^-?\d+$/.test(value!) || !/^-?\d+$/.test(wanted[0])) return false;
      return operator === "Gt" ? BigInt(value!) > BigInt(wanted[0]) : BigInt(value!) < BigInt(wanted[0]);
    }
    default:
      return false;
  }
}

/** A term: every label expression and every field expression holds; an empty term matches nothing. */
function matchesTerm(node: NodeFacts, term: Json): boolean {
  const expressions: Json[] = Array.isArray(term?.matchExpressions) ? term.matchExpressions : [];
  const fields: Json[] = Array.isArray(term?.matchFields) ? term.matchFields : [];
  if (expressions.length === 0 && fields.length === 0) return false;
  return expressions.every((r) => matchesRequirement(node.labels, r)) && fields.every((r) => matchesRequirement({ "metadata.name": node.name }, r));
}

/** Whether the pod's nodeSelector and required node affinity let it run on `node`. */
export function matchesNode(spec: Json, node: NodeFacts): boolean {
  const selector = spec.nodeSelector && typeof spec.nodeSelector === "object" ? (spec.nodeSelector as Record<string, unknown>) : {};
  for (const [key, value] of Object.entries(selector)) if (node.labels[key] !== String(value)) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required) {
    const terms: Json[] = Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms : [];
    if (!terms.some((t) => matchesTerm(node, t))) return false;
  }
  return true;
}

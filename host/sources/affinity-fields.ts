// `spec.nodeSelector` and `spec.affinity` checked with the apiserver's rules and words
// (ValidateNodeSelector, validateNodeSelectorRequirement): the node's admission then matches them
// against its labels (host/pod-runtime/node-affinity.ts).
import { FieldReader, isObject } from "./field-reader.js";

const OPERATORS = ["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"];
const FIELD_OPERATORS = ["In", "NotIn"];

function checkRequirement(r: FieldReader, value: unknown, path: string, fieldSelector: boolean): void {
  const req = r.object(value, path, true);
  if (!req) return;
  r.onlyFields(req, path, new Set(["key", "operator", "values"]));
  const key = r.string(req.key, `${path}.key`) ?? "";
  if (key === "") r.add(`${path}.key`, "Required value");
  if (fieldSelector && key !== "" && key !== "metadata.name") r.add(`${path}.key`, `Unsupported value: "${key}": supported values: "metadata.name"`);
  const operator = r.string(req.operator, `${path}.operator`) ?? "";
  const values = r.stringList(req.values, `${path}.values`);
  const allowed = fieldSelector ? FIELD_OPERATORS : OPERATORS;
  if (!allowed.includes(operator)) {
    r.add(`${path}.operator`, `Unsupported value: "${operator}": supported values: ${allowed.map((o) => `"${o}"`).join(", ")}`);
    return;
  }
  if ((operator === "In" || operator === "NotIn") && values.length === 0) r.add(`${path}.values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
  if ((operator === "Exists" || operator === "DoesNotExist") && values.length > 0) r.add(`${path}.values`, "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  if (operator === "Gt" || operator === "Lt") {
    if (values.length !== 1) r.add(`${path}.values`, "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
    else if (!/^-?\d+$/.test(values[0])) r.add(`${path}.values[0]`, `Invalid value: "${values[0]}": must be an integer`);
  }
}

/** nodeSelector (a map of strings) and affinity (node affinity terms checked; the rest the scheduler's). */
export function checkPlacement(r: FieldReader, nodeSelector: unknown, affinity: unknown): void {
  r.stringMap(nodeSelector, "spec.nodeSelector");
  const a = r.object(affinity, "spec.affinity");
  if (!a) return;
  r.onlyFields(a, "spec.affinity", new Set(["nodeAffinity", "podAffinity", "podAntiAffinity"]));
  const node = r.object(a.nodeAffinity, "spec.affinity.nodeAffinity");
  if (!node) return;
  const base = "spec.affinity.nodeAffinity";
  r.onlyFields(node, base, new Set(["requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"]));
  const required = r.object(node.requiredDuringSchedulingIgnoredDuringExecution, `${base}.requiredDuringSchedulingIgnoredDuringExecution`);
  if (required) {
    const termsPath = `${base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    const terms = r.array(required.nodeSelectorTerms, termsPath);
    if (terms.length === 0) r.add(termsPath, "Required value: must have at least one node selector term");
    terms.forEach((term, i) => checkTerm(r, term, `${termsPath}[${i}]`));
  }
  r.array(node.preferredDuringSchedulingIgnoredDuringExecution, `${base}.preferredDuringSchedulingIgnoredDuringExecution`).forEach((p, i) => {
    const path = `${base}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    if (!isObject(p)) return void r.object(p, path, true);
    const weight = r.integer(p.weight, `${path}.weight`);
    if (weight !== undefined && (weight < 1 || weight > 100)) r.add(`${path}.weight`, `Invalid value: ${weight}: must be in the range 1-100`);
    checkTerm(r, p.preference, `${path}.preference`);
  });
}

function checkTerm(r: FieldReader, value: unknown, path: string): void {
  const term = r.object(value, path, true);
  if (!term) return;
  r.onlyFields(term, path, new Set(["matchExpressions", "matchFields"]));
  r.array(term.matchExpressions, `${path}.matchExpressions`).forEach((e, j) => checkRequirement(r, e, `${path}.matchExpressions[${j}]`, false));
  r.array(term.matchFields, `${path}.matchFields`).forEach((e, j) => checkRequirement(r, e, `${path}.matchFields[${j}]`, true));
}

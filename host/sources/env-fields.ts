// `env[].valueFrom` as the core's pod-spec carries it: fieldRef and resourceFieldRef read with the
// apiserver's shape checks; configMapKeyRef and secretKeyRef come with volumes (not yet).
import type { EnvVarSource } from "../core-types.js";
import { FieldReader, NOT_IMPLEMENTED } from "./field-reader.js";

const SOURCES = ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"];

export function envSourceOf(r: FieldReader, value: unknown, field: string): EnvVarSource | undefined {
  if (value === undefined || value === null) return undefined;
  const from = r.object(value, field, true);
  if (!from) return undefined;
  r.onlyFields(from, field, new Set(SOURCES));
  const given = SOURCES.filter((key) => from[key] !== undefined && from[key] !== null);
  if (given.length === 0) {
    r.add(field, 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`');
    return undefined;
  }
  if (given.length > 1) {
    r.add(field, 'Invalid value: "": may not have more than one field specified at a time');
    return undefined;
  }
  const key = given[0];
  const body = r.object(from[key], `${field}.${key}`, true) ?? {};
  if (key === "fieldRef") {
    r.onlyFields(body, `${field}.fieldRef`, new Set(["apiVersion", "fieldPath"]));
    const apiVersion = r.string(body.apiVersion, `${field}.fieldRef.apiVersion`);
    if (apiVersion && apiVersion !== "v1") r.add(`${field}.fieldRef.apiVersion`, `Unsupported value: "${apiVersion}": supported values: "v1"`);
    return { tag: "field-ref", val: r.string(body.fieldPath, `${field}.fieldRef.fieldPath`) ?? "" };
  }
  if (key === "resourceFieldRef") {
    r.onlyFields(body, `${field}.resourceFieldRef`, new Set(["containerName", "resource", "divisor"]));
    const divisor = body.divisor;
    return {
      tag: "resource-field-ref",
      val: {
        containerName: r.string(body.containerName, `${field}.resourceFieldRef.containerName`) ?? "",
        resource: r.string(body.resource, `${field}.resourceFieldRef.resource`) ?? "",
        divisor: typeof divisor === "number" ? String(divisor) : r.string(divisor, `${field}.resourceFieldRef.divisor`) ?? "",
      },
    };
  }
  r.add(`${field}.${key}`, NOT_IMPLEMENTED);
  return undefined;
}

// `env[].valueFrom` as the core's pod-spec carries it: fieldRef and resourceFieldRef read with the
// apiserver's shape checks. configMapKeyRef and secretKeyRef are checked here and resolved by the
// host at creation (host/env/container-env.ts): the core sees them as plain variables.
import type { EnvVarSource } from "../core/types.js";
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
  if (key === "configMapKeyRef" || key === "secretKeyRef") {
    r.onlyFields(body, `${field}.${key}`, new Set(["name", "key", "optional"]));
    const name = r.string(body.name, `${field}.${key}.name`) ?? "";
    if (name === "") r.add(`${field}.${key}.name`, "Required value");
    const objectKey = r.string(body.key, `${field}.${key}.key`) ?? "";
    if (objectKey === "") r.add(`${field}.${key}.key`, "Required value");
    else if (!isConfigKey(objectKey)) r.add(`${field}.${key}.key`, `Invalid value: "${objectKey}": ${CONFIG_KEY_MESSAGE}`);
    r.boolean(body.optional, `${field}.${key}.optional`);
    return undefined;
  }
  r.add(`${field}.${key}`, NOT_IMPLEMENTED);
  return undefined;
}

/** The apiserver's rule for configMap and secret keys (IsConfigMapKey). */
export const CONFIG_KEY_MESSAGE = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

export function isConfigKey(key: string): boolean {
  return key.length <= 253 && /^[-._a-zA-Z0-9]+$/.test(key) && key !== "." && key !== ".." && !key.startsWith("..");
}

/** `envFrom[]`: each a configMapRef or a secretRef, with an optional prefix. */
export function checkEnvFrom(r: FieldReader, value: unknown, field: string): void {
  r.array(value, field).forEach((item, i) => {
    const at = `${field}[${i}]`;
    const source = r.object(item, at, true) ?? {};
    r.onlyFields(source, at, new Set(["prefix", "configMapRef", "secretRef"]));
    const prefix = r.string(source.prefix, `${at}.prefix`) ?? "";
    if (prefix !== "" && !/^[^=]*$/.test(prefix)) r.add(`${at}.prefix`, `Invalid value: "${prefix}": a valid environment variable name must consist only of printable ASCII characters other than '='`);
    const refs = ["configMapRef", "secretRef"].filter((k) => source[k] !== undefined && source[k] !== null);
    if (refs.length !== 1) {
      r.add(at, refs.length === 0 ? 'Invalid value: "": must specify one of: `configMapRef` or `secretRef`' : 'Invalid value: "": may not have more than one field specified at a time');
      return;
    }
    const ref = r.object(source[refs[0]], `${at}.${refs[0]}`, true) ?? {};
    r.onlyFields(ref, `${at}.${refs[0]}`, new Set(["name", "optional"]));
    if (!(r.string(ref.name, `${at}.${refs[0]}.name`) ?? "")) r.add(`${at}.${refs[0]}.name`, "Required value");
    r.boolean(ref.optional, `${at}.${refs[0]}.optional`);
  });
}

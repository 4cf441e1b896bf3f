// The two patch formats a kubelet sends: JSON merge patch (RFC 7386) and strategic merge patch,
// which merges lists of objects by a key (conditions by `type`; container statuses are replaced)
// and honours `$setElementOrder/<list>`, `$patch: delete` and a list's `$patch: replace` element.

/** Merge keys of the object lists a kubelet patches, by field name. Lists without one (the
 * container status lists have no patch strategy in the API types) are replaced whole. */
const MERGE_KEYS = {
  conditions: "type",
  addresses: "type",
  images: undefined,
  podIPs: "ip",
  hostIPs: "ip",
  volumesInUse: undefined,
  volumesAttached: "name",
};

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

export function mergePatch(target, patch) {
  if (!isObject(patch)) return structuredClone(patch);
  const out = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export function strategicMergePatch(target, patch) {
  if (!isObject(patch)) return structuredClone(patch);
  const out = isObject(target) ? { ...target } : {};
  const orders = {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith("$setElementOrder/")) orders[key.slice("$setElementOrder/".length)] = value;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith("$")) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    const mergeKey = MERGE_KEYS[key];
    if (Array.isArray(value) && value.some((v) => isObject(v) && v.$patch === "replace")) out[key] = value.filter((v) => !(isObject(v) && "$patch" in v)).map((v) => structuredClone(v));
    else if (Array.isArray(value) && mergeKey && Array.isArray(out[key])) out[key] = mergeList(out[key], value, mergeKey);
    else if (Array.isArray(value)) out[key] = value.filter((v) => !(isObject(v) && v.$patch === "delete")).map((v) => structuredClone(v));
    else out[key] = strategicMergePatch(out[key], value);
  }
  for (const [key, order] of Object.entries(orders)) {
    const mergeKey = MERGE_KEYS[key];
    if (!mergeKey || !Array.isArray(out[key])) continue;
    const rank = new Map(order.map((o, i) => [o[mergeKey], i]));
    out[key] = [...out[key]].sort((a, b) => (rank.get(a[mergeKey]) ?? Infinity) - (rank.get(b[mergeKey]) ?? Infinity));
  }
  return out;
}

function mergeList(current, patch, mergeKey) {
  const out = current.map((v) => structuredClone(v));
  for (const item of patch) {
    const at = out.findIndex((v) => v[mergeKey] === item[mergeKey]);
    if (item.$patch === "delete") {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = strategicMergePatch(out[at], item);
    else out.push(strategicMergePatch({}, item));
  }
  return out;
}

// Manifest text -> plain values, one per YAML document, with every limit of limits.ts enforced
// where the input enters: nesting measured before the parser recurses, aliases and values counted,
// and a document that refers to itself (an anchor inside its own value) refused as cyclic.
import { isCollection, parseAllDocuments, visit, type Document } from "yaml";
import { MAX_ALIAS_COUNT, MAX_DOCUMENTS_PER_FILE, MAX_DOCUMENT_NODES, MAX_NESTING_DEPTH } from "./limits.js";
import { flowDepthOver } from "./manifest-text.js";

export type DocumentResult =
  | { index: number; ok: true; value: unknown }
  | { index: number; ok: false; field: string; message: string };

/** What is wrong with a parsed value's shape, or undefined: cycles, depth, size. */
export function shapeProblem(root: unknown): { field: string; message: string } | undefined {
  // Depth-first with an explicit stack (a recursive walk is what overflowed before); a value is
  // "open" while its children are walked, and meeting an open value again is a cycle.
  const open = new Set<object>();
  const stack: { value: unknown; path: string; depth: number; leave?: boolean }[] = [{ value: root, path: "", depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const item = stack.pop()!;
    const { value, path, depth } = item;
    if (value === null || typeof value !== "object") {
      nodes++;
      if (nodes > MAX_DOCUMENT_NODES) return { field: path, message: `Too many values: the document has more than ${MAX_DOCUMENT_NODES} (with aliases expanded)` };
      continue;
    }
    if (item.leave) {
      open.delete(value);
      continue;
    }
    if (open.has(value)) return { field: path, message: "Invalid value: the document refers to itself (an alias inside its own anchor's value)" };
    nodes++;
    if (nodes > MAX_DOCUMENT_NODES) return { field: path, message: `Too many values: the document has more than ${MAX_DOCUMENT_NODES} (with aliases expanded)` };
    if (depth >= MAX_NESTING_DEPTH) return { field: path, message: `Too deep: values nest more than ${MAX_NESTING_DEPTH} levels` };
    open.add(value);
    stack.push({ value, path, depth, leave: true });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 });
    } else if (value instanceof Map || value instanceof Set) {
      return { field: path, message: "Invalid type: a map with non-string keys or a set is not a Kubernetes object" };
    } else {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i];
        stack.push({ value: (value as Record<string, unknown>)[key], path: path ? `${path}.${key}` : key, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** Parses every document of a manifest; never throws on any text. */
export function parseManifestDocuments(text: string): DocumentResult[] {
  const deep = flowDepthOver(text, MAX_NESTING_DEPTH);
  if (deep) return [{ index: 0, ok: false, field: "", message: `Too deep: collections nest more than ${MAX_NESTING_DEPTH} levels (line ${deep.line})` }];
  let documents;
  try {
    // logLevel "error": the library's warnings would go to the process's stderr, not to the user.
    documents = parseAllDocuments(text, { prettyErrors: false, logLevel: "error" });
  } catch (error) {
    // The parser's own stack (block nesting the pre-check cannot see) or memory: contained here.
    return [{ index: 0, ok: false, field: "", message: `invalid YAML: ${(error as Error).message}` }];
  }
  const list = Array.isArray(documents) ? documents : [];
  if (list.length > MAX_DOCUMENTS_PER_FILE) {
    return [{ index: 0, ok: false, field: "", message: `Too many documents: ${list.length}; a file may hold at most ${MAX_DOCUMENTS_PER_FILE}` }];
  }
  return list.map((doc, index): DocumentResult => {
    if (doc.errors.length > 0) {
      const messages = doc.errors.slice(0, 3).map((e) => e.message.split("\n")[0]);
      const more = doc.errors.length > 3 ? ` (and ${doc.errors.length - 3} more)` : "";
      return { index, ok: false, field: "", message: `invalid YAML: ${messages.join("; ")}${more}` };
    }
    const complexKey = collectionKey(doc, text);
    if (complexKey !== undefined) {
      return { index, ok: false, field: "", message: `invalid YAML: a map key must be a string, not a collection (line ${complexKey})` };
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const message = /alias/i.test((error as Error).message)
        ? `Too many aliases: expanding them would exceed ${MAX_ALIAS_COUNT} values`
        : `invalid YAML: ${(error as Error).message}`;
      return { index, ok: false, field: "", message };
    }
    const problem = shapeProblem(value);
    if (problem) return { index, ok: false, ...problem };
    return { index, ok: true, value };
  });
}

/** The line of the first map key that is a collection (`? [a, b]`), which JSON cannot hold. */
function collectionKey(doc: Document.Parsed, text: string): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (isCollection(pair.key)) {
        offset = pair.key.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (offset === undefined) return undefined;
  return lineOf(text, offset);
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

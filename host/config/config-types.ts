// What the configuration's readers share: how a field is described, the settings object, and the
// error that stops the agent before it starts.

/** How a field is written: in the file (YAML types) and in /configz. */
export type FieldKind = "duration" | "int" | "bool" | "string" | "list" | "map" | "quantity" | "priority-periods" | "header-map" | "reserved-memory";

/** How a flag's text is read into its field (lists and maps have a flag syntax of their own). */
export type FlagSyntax = "value" | "comma-list" | "less-than-map" | "equals-map" | "colon-multimap" | "reserved-memory";

export interface FieldSpec {
  /** Dotted path in the file (`authentication.anonymous.enabled`). */
  path: string;
  kind: FieldKind;
  /** Upstream's default as /configz shows it (undefined: none, the field is left out). */
  default?: unknown;
  /** Upstream fills a zero value read from the file with the default (its defaulting of `== 0`, `== ""`). */
  zeroIsUnset?: boolean;
  /** The flag that sets it, if any, and how its text reads. */
  flag?: string;
  flagSyntax?: FlagSyntax;
  /** The value without --config, where nanolet's flags default differently from the file (docs/running.md says why). */
  flagDefault?: unknown;
}

/** The settings in effect: a KubeletConfiguration object with every field of FIELDS filled. */
export type KubeletConfiguration = Record<string, any>;

/** A configuration error: the agent refuses to start, naming the field. */
export class ConfigError extends Error {}

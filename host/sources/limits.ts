// The limits nanolet puts on what it reads from a manifest directory (Tiger style: a limit on
// everything). Each is far above what a real static pod needs and far below what would hurt a
// small node: a refused input costs a log line, an accepted one its parse.

/**
 * Bytes of one manifest file. kubeadm's largest control-plane manifest is about 5 KiB and the
 * apiserver stores at most 1.5 MiB per object; parsing YAML costs about 100 bytes of heap per
 * byte of text, so 256 KiB keeps one parse under about 30 MiB on a device with 512 MiB.
 */
export const MAX_MANIFEST_BYTES = 256 * 1024;

/** Documents (`---`) in one file: more than a node may run (`--max-pods`, 110 by default). */
export const MAX_DOCUMENTS_PER_FILE = 128;

/** Manifest files in the directory: about ten times the pods a node may run. */
export const MAX_MANIFEST_FILES = 1000;

/**
 * Symlinks followed from a directory entry to its file. Linux allows 40; a manifest linked
 * through more than 8 is a mistake or a trap, and a loop is refused at once.
 */
export const MAX_SYMLINK_HOPS = 8;

/**
 * Nesting of collections in one document. A Pod's deepest real field (an affinity term) is
 * about 10 levels down; the YAML parser recurses per level, and 10,000 levels overflow its
 * stack, so the text is measured before it is parsed.
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * Values (scalars, maps and lists, with aliases expanded) in one document: a Pod with 64
 * containers of 500 env vars each fits; a "billion laughs" alias bomb does not.
 */
export const MAX_DOCUMENT_NODES = 200_000;

/**
 * Alias expansions the YAML library resolves in one document (its own guard, weighted by the
 * size of what each alias names); the node limit above bounds the total anyway.
 */
export const MAX_ALIAS_COUNT = 10_000;

/** Problems kept for `nanolet pods` and the log per scan; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 200;

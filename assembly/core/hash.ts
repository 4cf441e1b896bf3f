// Spec hash of a container: decides whether a running container still matches its spec.
// Resources are left out on purpose: since in-place resize, a change of resources alone does not
// restart a container (upstream hashes the container without them too).
import { ContainerSpec } from "./model";

const FNV_OFFSET_BASIS: u64 = 0xcbf29ce484222325;
const FNV_PRIME: u64 = 0x100000001b3;

function mixString(hash: u64, text: string): u64 {
  // Length first, so that ["ab", "c"] and ["a", "bc"] differ.
  hash = mixUnit(hash, <u32>text.length);
  for (let i = 0, n = text.length; i < n; i++) hash = mixUnit(hash, <u32>text.charCodeAt(i));
  return hash;
}

function mixUnit(hash: u64, unit: u32): u64 {
  hash ^= <u64>(unit & 0xff);
  hash *= FNV_PRIME;
  hash ^= <u64>((unit >> 8) & 0xffffff);
  hash *= FNV_PRIME;
  return hash;
}

function mixList(hash: u64, items: string[]): u64 {
  hash = mixUnit(hash, <u32>items.length);
  for (let i = 0; i < items.length; i++) hash = mixString(hash, items[i]);
  return hash;
}

/// FNV-1a over the fields that define what runs; 16 lowercase hex digits.
export function containerSpecHash(spec: ContainerSpec): string {
  let hash = FNV_OFFSET_BASIS;
  hash = mixString(hash, spec.name);
  hash = mixString(hash, spec.image);
  hash = mixList(hash, spec.command);
  hash = mixList(hash, spec.args);
  hash = mixUnit(hash, <u32>spec.env.length);
  for (let i = 0; i < spec.env.length; i++) {
    hash = mixString(hash, spec.env[i].name);
    hash = mixString(hash, spec.env[i].value);
    // Mixed in only when present, so that the hash of a container without one is unchanged.
    const source = spec.env[i].valueFrom;
    if (source !== null) {
      hash = mixUnit(hash, <u32>source.tag + 1);
      hash = mixString(hash, source.fieldPath);
      hash = mixString(hash, source.containerName);
      hash = mixString(hash, source.resource);
      hash = mixString(hash, source.divisor);
    }
  }
  const workingDir = spec.workingDir;
  hash = workingDir !== null ? mixString(mixUnit(hash, 1), workingDir) : mixUnit(hash, 0);
  return hash.toString(16).padStart(16, "0");
}

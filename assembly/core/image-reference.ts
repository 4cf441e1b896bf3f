// Image references as the kubelet parses them before a pull (distribution/reference's grammar,
// through ParseNormalizedNamed): `[domain[:port]/]path[:tag][@digest]`. The apiserver accepts any
// image without surrounding whitespace; the kubelet refuses the rest with InvalidImageName and
// never pulls. Hand-written: AssemblyScript has no regular expressions.

function isLower(c: i32): bool {
  return c >= 97 && c <= 122;
}
function isUpper(c: i32): bool {
  return c >= 65 && c <= 90;
}
function isDigit(c: i32): bool {
  return c >= 48 && c <= 57;
}
function isHex(c: i32): bool {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/// `[a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*`: one component of a repository path.
function isPathComponent(s: string): bool {
  const n = s.length;
  if (n == 0) return false;
  let i = 0;
  for (;;) {
    const start = i;
    while (i < n && (isLower(s.charCodeAt(i)) || isDigit(s.charCodeAt(i)))) i++;
    if (i == start) return false;
    if (i == n) return true;
    const c = s.charCodeAt(i);
    if (c == 46) i++; // .
    else if (c == 95) {
      i++; // _ or __
      if (i < n && s.charCodeAt(i) == 95) i++;
    } else if (c == 45) {
      while (i < n && s.charCodeAt(i) == 45) i++; // -+
    } else return false;
    if (i == n) return false;
  }
  return false; // not reached: the loop returns
}

/// A domain: `host[:port]`, the host a dotted name of `[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?`
/// labels or a bracketed IPv6 address.
function isDomain(s: string): bool {
  let host = s;
  const colon = s.lastIndexOf(":");
  if (colon >= 0 && s.indexOf("]", colon) < 0) {
    const port = s.substring(colon + 1);
    if (port.length == 0) return false;
    for (let i = 0; i < port.length; i++) if (!isDigit(port.charCodeAt(i))) return false;
    host = s.substring(0, colon);
  }
  if (host.length == 0) return false;
  if (host.charCodeAt(0) == 91) {
    if (host.charCodeAt(host.length - 1) != 93 || host.length < 3) return false;
    for (let i = 1; i < host.length - 1; i++) {
      const c = host.charCodeAt(i);
      if (!isHex(c) && c != 58) return false;
    }
    return true;
  }
  const labels = host.split(".");
  for (let l = 0; l < labels.length; l++) {
    const label = labels[l];
    if (label.length == 0) return false;
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      const alnum = isLower(c) || isUpper(c) || isDigit(c);
      if (!alnum && !(c == 45 && i > 0 && i < label.length - 1)) return false;
    }
  }
  return true;
}

/// `[\w][\w.-]{0,127}`
function isTag(s: string): bool {
  if (s.length == 0 || s.length > 128) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const word = isLower(c) || isUpper(c) || isDigit(c) || c == 95;
    if (!word && (i == 0 || (c != 46 && c != 45))) return false;
  }
  return true;
}

/// `algorithm:hex`, the algorithm `[A-Za-z][A-Za-z0-9]*` parts joined by `+._-`, hex 32 digits or more.
function isDigest(s: string): bool {
  const colon = s.indexOf(":");
  if (colon <= 0) return false;
  let partStart = true;
  for (let i = 0; i < colon; i++) {
    const c = s.charCodeAt(i);
    if (partStart) {
      if (!isLower(c) && !isUpper(c)) return false;
      partStart = false;
    } else if (c == 43 || c == 46 || c == 95 || c == 45) partStart = true;
    else if (!isLower(c) && !isUpper(c) && !isDigit(c)) return false;
  }
  if (partStart) return false;
  const hex = s.substring(colon + 1);
  if (hex.length < 32) return false;
  for (let i = 0; i < hex.length; i++) if (!isHex(hex.charCodeAt(i))) return false;
  return true;
}

const NAME_TOTAL_MAX = 255;

/// Why the kubelet cannot use `image` as a reference, or "" when it can (the words of
/// distribution/reference: "invalid reference format", "repository name must be lowercase", ...).
export function imageReferenceProblem(image: string): string {
  let rest = image;
  const at = rest.indexOf("@");
  if (at >= 0) {
    if (!isDigest(rest.substring(at + 1))) return "invalid reference format";
    rest = rest.substring(0, at);
  }
  // A tag follows the last colon that comes after the last slash (a domain's port comes before).
  const slash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  let name = rest;
  if (colon > slash) {
    if (!isTag(rest.substring(colon + 1))) return "invalid reference format";
    name = rest.substring(0, colon);
  }
  if (name.length == 0) return "invalid reference format";
  if (name.length > NAME_TOTAL_MAX) return "repository name must not be more than 255 characters";
  const parts = name.split("/");
  let first = 0;
  // The first part is a domain when it has a dot or a port, or is localhost (the normalizer's rule).
  if (parts.length > 1) {
    const p = parts[0];
    if (p.includes(".") || p.includes(":") || p == "localhost" || p != p.toLowerCase()) {
      if (!isDomain(p)) return "invalid reference format";
      first = 1;
    }
  }
  let sawUpper = false;
  for (let i = first; i < parts.length; i++) {
    const part = parts[i];
    if (part != part.toLowerCase()) sawUpper = true;
    if (!isPathComponent(part.toLowerCase())) return "invalid reference format";
  }
  if (sawUpper) return "invalid reference format: repository name must be lowercase";
  if (parts.length == 1 && name.length == 64) {
    let allHex = true;
    for (let i = 0; i < name.length; i++) if (!isHex(name.charCodeAt(i))) allHex = false;
    if (allHex) return "invalid repository name (" + name + "), cannot specify 64-byte hexadecimal strings";
  }
  return "";
}

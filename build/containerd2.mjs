// containerd 2.x for the tests of the CRI event stream (GetContainerEvents, which bookworm's
// containerd 1.6 lacks): Debian's package from a newer suite on the same archive, checked along
// the archive's own chain (InRelease signed by Debian's archive key, the Packages index by its
// SHA256 there, the .deb by its SHA256 in the index) and unpacked into a cache directory, not
// installed: the machine's containerd 1.6 stays what `apt` and the other tests use.
// It runs on bookworm (it needs glibc 2.34) with bookworm's runc (../shared/design/CONTAINERD.md).
//   node build/containerd2.mjs   prints the directory holding containerd, its shim and ctr
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const ARCHIVE = "http://deb.debian.org/debian";
/** The suite carrying containerd 2.x (sid had 2.1 when this was written; trixie has 1.7). */
const SUITE = process.env.NANOLET_CONTAINERD2_SUITE ?? "sid";
const KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg";
const debArch = () => ({ x64: "amd64", arm64: "arm64", arm: "armhf" })[process.arch] ?? process.arch;
const sha256 = (buf) => crypto.createHash("sha256").update(buf).digest("hex");
const log = (msg) => process.stderr.write(`containerd2: ${msg}\n`);

async function download(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

/** The stanza of `name` in a Packages index, as field -> value. */
function packageStanza(index, name) {
  for (const stanza of index.split("\n\n")) {
    const fields = {};
    for (const line of stanza.split("\n")) {
      const m = /^([A-Za-z0-9-]+): (.*)$/.exec(line);
      if (m) fields[m[1]] = m[2];
    }
    if (fields.Package === name) return fields;
  }
  return undefined;
}

/** The SHA256 InRelease gives for `file` (a path under the suite, e.g. main/binary-amd64/Packages.gz). */
function releaseSha256(inRelease, file) {
  const section = inRelease.split(/^SHA256:$/m)[1] ?? "";
  for (const line of section.split("\n")) {
    const m = /^ ([0-9a-f]{64})\s+\d+\s+(\S+)$/.exec(line);
    if (m && m[2] === file) return m[1];
    if (line && !line.startsWith(" ")) break;
  }
  return undefined;
}

/**
 * The directory with containerd 2.x's `containerd`, `containerd-shim-runc-v2` and `ctr`:
 * downloaded and unpacked once into `cacheDir`, then reused.
 */
export async function ensureContainerd2(cacheDir = path.join(os.homedir(), ".cache/nanolet/containerd2")) {
  const binDir = path.join(cacheDir, "usr/bin");
  const stamp = path.join(cacheDir, "version");
  if (fs.existsSync(stamp) && fs.existsSync(path.join(binDir, "containerd"))) return binDir;
  const arch = debArch();
  log(`downloading containerd 2.x from Debian ${SUITE} into ${cacheDir} (unpacked there only, for the containerd2 suite)`);
  const inReleaseFile = path.join(os.tmpdir(), `nanolet-${SUITE}-InRelease`);
  fs.writeFileSync(inReleaseFile, await download(`${ARCHIVE}/dists/${SUITE}/InRelease`));
  // gpgv comes with apt; it checks the signature only (an old mirror's Valid-Until does not matter here).
  execFileSync("gpgv", ["--keyring", KEYRING, inReleaseFile], { stdio: "ignore" });
  const inRelease = fs.readFileSync(inReleaseFile, "utf8");
  fs.rmSync(inReleaseFile);
  const indexPath = `main/binary-${arch}/Packages.gz`;
  const indexSum = releaseSha256(inRelease, indexPath);
  if (!indexSum) throw new Error(`${SUITE}'s InRelease lists no ${indexPath}`);
  const indexGz = await download(`${ARCHIVE}/dists/${SUITE}/${indexPath}`);
  if (sha256(indexGz) !== indexSum) throw new Error(`${indexPath}: SHA256 differs from InRelease`);
  const stanza = packageStanza(zlib.gunzipSync(indexGz).toString("utf8"), "containerd");
  if (!stanza?.Filename || !stanza.SHA256) throw new Error(`no containerd package in ${SUITE}/${arch}`);
  if (!/^2\./.test(stanza.Version)) throw new Error(`${SUITE} has containerd ${stanza.Version}, not 2.x`);
  log(`fetching containerd ${stanza.Version} (${SUITE}, ${arch}, ${Math.round(Number(stanza.Size) / 1048576)} MiB)`);
  const deb = await download(`${ARCHIVE}/${stanza.Filename}`);
  if (sha256(deb) !== stanza.SHA256) throw new Error(`${stanza.Filename}: SHA256 differs from the index`);
  const debFile = path.join(os.tmpdir(), `nanolet-containerd2-${process.pid}.deb`);
  fs.writeFileSync(debFile, deb);
  fs.rmSync(cacheDir, { recursive: true, force: true });
  fs.mkdirSync(cacheDir, { recursive: true });
  execFileSync("dpkg-deb", ["-x", debFile, cacheDir]);
  fs.rmSync(debFile);
  fs.writeFileSync(stamp, `${stanza.Version}\n`);
  return binDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureContainerd2().then((dir) => process.stdout.write(`${dir}\n`), (error) => {
    log(error.message);
    process.exit(1);
  });
}

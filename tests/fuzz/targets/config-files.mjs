// Every file path the configuration names, given something that is not the file it should be
// (issue 36): a device, a fifo, a directory, a file far over its limit, a symlink loop or to any
// of those, the password file of a machine, binary junk, PEM blocks with junk inside. Read as the
// agent reads them: the KubeletConfiguration, the kubelet API's certificate, key and client CA,
// a kubeconfig and what it names. Properties: every read ends (no fifo blocks it, no device is
// read without end: a hang would stop the run), fails with an Error or returns what a regular file of the limit holds, and
// no error quotes what a file holds (each file carries the word SECRET).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { resolveConfig } from "../../../dist/config/kubelet-config.js";
import { readServingFiles } from "../../../dist/server/serving-cert.js";
import { loadKubeconfig } from "../../../dist/cluster/kubeconfig.js";

const KINDS = ["zero", "null", "fifo", "dir", "huge", "loop", "link-fifo", "shadow", "junk", "pem-junk", "empty", "missing"];
export const arbitrary = fc.record({
  field: fc.constantFrom("config", "clientCA", "tlsCert", "tlsKey", "kubeconfig", "kubeconfig-ca", "kubeconfig-token"),
  kind: fc.constantFrom(...KINDS),
  junk: fc.uint8Array({ maxLength: 200 }),
});

export async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-fuzz-files-"));
  execFileSync("mkfifo", [path.join(root, "fifo")]);
  fs.mkdirSync(path.join(root, "dir"));
  fs.writeFileSync(path.join(root, "huge"), "");
  fs.truncateSync(path.join(root, "huge"), 512 * 1024 * 1024);
  fs.symlinkSync("loop2", path.join(root, "loop1"));
  fs.symlinkSync("loop1", path.join(root, "loop2"));
  fs.symlinkSync("fifo", path.join(root, "link-fifo"));
  fs.writeFileSync(path.join(root, "shadow"), "root:$y$j9T$SECRET:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n");
  fs.writeFileSync(path.join(root, "empty"), "");
  return { root, n: 0 };
}

export async function teardown(ctx) {
  fs.rmSync(ctx.root, { recursive: true, force: true });
}

function fileOf(kind, junk, ctx) {
  switch (kind) {
    case "zero": return "/dev/zero";
    case "null": return "/dev/null";
    case "loop": return path.join(ctx.root, "loop1");
    case "missing": return path.join(ctx.root, "missing");
    case "junk": {
      const f = path.join(ctx.root, `junk-${ctx.n++}`);
      fs.writeFileSync(f, Buffer.concat([Buffer.from("SECRET "), Buffer.from(junk)]));
      return f;
    }
    case "pem-junk": {
      const f = path.join(ctx.root, `pem-${ctx.n++}`);
      fs.writeFileSync(f, `-----BEGIN CERTIFICATE-----\nSECRET${Buffer.from(junk).toString("base64")}\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n`);
      return f;
    }
    default: return path.join(ctx.root, kind);
  }
}

export async function property({ field, kind, junk }, ctx) {
  const file = fileOf(kind, junk, ctx);
  try {
    if (field === "config") resolveConfig({ file, flags: {}, hasKubeconfig: true });
    else if (field === "clientCA") readServingFiles(undefined, undefined, file);
    else if (field === "tlsCert") readServingFiles(file, "/dev/null", undefined);
    else if (field === "tlsKey") readServingFiles(path.join(ctx.root, "empty"), file, undefined);
    else if (field === "kubeconfig") loadKubeconfig(file);
    else {
      const kc = path.join(ctx.root, `kc-${ctx.n++}.yaml`);
      const cluster = field === "kubeconfig-ca" ? `    certificate-authority: ${file}\n` : "";
      const user = field === "kubeconfig-token" ? `    tokenFile: ${file}\n` : "    token: t\n";
      fs.writeFileSync(kc, `apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:6443\n${cluster}users:\n- name: u\n  user:\n${user}`);
      loadKubeconfig(kc);
    }
  } catch (error) {
    if (!(error instanceof Error)) throw new Error(`a non-Error was thrown: ${String(error)}`);
    if (/SECRET/.test(error.message)) throw new Error(`an error quotes the file: ${error.message.slice(0, 200)}`);
  }
}

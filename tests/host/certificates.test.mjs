// The certificate manager's pieces on their own: the CSR it sends (checked by openssl, as the
// apiserver would parse it) and when it rotates. Bootstrap and rotation against the real
// controller-manager are in tests/e2e/certificates.e2e.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { newKeyAndRequest } from "../../dist/certificates/csr.js";
import { lifeFrom, rotationDeadlineMs, validityOf } from "../../dist/certificates/certificate-manager.js";

test("the CSR: P-256, the node's name and group, its SANs, a valid self-signature", () => {
  const { keyPem, csrPem } = newKeyAndRequest({ commonName: "system:node:edge-1", organizations: ["system:nodes"], dnsNames: ["edge-1"], ipAddresses: ["10.1.2.3", "fd00::1"] });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-csr-")), "node.csr");
  fs.writeFileSync(file, csrPem);
  const text = execFileSync("openssl", ["req", "-in", file, "-noout", "-verify", "-text"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  assert.match(text, /Subject: O ?= ?system:nodes, CN ?= ?system:node:edge-1/);
  assert.match(text, /ASN1 OID: prime256v1/);
  assert.match(text, /DNS:edge-1, IP Address:10\.1\.2\.3, IP Address:FD00:0:0:0:0:0:0:1/);
  assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
  // The key is the request's: its public half is the one in the request.
  const requestKey = execFileSync("openssl", ["req", "-in", file, "-noout", "-pubkey"], { encoding: "utf8" });
  assert.equal(crypto.createPublicKey(keyPem).export({ type: "spki", format: "pem" }), requestKey);
  // A client CSR carries no SAN extension at all.
  fs.writeFileSync(file, newKeyAndRequest({ commonName: "system:node:n", organizations: ["system:nodes"] }).csrPem);
  assert.doesNotMatch(execFileSync("openssl", ["req", "-in", file, "-noout", "-text"], { encoding: "utf8" }), /Subject Alternative Name/);
});

test("rotation comes at 70-90% of the certificate's life", () => {
  const validity = { notBeforeMs: 1_000_000, notAfterMs: 1_000_000 + 100_000 };
  assert.equal(rotationDeadlineMs(validity, () => 0), 1_070_000);
  assert.equal(rotationDeadlineMs(validity, () => 1), 1_090_000);
  for (let i = 0; i < 100; i++) {
    const at = rotationDeadlineMs(validity);
    assert.ok(at >= 1_070_000 && at <= 1_090_000);
  }
  assert.equal(validityOf("not a certificate"), undefined);
  assert.equal(validityOf(undefined), undefined);
});

test("a backdated short-lived certificate is rotated at 70-90% of the life it has from when it came, never at once", () => {
  // csrsigning: notBefore 5 min before signing, notAfter 60 s after; obtained at 300_000.
  const signed = { notBeforeMs: 0, notAfterMs: 360_000 };
  const obtainedAtMs = 300_000;
  // Of the stretched life, 90% is 24 s after arrival and 70% is before it: both too soon.
  assert.equal(rotationDeadlineMs(signed, () => 1), 324_000);
  const life = lifeFrom(signed, obtainedAtMs);
  assert.deepEqual(life, { notBeforeMs: 300_000, notAfterMs: 360_000 });
  assert.equal(rotationDeadlineMs(life, () => 0), 342_000);
  assert.equal(rotationDeadlineMs(life, () => 1), 354_000);
  // A certificate that came with the kubeconfig, or one obtained before its notBefore, keeps its own.
  assert.deepEqual(lifeFrom(signed, undefined), signed);
  assert.deepEqual(lifeFrom({ notBeforeMs: 500, notAfterMs: 1_000 }, 400), { notBeforeMs: 500, notAfterMs: 1_000 });
});

// (Under the arm64 suite's emulation a Node.js cannot start another: skipped there.)
test("a kubeconfig with a bearer token is used as it is: no bootstrap, no CSR, even with --bootstrap-kubeconfig", { skip: process.env.QEMU_LD_PREFIX ? "an emulated Node.js cannot start another without binfmt" : false }, async (t) => {
  const { FakeApiServer } = await import("../apiserver/fake-apiserver.mjs");
  const { spawn } = await import("node:child_process");
  const api = await FakeApiServer.start({ tokens: { "node-token": { name: "system:node:tok-node", groups: ["system:nodes"] } } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-token-node-"));
  const kubeconfig = (user) => `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${api.url}"}}]\nusers: [{name: u, user: {token: ${user}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`;
  fs.writeFileSync(path.join(dir, "kubelet.conf"), kubeconfig("node-token"));
  fs.writeFileSync(path.join(dir, "bootstrap.conf"), kubeconfig("abcdef.0123456789abcdef"));
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "../../bin/nanolet"), "run",
    "--kubeconfig", path.join(dir, "kubelet.conf"), "--bootstrap-kubeconfig", path.join(dir, "bootstrap.conf"), "--rotate-certificates",
    "--hostname-override", "tok-node", "--root-dir", path.join(dir, "root"), "--pod-manifest-path", path.join(dir, "manifests"),
    "--pod-logs-dir", path.join(dir, "logs"), "--container-runtime-endpoint", `unix://${path.join(dir, "none.sock")}`, "--port", "0", "--healthz-port", "0"], { stdio: "ignore" });
  t.after(async () => {
    child.kill("SIGTERM");
    await api.stop();
  });
  const deadline = Date.now() + 60_000;
  while (api.get("nodes", undefined, "tok-node") === undefined) {
    assert.ok(Date.now() < deadline && child.exitCode === null, "the node registers with its token");
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(api.requests.filter((r) => r.path.includes("certificatesigningrequests")).length, 0);
});

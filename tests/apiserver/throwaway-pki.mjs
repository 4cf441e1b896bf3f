// A throwaway PKI for the TLS fake apiserver, made with openssl: a CA, a serving certificate for
// 127.0.0.1 and a node's client certificate (system:node:<name> in system:nodes).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Writes ca.crt, server.{crt,key}, node.{crt,key} into `dir`; returns their PEM texts. */
export function makeTestPki(dir, node = "a") {
  const ssl = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  ssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test-ca");
  fs.writeFileSync(path.join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
  ssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=apiserver");
  ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "1", "-extfile", "san.ext");
  ssl("req", ...ec, "-keyout", "node.key", "-out", "node.csr", "-subj", `/O=system:nodes/CN=system:node:${node}`);
  ssl("x509", "-req", "-in", "node.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "node.crt", "-days", "1");
  const read = (f) => fs.readFileSync(path.join(dir, f), "utf8");
  return { ca: read("ca.crt"), serverCert: read("server.crt"), serverKey: read("server.key"), nodeCert: read("node.crt"), nodeKey: read("node.key") };
}

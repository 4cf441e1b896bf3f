// The kubelet API's serving certificate: --tls-cert-file and --tls-private-key-file when given;
// otherwise a self-signed one for the node's names and addresses, kept in --cert-dir as
// `kubelet.crt` and `kubelet.key` (the kubelet's names) and made once, with openssl, valid a year.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

export interface ServingCert {
  certPem: string;
  keyPem: string;
  /** Where it came from, for the log. */
  certFile: string;
  selfSigned: boolean;
}

export function loadServingCert(options: { certFile?: string; keyFile?: string; certDir: string; names: string[] }): ServingCert {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) throw new Error("--tls-cert-file and --tls-private-key-file go together");
    return { certPem: fs.readFileSync(options.certFile, "utf8"), keyPem: fs.readFileSync(options.keyFile, "utf8"), certFile: options.certFile, selfSigned: false };
  }
  const certFile = path.join(options.certDir, "kubelet.crt");
  const keyFile = path.join(options.certDir, "kubelet.key");
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) {
    fs.mkdirSync(options.certDir, { recursive: true, mode: 0o700 });
    const names = [...new Set(options.names.filter(Boolean))];
    const sans = names.map((n) => (net.isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(",");
    const cn = names.find((n) => !net.isIP(n)) ?? "nanolet";
    try {
      execFileSync("openssl", [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", `${keyFile}.tmp`, "-out", `${certFile}.tmp`, "-days", "365",
        "-subj", `/CN=${cn}@${Math.floor(Date.now() / 1000)}`,
        "-addext", `subjectAltName=${sans}`, "-addext", "extendedKeyUsage=serverAuth",
      ], { stdio: ["ignore", "ignore", "pipe"] });
    } catch (error) {
      throw new Error(`cannot make a self-signed serving certificate in ${options.certDir} (is openssl installed?): ${(error as Error).message}`);
    }
    fs.chmodSync(`${keyFile}.tmp`, 0o600);
    fs.renameSync(`${keyFile}.tmp`, keyFile);
    fs.renameSync(`${certFile}.tmp`, certFile);
  }
  return { certPem: fs.readFileSync(certFile, "utf8"), keyPem: fs.readFileSync(keyFile, "utf8"), certFile, selfSigned: true };
}

// The kubelet API's serving certificate: --tls-cert-file and --tls-private-key-file when given;
// otherwise a self-signed one for the node's names and addresses, kept in --cert-dir as
// `kubelet.crt` and `kubelet.key` (the kubelet's names) and made once, with openssl, valid a year.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { X509Certificate, createPrivateKey } from "node:crypto";
import { FILE_LIMITS, readBoundedText, pemBlockCount } from "../files/bounded-file.js";

export interface ServingCert {
  certPem: string;
  keyPem: string;
  /** Where it came from, for the log. */
  certFile: string;
  selfSigned: boolean;
}

/** The files the kubelet API is configured with, read and checked before the agent starts. */
export interface ServingFiles {
  cert?: { certPem: string; keyPem: string; certFile: string };
  clientCaPem?: string;
}

/** The PEM certificates in `file`, each parsed; an error naming the field when there is none. */
function readCertificates(file: string, field: string): string {
  const text = readPem(file, field);
  const count = pemBlockCount(text, /^CERTIFICATE$/);
  if (count === 0) throw new Error(`invalid configuration: ${field}: ${file} holds no PEM certificate`);
  for (const m of text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)) {
    try {
      new X509Certificate(m[0]);
    } catch {
      throw new Error(`invalid configuration: ${field}: ${file} holds a certificate that cannot be parsed`);
    }
  }
  return text;
}

function readPem(file: string, field: string): string {
  try {
    return readBoundedText(file, FILE_LIMITS.pemBytes);
  } catch (error) {
    throw new Error(`invalid configuration: ${field}: ${(error as Error).message}`);
  }
}

/**
 * Reads --tls-cert-file, --tls-private-key-file and --client-ca-file: regular files of bounded
 * size holding what their names say. Called before the agent waits for anything.
 */
export function readServingFiles(certFile: string | undefined, keyFile: string | undefined, clientCaFile: string | undefined): ServingFiles {
  const out: ServingFiles = {};
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new Error("invalid configuration: tlsCertFile (--tls-cert-file) and tlsPrivateKeyFile (--tls-private-key-file) go together");
    const certPem = readCertificates(certFile, "tlsCertFile (--tls-cert-file)");
    const keyPem = readPem(keyFile, "tlsPrivateKeyFile (--tls-private-key-file)");
    try {
      createPrivateKey(keyPem);
    } catch {
      throw new Error(`invalid configuration: tlsPrivateKeyFile (--tls-private-key-file): ${keyFile} holds no PEM private key that can be read`);
    }
    out.cert = { certPem, keyPem, certFile };
  }
  if (clientCaFile) out.clientCaPem = readCertificates(clientCaFile, "authentication.x509.clientCAFile (--client-ca-file)");
  return out;
}

export function loadServingCert(options: { given?: ServingFiles["cert"]; certDir: string; names: string[] }): ServingCert {
  if (options.given) return { ...options.given, selfSigned: false };
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
  return { certPem: readBoundedText(certFile, FILE_LIMITS.pemBytes), keyPem: readBoundedText(keyFile, FILE_LIMITS.pemBytes), certFile, selfSigned: true };
}

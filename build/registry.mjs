// A private image registry for the tests about pulls, set up as an operator would: Debian's
// `docker-registry` (distribution 2.8) on loopback with TLS from its own CA and htpasswd (bcrypt)
// accounts; `skopeo` copies the locally built image archives into it; a containerd trusts it
// through a `hosts.toml` in its `config_path` directory (certs.d/<host:port>/).
import { aptInstall } from "./apt.mjs";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";

/** Installs docker-registry, skopeo and htpasswd (apache2-utils) when missing (needs root). */
export function ensureRegistryPackages() {
  const have = (p) => fs.existsSync(p);
  if (have("/usr/bin/docker-registry") && have("/usr/bin/skopeo") && have("/usr/bin/htpasswd")) return;
  aptInstall(["docker-registry", "skopeo", "apache2-utils", "openssl"], "for the image registry of the pull tests");
}

/** A port free on 127.0.0.1 now (the caller binds it next). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const openssl = (...args) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });

/**
 * A registry under `dir`. `start()` makes its CA and certificate, its accounts (`users`: name ->
 * password) and config, and waits until it answers over TLS; `push(archive, name)` copies a
 * docker-archive into it as `<host>/<name>`; `trustFrom(certsDir)` writes the hosts.toml a
 * containerd with `config_path = certsDir` reads; `stop()` ends it.
 */
export class PrivateRegistry {
  constructor(dir, { users = { puller: "right-password" } } = {}) {
    this.dir = dir;
    this.users = users;
    this.child = undefined;
  }

  async start() {
    ensureRegistryPackages();
    fs.mkdirSync(this.dir, { recursive: true });
    this.port = await freePort();
    this.host = `127.0.0.1:${this.port}`;
    const pki = path.join(this.dir, "pki");
    fs.mkdirSync(pki, { recursive: true });
    this.caCert = path.join(pki, "ca.crt");
    const caKey = path.join(pki, "ca.key");
    const cert = path.join(pki, "registry.crt");
    const key = path.join(pki, "registry.key");
    const csr = path.join(pki, "registry.csr");
    const ext = path.join(pki, "registry.ext");
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", caKey, "-out", this.caCert, "-days", "3", "-subj", "/CN=nanolet-test-registry-ca");
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1");
    fs.writeFileSync(ext, "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n");
    openssl("x509", "-req", "-in", csr, "-CA", this.caCert, "-CAkey", caKey, "-CAcreateserial", "-out", cert, "-days", "3", "-extfile", ext);
    // skopeo reads the CAs of a registry from a directory of *.crt files.
    this.certDir = path.join(this.dir, "skopeo-certs");
    fs.mkdirSync(this.certDir, { recursive: true });
    fs.copyFileSync(this.caCert, path.join(this.certDir, "ca.crt"));
    const htpasswd = path.join(this.dir, "htpasswd");
    fs.writeFileSync(htpasswd, Object.entries(this.users).map(([user, password]) =>
      execFileSync("htpasswd", ["-nbB", user, password], { encoding: "utf8" }).trim()).join("\n") + "\n", { mode: 0o600 });
    const config = path.join(this.dir, "config.yml");
    fs.writeFileSync(config, [
      "version: 0.1",
      "log:",
      "  level: warn",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${path.join(this.dir, "storage")}`,
      "  delete:",
      "    enabled: true",
      "http:",
      `  addr: ${this.host}`,
      "  tls:",
      `    certificate: ${cert}`,
      `    key: ${key}`,
      "auth:",
      "  htpasswd:",
      "    realm: nanolet-test",
      `    path: ${htpasswd}`,
      "",
    ].join("\n"));
    const logFd = fs.openSync(path.join(this.dir, "registry.log"), "a");
    this.child = spawn("/usr/bin/docker-registry", ["serve", config], { stdio: ["ignore", logFd, logFd] });
    fs.closeSync(logFd);
    this.exited = new Promise((resolve) => this.child.once("exit", resolve));
    await this.waitAnswering(15_000);
    return this;
  }

  /** Resolves once a TLS handshake with the registry succeeds against its CA. */
  async waitAnswering(timeoutMs) {
    const ca = fs.readFileSync(this.caCert);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = await new Promise((resolve) => {
        const socket = tls.connect({ host: "127.0.0.1", port: this.port, ca }, () => (socket.destroy(), resolve(true)));
        socket.once("error", () => resolve(false));
      });
      if (ok) return;
      if (this.child.exitCode !== null) throw new Error(`docker-registry exited: ${fs.readFileSync(path.join(this.dir, "registry.log"), "utf8").slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`docker-registry did not answer on ${this.host} in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Copies the docker-archive `archive` into the registry as `<host>/<name>` (e.g. `team/app:1`); returns that reference. */
  push(archive, name) {
    const [user, password] = Object.entries(this.users)[0];
    const ref = `${this.host}/${name}`;
    execFileSync("skopeo", ["copy", "--quiet", "--dest-creds", `${user}:${password}`, "--dest-cert-dir", this.certDir, `docker-archive:${archive}`, `docker://${ref}`], { stdio: ["ignore", "ignore", "pipe"] });
    return ref;
  }

  /** The image's manifest digest in the registry (`sha256:...`). */
  digestOf(name) {
    const [user, password] = Object.entries(this.users)[0];
    return execFileSync("skopeo", ["inspect", "--format", "{{.Digest}}", "--creds", `${user}:${password}`, "--cert-dir", this.certDir, `docker://${this.host}/${name}`], { encoding: "utf8" }).trim();
  }

  /** Writes `<certsDir>/<host>/hosts.toml`: containerd trusts the registry's CA for this host. */
  trustFrom(certsDir) {
    const hostDir = path.join(certsDir, this.host);
    fs.mkdirSync(hostDir, { recursive: true });
    fs.copyFileSync(this.caCert, path.join(hostDir, "ca.crt"));
    fs.writeFileSync(path.join(hostDir, "hosts.toml"), [
      `server = "https://${this.host}"`,
      "",
      `[host."https://${this.host}"]`,
      '  capabilities = ["pull", "resolve"]',
      `  ca = "${path.join(hostDir, "ca.crt")}"`,
      "",
    ].join("\n"));
  }

  /** The registry's own log (requests it refused show here). */
  log() {
    return fs.readFileSync(path.join(this.dir, "registry.log"), "utf8");
  }

  async stop() {
    if (!this.child || this.child.exitCode !== null) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

// Debian packages the build, `npm start` and `npm test` need, installed only where missing and
// announced first: what is installed, and why. Packages already present are never upgraded.
import { execFileSync } from "node:child_process";

function installed(pkg) {
  try {
    return execFileSync("dpkg-query", ["-W", "-f=${Status}", pkg], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }) === "install ok installed";
  } catch {
    return false;
  }
}

/** Installs those of `packages` that are missing (needs root); `why` says what they are for. */
export function aptInstall(packages, why) {
  const missing = packages.filter((p) => !installed(p));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`${missing.join(" ")} missing (${why}), and not root to install them`);
  process.stderr.write(`apt: installing ${missing.join(" ")} from Debian, ${why}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-q"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-q", "--no-upgrade", ...missing], { stdio: "inherit", env });
}

// `nanolet version`.
import { BUNDLED } from "../common/asset-paths.js";
import { KUBELET_VERSION } from "../cluster/node-object.js";
import { NANOLET_VERSION } from "../common/version.js";

/** The version of this build (package.json's), the kubelet it follows, and where it runs. */
export function versionText(): string {
  return `nanolet ${NANOLET_VERSION} (kubelet ${KUBELET_VERSION}; node ${process.version} ${process.platform}/${process.arch}${BUNDLED ? "" : "; from the source tree"})\n`;
}


// Where nanolet's non-code files are: in the repository (dist/ beside build/out/ and host/) or,
// in the artifact that `npm run artifact` builds, beside the one bundled file (lib/). The bundler
// defines NANOLET_BUNDLED; compiled by tsc it is undefined.
import path from "node:path";
import { fileURLToPath } from "node:url";

declare const NANOLET_BUNDLED: boolean | undefined;

/** True when running from the bundled artifact. */
export const BUNDLED = typeof NANOLET_BUNDLED !== "undefined" && NANOLET_BUNDLED === true;

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository, from dist/common/ (tsc's output of this file). */
const repository = path.join(here, "../..");

/** The component's JS bindings and core modules (jco's output). */
export const CORE_BINDINGS_DIR = BUNDLED ? path.join(here, "core-js") : path.join(repository, "build/out/core-js");
/** The CRI proto the gRPC client is made from. */
export const CRI_PROTO_PATH = BUNDLED ? path.join(here, "runtime-v1.proto") : path.join(repository, "host/cri/runtime-v1.proto");
/** The device plugin API (v1beta1), the plugin registration API (v1) and CSI's node side (v1). */
export const DEVICE_PLUGIN_PROTO_PATH = BUNDLED ? path.join(here, "deviceplugin-v1beta1.proto") : path.join(repository, "host/devices/deviceplugin-v1beta1.proto");
export const PLUGIN_REGISTRATION_PROTO_PATH = BUNDLED ? path.join(here, "pluginregistration-v1.proto") : path.join(repository, "host/devices/pluginregistration-v1.proto");
export const CSI_PROTO_PATH = BUNDLED ? path.join(here, "csi-v1.proto") : path.join(repository, "host/csi/csi-v1.proto");
/** The simulator report page's script. */
export const REPORT_SCRIPT_PATH = BUNDLED ? path.join(here, "report-browser.js") : path.join(repository, "build/out/report/browser.js");
/** The artifact's root directory (bin/, lib/), when bundled. */
export const ARTIFACT_DIR = BUNDLED ? path.dirname(here) : undefined;

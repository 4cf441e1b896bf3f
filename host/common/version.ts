// nanolet's own version (package.json's "version"; a test keeps the two equal).
export const NANOLET_VERSION = "0.1.0";

// Headless Chromium from Debian (package `chromium`), driven by playwright-core: a real browser,
// not a DOM emulation. The flags keep it off this machine's closed network.
import { chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.NANOLET_CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

// A private system bus for the graceful shutdown tests: Debian's dbus-daemon with a system-type
// configuration on a socket of the test's own, and the logind stand-in (tests/fixtures/
// fake-logind.py) on it. Nothing of the machine's own bus or logind is touched.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { aptInstall } from "../../build/apt.mjs";
import { repo, waitFor } from "./harness.mjs";

const BUS_CONFIG = (socket) => `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow send_type="signal"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
`;

function have(file) {
  return fs.existsSync(file);
}

/** dbus-daemon, systemd-inhibit (systemd) and python3, installed when missing (needs root). */
export function ensureBusTools() {
  if (have("/usr/bin/dbus-daemon") && have("/usr/bin/systemd-inhibit") && (have("/usr/bin/python3") || whichPython())) return;
  aptInstall(["dbus-daemon", "systemd", "python3"], "for the graceful node shutdown tests");
}

function whichPython() {
  try {
    return execFileSync("sh", ["-c", "command -v python3"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

/** Starts a dbus-daemon on `dir`/bus.sock; returns its address and a stop function. */
export async function startSystemBus(dir) {
  ensureBusTools();
  fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(dir, "bus.sock");
  const config = path.join(dir, "bus.conf");
  fs.writeFileSync(config, BUS_CONFIG(socket));
  const proc = spawn("dbus-daemon", [`--config-file=${config}`, "--nofork", "--nopidfile"], { stdio: "ignore" });
  await waitFor("the private system bus", () => fs.existsSync(socket), 10_000);
  return { address: `unix:path=${socket}`, socket, stop: () => proc.kill() };
}

/**
 * The logind stand-in on `bus`, with its drop-in directory and InhibitDelayMaxSec. Its events
 * (inhibit, released, shutdown-proceeds, reloaded) collect in `events`; `send` writes a command.
 */
export async function startFakeLogind(bus, confDir, delaySeconds) {
  const proc = spawn(whichPython() || "python3", [path.join(repo, "tests/fixtures/fake-logind.py"), bus.socket, confDir, String(delaySeconds)], { stdio: ["pipe", "pipe", "inherit"] });
  const events = [];
  readline.createInterface({ input: proc.stdout }).on("line", (line) => {
    try {
      events.push({ ...JSON.parse(line), atMs: Date.now() });
    } catch {
      // not an event
    }
  });
  await waitFor("the logind stand-in", () => events.some((e) => e.event === "ready"), 10_000);
  return {
    events,
    send: (command) => proc.stdin.write(`${command}\n`),
    stop: () => proc.kill(),
  };
}

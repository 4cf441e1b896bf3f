// The node's network, swap and I/O pressure for /stats/summary, from a made-up /sys and /proc.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { nodeIo, nodeNetwork, nodeSwap, parsePsi } from "../../dist/node/node-extras.js";

const time = "2026-12-07T00:00:00.000Z";

function fakeSys(interfaces) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-sys-"));
  for (const [name, [rx, tx]] of Object.entries(interfaces)) {
    const dir = path.join(root, "class/net", name, "statistics");
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, value] of [["rx_bytes", rx], ["tx_bytes", tx], ["rx_errors", 1], ["tx_errors", 2]]) fs.writeFileSync(path.join(dir, file), `${value}\n`);
  }
  return root;
}

test("network: loopback and container veths left out, eth0's figures at the top", () => {
  const sys = fakeSys({ lo: [9, 9], "veth1234": [5, 5], enp1s0: [100, 200], eth0: [300, 400] });
  const net = nodeNetwork(time, sys);
  assert.deepEqual(net.interfaces.map((i) => i.name), ["enp1s0", "eth0"]);
  assert.equal(net.name, "eth0");
  assert.equal(net.rxBytes, 300);
  assert.equal(net.txErrors, 2);
  const noEth0 = nodeNetwork(time, fakeSys({ wlan0: [7, 8] }));
  assert.equal(noEth0.name, "wlan0", "the first interface when there is no eth0");
  assert.equal(nodeNetwork(time, path.join(sys, "none")), undefined);
});

test("swap: free and used bytes, 0 and 0 without swap", () => {
  assert.deepEqual(nodeSwap(time, new Map([["SwapTotal", 4096], ["SwapFree", 1024]])), { time, swapAvailableBytes: 1024, swapUsageBytes: 3072 });
  assert.deepEqual(nodeSwap(time, new Map()), { time, swapAvailableBytes: 0, swapUsageBytes: 0 });
});

test("io: the pressure stall information of /proc/pressure/io", () => {
  const proc = fs.mkdtempSync(path.join(os.tmpdir(), "nanolet-proc-"));
  fs.mkdirSync(path.join(proc, "pressure"));
  fs.writeFileSync(path.join(proc, "pressure/io"), "some avg10=1.98 avg60=1.79 avg300=0.73 total=20068421\nfull avg10=1.50 avg60=1.32 avg300=0.36 total=11527676\n");
  assert.deepEqual(nodeIo(time, proc), { time, psi: { full: { total: 11527676, avg10: 1.5, avg60: 1.32, avg300: 0.36 }, some: { total: 20068421, avg10: 1.98, avg60: 1.79, avg300: 0.73 } } });
  assert.equal(parsePsi("some avg10=1 avg60=1 avg300=1 total=1\n"), undefined, "both lines or nothing");
  assert.equal(nodeIo(time, path.join(proc, "none")), undefined);
});

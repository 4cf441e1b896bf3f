// The local control socket: `nanolet pods` asks the running agent over a unix socket (HTTP, GET
// /pods). Only the owner of the root directory can reach it (the socket is created 0600).
import fs from "node:fs";
import http from "node:http";
import v8 from "node:v8";
import { reliefCollections } from "../common/memory-relief.js";
import type { PodTable } from "../agent/pod-table.js";

export function startControlSocket(socketPath: string, table: PodTable): Promise<http.Server> {
  try {
    fs.unlinkSync(socketPath); // a stale socket from a previous run
  } catch {}
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/pods") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(table.snapshot()));
      return;
    }
    if (req.method === "GET" && req.url === "/debug/memory") {
      // The agent's memory as V8 sees it, to tell live objects from pages kept after a burst.
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ process: process.memoryUsage(), heapSpaces: v8.getHeapSpaceStatistics(), reliefCollections: reliefCollections() }));
      return;
    }
    if (req.method === "GET" && req.url === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      fs.chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

export function fetchPods(socketPath: string, timeoutMs = 2000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: "/pods", timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => {
        try {
          resolve(JSON.parse(body));
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
  });
}

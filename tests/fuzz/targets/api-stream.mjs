// Apiserver responses and watch streams, from a real HTTP server on loopback that answers with
// the fuzzed bytes: truncated JSON, garbage, huge lines, wrong types, objects without uids,
// resourceVersions out of order, errors, a stream that sends garbage then closes. They go through
// the real ApiClient and PodReflector, and every pod delivered through podFromApiObject and the
// core. Properties: nothing throws past its boundary (the process stays up); the reflector only
// delivers pods with a uid; every refusal has words; the core never traps.
import http from "node:http";
import fc from "fast-check";
import { ApiClient, ApiStatusError } from "../../../dist/cluster/api-client.js";
import { PodReflector } from "../../../dist/cluster/pod-reflector.js";
import { ManifestError, podFromApiObject } from "../../../dist/sources/manifest.js";
import { CoreAgent, CoreTrapError, DEFAULT_CORE_CONFIG } from "../../../dist/core/core.js";
import { anyJson, podObject, someString } from "./pod-values.mjs";

const apiPod = podObject.chain((p) =>
  fc.record({ uid: fc.oneof(fc.uuid(), someString, anyJson), rv: fc.oneof(fc.nat().map(String), someString) }).map(({ uid, rv }) => ({
    ...p,
    metadata: { ...(typeof p.metadata === "object" && p.metadata && !Array.isArray(p.metadata) ? p.metadata : {}), uid, resourceVersion: rv, namespace: "default" },
  })),
);
const event = fc.oneof(
  fc.record({ type: fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "WEIRD"), object: fc.oneof({ weight: 4, arbitrary: apiPod }, { weight: 1, arbitrary: anyJson }) }),
  anyJson,
);
/** One line of a watch stream: an event as JSON, or bytes that are not one. */
const line = fc.oneof(
  { weight: 6, arbitrary: event.map((e) => JSON.stringify(e) ?? "null") },
  { weight: 1, arbitrary: event.chain((e) => fc.nat().map((cut) => { const t = JSON.stringify(e) ?? ""; return t.slice(0, cut % (t.length + 1)); })) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 100 }) },
);
/** Now and then one huge line: within the line limit (an object near etcd's 1.5 MiB) or past it. */
const hugeLine = fc.constantFrom(1, 5).map((mb) => `{"type":"ADDED","object":{"metadata":{"uid":"big","name":"${"x".repeat(mb * 1024 * 1024)}"}}}`);
const lines = fc.oneof({ weight: 30, arbitrary: fc.array(line, { maxLength: 12 }) }, { weight: 1, arbitrary: fc.tuple(fc.array(line, { maxLength: 3 }), hugeLine).map(([l, h]) => [...l, h]) });
const listBody = fc.oneof(
  fc.array(apiPod, { maxLength: 5 }).map((items) => JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "7" }, items })),
  anyJson.map((j) => JSON.stringify(j) ?? ""),
  fc.string({ maxLength: 100 }),
);

export const arbitrary = fc.record({
  listStatus: fc.constantFrom(200, 200, 200, 410, 500, 403),
  list: listBody,
  watchStatus: fc.constantFrom(200, 200, 200, 410, 500),
  lines,
  chunk: fc.integer({ min: 1, max: 4096 }),
  endWithNewline: fc.boolean(),
});

export async function setup() {
  const ctx = { input: undefined, core: await CoreAgent.create({ nodeName: "fuzz", ...DEFAULT_CORE_CONFIG }) };
  ctx.server = http.createServer((req, res) => {
    const input = ctx.input;
    const watching = /[?&]watch=1/.test(req.url ?? "");
    res.writeHead(watching ? input.watchStatus : input.listStatus, { "content-type": "application/json" });
    const body = watching ? input.lines.join("\n") + (input.endWithNewline ? "\n" : "") : input.list;
    const bytes = Buffer.from(body);
    // In pieces of `chunk` bytes, so that lines and characters are split across reads.
    for (let i = 0; i < bytes.length; i += input.chunk) res.write(bytes.subarray(i, i + input.chunk));
    res.end();
  });
  await new Promise((resolve) => ctx.server.listen(0, "127.0.0.1", resolve));
  ctx.client = new ApiClient({ server: `http://127.0.0.1:${ctx.server.address().port}` });
  return ctx;
}

export async function teardown(ctx) {
  ctx.client.close();
  ctx.server.close();
}

const quietLog = { log() {} };

export async function property(input, ctx) {
  ctx.input = input;
  const delivered = [];
  const reflector = new PodReflector({ client: ctx.client, nodeName: "fuzz", log: quietLog, onPods: (pods) => delivered.push(pods) });
  // One list and one watch, as the reflector's loop makes them (the loop itself retries forever).
  try {
    await reflector["list"]();
    await reflector["watch"]();
  } catch (error) {
    if (!(error instanceof ApiStatusError)) throw new Error(`the reflector let a non-API error out: ${error?.stack ?? error}`);
  }
  reflector.stop();
  for (const pods of delivered) {
    for (const object of pods) {
      if (typeof object?.metadata?.uid !== "string" || object.metadata.uid === "") throw new Error(`a pod without a uid was delivered: ${JSON.stringify(object).slice(0, 200)}`);
    }
    const specs = [];
    for (const object of pods) {
      try {
        specs.push(podFromApiObject(object));
      } catch (error) {
        if (!(error instanceof ManifestError)) throw new Error(`podFromApiObject threw ${error?.stack ?? error}`);
        if (!error.message) throw new Error("a refusal without words");
      }
    }
    try {
      ctx.core.handlePods(0, specs);
    } catch (error) {
      if (error instanceof CoreTrapError) throw new Error(`the core trapped: ${error.message}`);
      throw error;
    }
  }
}

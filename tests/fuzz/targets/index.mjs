// Every fuzz target by name: each exports `arbitrary`, `property(input, ctx)` and optionally
// `setup()` / `teardown(ctx)`.
import * as manifestText from "./manifest-text.mjs";
import * as manifestDir from "./manifest-dir.mjs";
import * as apiStream from "./api-stream.mjs";
import * as criResponses from "./cri-responses.mjs";
import * as criWire from "./cri-wire.mjs";
import * as witPure from "./wit-pure.mjs";
import * as agentRecords from "./agent-records.mjs";
import * as traceReader from "./trace-reader.mjs";
import * as subpathRace from "./subpath-race.mjs";
import * as configFiles from "./config-files.mjs";
import * as apiConnections from "./api-connections.mjs";
import * as hardwareState from "./hardware-state.mjs";

export const TARGETS = {
  "manifest-text": manifestText,
  "manifest-dir": manifestDir,
  "api-stream": apiStream,
  "cri-responses": criResponses,
  "cri-wire": criWire,
  "wit-pure": witPure,
  "agent-records": agentRecords,
  "trace-reader": traceReader,
  "subpath-race": subpathRace,
  "config-files": configFiles,
  "api-connections": apiConnections,
  "hardware-state": hardwareState,
};

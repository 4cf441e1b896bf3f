// A container's environment as the kubelet makes it: $(VAR) expansion with upstream's rules (the
// cases of its expansion tests), fieldRef and resourceFieldRef values, and command/args expanded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { containerEnvironment, expand, EnvError } from "../../dist/env/container-env.js";
import { podFromApiObject } from "../../dist/sources/manifest.js";

const vars = new Map([["VAR_A", "A"], ["VAR_B", "B"], ["VAR_C", "C"], ["VAR_REF", "$(VAR_A)"], ["VAR_EMPTY", ""]]);
const lookup = (name) => vars.get(name);

test("expansion: references, escapes, unknown and unclosed references", () => {
  const cases = [
    ["$(VAR_A)", "A"],
    ["___$(VAR_B)___", "___B___"],
    ["$(VAR_A)-$(VAR_A)", "A-A"],
    ["$(VAR_A)-1", "A-1"],
    ["$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"],
    ["$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"],
    ["$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"],
    ["f000-$$VAR_A", "f000-$VAR_A"],
    ["foo\\$(VAR_C)bar", "foo\\Cbar"],
    ["foo\\\\$(VAR_C)bar", "foo\\\\Cbar"],
    ["$(VAR_A)$(VAR_B)$(VAR_C)", "ABC"],
    ["$(VAR_REF)", "$(VAR_A)"],
    ["$(VAR_EMPTY)", ""],
    ["$(UNKNOWN)", "$(UNKNOWN)"],
    ["$(VAR_A", "$(VAR_A"],
    ["$(", "$("],
    ["$()", "$()"],
    ["$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"],
    ["$$$$$$$(VAR_A)", "$$$A"],
    ["$VAR_A", "$VAR_A"],
    ["$", "$"],
    ["$$", "$"],
    ["foo$", "foo$"],
    ["", ""],
  ];
  for (const [input, want] of cases) assert.equal(expand(input, lookup), want, JSON.stringify(input));
});

const facts = (over = {}) => ({
  name: "web", namespace: "shop", uid: "u-1", labels: { app: "web" }, annotations: { "example.com/x": "y" },
  nodeName: "edge-1", serviceAccountName: "builder", hostIps: ["10.0.0.5"], podIps: ["10.88.0.7"],
  containers: [], allocatable: { cpu: "4", memory: "8Gi", "ephemeral-storage": "0" }, ...over,
});

const container = (env, over = {}) => ({
  name: "app", image: "busybox", command: ["run", "--ip=$(MY_IP)"], args: ["$(GREETING) $(NAME)", "$$(NAME)"], env,
  workingDir: undefined, requests: [{ name: "cpu", quantity: "250m" }], limits: [{ name: "memory", quantity: "64Mi" }],
  restartOnResize: [], ports: [], restartPolicy: "", imagePullPolicy: "", ...over,
});

test("fieldRef, resourceFieldRef and literal values, in order, then command and args", () => {
  const c = container([
    { name: "NAME", value: "", valueFrom: { tag: "field-ref", val: "metadata.name" } },
    { name: "NS", value: "", valueFrom: { tag: "field-ref", val: "metadata.namespace" } },
    { name: "APP", value: "", valueFrom: { tag: "field-ref", val: "metadata.labels['app']" } },
    { name: "NOTE", value: "", valueFrom: { tag: "field-ref", val: "metadata.annotations['example.com/x']" } },
    { name: "MISSING", value: "", valueFrom: { tag: "field-ref", val: "metadata.labels['nope']" } },
    { name: "MY_IP", value: "", valueFrom: { tag: "field-ref", val: "status.podIP" } },
    { name: "HOST", value: "", valueFrom: { tag: "field-ref", val: "status.hostIP" } },
    { name: "NODE", value: "", valueFrom: { tag: "field-ref", val: "spec.nodeName" } },
    { name: "SA", value: "", valueFrom: { tag: "field-ref", val: "spec.serviceAccountName" } },
    { name: "MEM_MI", value: "", valueFrom: { tag: "resource-field-ref", val: { containerName: "", resource: "limits.memory", divisor: "1Mi" } } },
    { name: "CPU_M", value: "", valueFrom: { tag: "resource-field-ref", val: { containerName: "", resource: "requests.cpu", divisor: "1m" } } },
    { name: "CPU_LIMIT", value: "", valueFrom: { tag: "resource-field-ref", val: { containerName: "", resource: "limits.cpu", divisor: "" } } },
    { name: "GREETING", value: "hello $(NAME) in $(NS), not $(LATER)" },
    { name: "LATER", value: "late" },
  ]);
  const out = containerEnvironment(c, facts());
  const env = Object.fromEntries(out.env.map((e) => [e.name, e.value]));
  assert.deepEqual(env, {
    NAME: "web", NS: "shop", APP: "web", NOTE: "y", MISSING: "", MY_IP: "10.88.0.7", HOST: "10.0.0.5", NODE: "edge-1", SA: "builder",
    MEM_MI: "64", CPU_M: "250", CPU_LIMIT: "4", GREETING: "hello web in shop, not $(LATER)", LATER: "late",
  });
  assert.deepEqual(out.command, ["run", "--ip=10.88.0.7"]);
  assert.deepEqual(out.args, ["hello web in shop, not $(LATER) web", "$(NAME)"]);
});

test("a resourceFieldRef of another container; a missing container is an error", () => {
  const other = container([], { name: "sidecar", limits: [{ name: "cpu", quantity: "1500m" }] });
  const c = container([{ name: "SIDE_CPU", value: "", valueFrom: { tag: "resource-field-ref", val: { containerName: "sidecar", resource: "limits.cpu", divisor: "1" } } }]);
  assert.equal(containerEnvironment(c, facts({ containers: [other] })).env[0].value, "2", "CPU rounds up");
  assert.throws(() => containerEnvironment(c, facts()), EnvError);
});

test("a manifest's valueFrom is read, and refused with the apiserver's words when malformed", () => {
  const pod = (env) => ({ metadata: { name: "p", namespace: "d", uid: "u" }, spec: { containers: [{ name: "app", image: "busybox", env }] } });
  const spec = podFromApiObject(pod([
    { name: "A", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
    { name: "B", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
  ]));
  assert.deepEqual(spec.containers[0].env, [
    { name: "A", value: "", valueFrom: { tag: "field-ref", val: "status.podIP" } },
    { name: "B", value: "", valueFrom: { tag: "resource-field-ref", val: { containerName: "", resource: "limits.memory", divisor: "1Mi" } } },
  ]);
  assert.throws(() => podFromApiObject(pod([{ name: "A", valueFrom: {} }])), /must specify one of/);
  assert.throws(() => podFromApiObject(pod([{ name: "A", valueFrom: { fieldRef: { fieldPath: "x" }, resourceFieldRef: { resource: "limits.cpu" } } }])), /may not have more than one field/);
});

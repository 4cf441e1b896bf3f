// Arbitraries for Pod objects: real field names with values drawn from the edges of each type
// (wrong types, huge numbers, odd strings, the names the apiserver refuses and the ones it takes).
import fc from "fast-check";

const oddStrings = fc.constantFrom(
  "", " ", "a", "A", "-a", "a-", "a.b", "a..b", "..", "../../etc", "a/../b", "/", "\u0000", "é", "😀", "a".repeat(64), "a".repeat(254),
  "1Ei", "1E", "0.1", "-1", "1e3", "1e-3", ".5", "1.", "100m", "64Mi", "lots", "1Ki5", "+", "-", "9".repeat(40), "1e99999",
  "Always", "OnFailure", "Never", "IfNotPresent", "Sometimes", "busybox", "busy box", "::::", " busybox", "ClusterFirst", "None",
  "kube-api-access-x", "memory", "cpu", "example.com/gpu", "hugepages-2Mi", "node.kubernetes.io/memory-pressure", "Exists", "Equal",
);
export const someString = fc.oneof(fc.string({ maxLength: 24 }), fc.string({ unit: "grapheme", maxLength: 8 }), oddStrings);
const someNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 65535, 65536, 70000, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e300, 1.5));
export const scalar = fc.oneof(someString, someNumber, fc.boolean(), fc.constant(null));

/** Any JSON value, nested a few levels. */
export const anyJson = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(someString, tie("value"), { maxKeys: 5 }),
})).value;

/** A value of the right type most of the time, anything now and then. */
const orJunk = (arb) => fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: anyJson });
const stringMap = fc.dictionary(someString, orJunk(someString), { maxKeys: 4 });
const quantities = fc.dictionary(fc.oneof(fc.constantFrom("cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-1Gi"), someString), orJunk(fc.oneof(someString, someNumber)), { maxKeys: 3 });

/** A volume of one of the types nanolet sets up (or another), with fields right or not. */
const keyItems = orJunk(fc.array(orJunk(fc.record({ key: orJunk(someString), path: orJunk(someString), mode: orJunk(someNumber) }, { requiredKeys: [] })), { maxLength: 2 }));
const volume = fc.record(
  {
    name: orJunk(fc.constantFrom("v", "w", "", "V_1")),
    emptyDir: orJunk(fc.record({ medium: orJunk(fc.constantFrom("", "Memory", "Disk")), sizeLimit: orJunk(someString) }, { requiredKeys: [] })),
    hostPath: orJunk(fc.record({ path: orJunk(someString), type: orJunk(fc.constantFrom("", "Directory", "File", "Folder")) }, { requiredKeys: [] })),
    configMap: orJunk(fc.record({ name: orJunk(someString), items: keyItems, defaultMode: orJunk(someNumber), optional: orJunk(fc.boolean()) }, { requiredKeys: [] })),
    secret: orJunk(fc.record({ secretName: orJunk(someString), items: keyItems, defaultMode: orJunk(someNumber) }, { requiredKeys: [] })),
    projected: orJunk(fc.record({ sources: orJunk(fc.array(anyJson, { maxLength: 2 })), defaultMode: orJunk(someNumber) }, { requiredKeys: [] })),
    downwardAPI: orJunk(fc.record({ items: orJunk(fc.array(anyJson, { maxLength: 2 })) }, { requiredKeys: [] })),
    nfs: anyJson,
  },
  { requiredKeys: ["name"] },
);

const container = fc.record(
  {
    name: orJunk(someString),
    image: orJunk(someString),
    command: orJunk(fc.array(orJunk(someString), { maxLength: 3 })),
    args: orJunk(fc.array(orJunk(someString), { maxLength: 3 })),
    env: orJunk(fc.array(orJunk(fc.record({ name: orJunk(someString), value: orJunk(someString) }, { requiredKeys: [] })), { maxLength: 4 })),
    workingDir: orJunk(someString),
    resources: orJunk(fc.record({ requests: orJunk(quantities), limits: orJunk(quantities) }, { requiredKeys: [] })),
    ports: orJunk(fc.array(orJunk(fc.record({ containerPort: orJunk(someNumber), name: orJunk(someString), protocol: orJunk(someString), hostPort: orJunk(someNumber) }, { requiredKeys: [] })), { maxLength: 3 })),
    imagePullPolicy: orJunk(someString),
    resizePolicy: orJunk(fc.array(orJunk(fc.record({ resourceName: orJunk(someString), restartPolicy: orJunk(someString) })), { maxLength: 2 })),
    volumeMounts: orJunk(fc.array(orJunk(fc.record({ name: orJunk(fc.constantFrom("v", "w", "")), mountPath: orJunk(someString), subPath: orJunk(someString), subPathExpr: orJunk(someString), readOnly: orJunk(fc.boolean()), mountPropagation: orJunk(fc.constantFrom("None", "HostToContainer", "Bidirectional", "x")) }, { requiredKeys: [] })), { maxLength: 2 })),
    envFrom: orJunk(fc.array(orJunk(fc.record({ prefix: orJunk(someString), configMapRef: orJunk(fc.record({ name: orJunk(someString), optional: orJunk(fc.boolean()) }, { requiredKeys: [] })) }, { requiredKeys: [] })), { maxLength: 2 })),
    livenessProbe: anyJson,
    securityContext: anyJson,
    tty: orJunk(fc.boolean()),
  },
  { requiredKeys: ["name", "image"] },
);

export const podObject = fc.record(
  {
    apiVersion: orJunk(fc.constantFrom("v1", "v2", "")),
    kind: orJunk(fc.constantFrom("Pod", "Deployment", "")),
    metadata: orJunk(fc.record({ name: orJunk(someString), namespace: orJunk(someString), uid: orJunk(someString), labels: orJunk(stringMap), annotations: orJunk(stringMap) }, { requiredKeys: [] })),
    spec: orJunk(fc.record(
      {
        containers: orJunk(fc.array(orJunk(container), { maxLength: 4 })),
        initContainers: orJunk(fc.array(container, { maxLength: 1 })),
        restartPolicy: orJunk(someString),
        terminationGracePeriodSeconds: orJunk(someNumber),
        hostNetwork: orJunk(fc.boolean()),
        priority: orJunk(someNumber),
        tolerations: orJunk(fc.array(orJunk(fc.record({ key: orJunk(someString), operator: orJunk(someString), value: orJunk(someString), effect: orJunk(someString), tolerationSeconds: orJunk(someNumber) }, { requiredKeys: [] })), { maxLength: 3 })),
        dnsPolicy: orJunk(someString),
        securityContext: orJunk(fc.oneof(fc.constant({}), anyJson)),
        hostPID: orJunk(fc.boolean()),
        nodeSelector: orJunk(stringMap),
        volumes: orJunk(fc.array(orJunk(volume), { maxLength: 3 })),
        imagePullSecrets: orJunk(fc.array(orJunk(fc.record({ name: orJunk(someString) }, { requiredKeys: [] })), { maxLength: 2 })),
        nodeName: orJunk(someString),
      },
      { requiredKeys: [] },
    )),
    status: anyJson,
  },
  { requiredKeys: ["apiVersion", "kind", "spec"] },
);

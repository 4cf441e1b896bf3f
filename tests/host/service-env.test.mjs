// The service environment variables as upstream makes them (envvars.FromServices and
// getServiceEnvVarMap): the variable names, the docker-link family, which Services count, and how
// they sit under the container's own env and feed $(VAR).
import { test } from "node:test";
import assert from "node:assert/strict";
import { serviceEnvironment, serviceVariables } from "../../dist/env/service-env.js";
import { containerEnvironment } from "../../dist/env/container-env.js";

const svc = (namespace, name, clusterIP, ports) => ({ metadata: { namespace, name }, spec: { clusterIP, ports } });

test("one Service: host, first port, named ports, and the link variables of every port", () => {
  const vars = serviceVariables(svc("shop", "my-db", "10.0.0.7", [{ port: 5432 }, { name: "metrics-http", port: 9187, protocol: "TCP" }, { name: "dns", port: 53, protocol: "UDP" }]));
  assert.deepEqual(Object.fromEntries(vars), {
    MY_DB_SERVICE_HOST: "10.0.0.7",
    MY_DB_SERVICE_PORT: "5432",
    MY_DB_SERVICE_PORT_METRICS_HTTP: "9187",
    MY_DB_SERVICE_PORT_DNS: "53",
    MY_DB_PORT: "tcp://10.0.0.7:5432",
    MY_DB_PORT_5432_TCP: "tcp://10.0.0.7:5432",
    MY_DB_PORT_5432_TCP_PROTO: "tcp",
    MY_DB_PORT_5432_TCP_PORT: "5432",
    MY_DB_PORT_5432_TCP_ADDR: "10.0.0.7",
    MY_DB_PORT_9187_TCP: "tcp://10.0.0.7:9187",
    MY_DB_PORT_9187_TCP_PROTO: "tcp",
    MY_DB_PORT_9187_TCP_PORT: "9187",
    MY_DB_PORT_9187_TCP_ADDR: "10.0.0.7",
    MY_DB_PORT_53_UDP: "udp://10.0.0.7:53",
    MY_DB_PORT_53_UDP_PROTO: "udp",
    MY_DB_PORT_53_UDP_PORT: "53",
    MY_DB_PORT_53_UDP_ADDR: "10.0.0.7",
  });
  assert.equal(Object.fromEntries(serviceVariables(svc("a", "v6", "fd00::1", [{ port: 80 }]))).V6_PORT, "tcp://[fd00::1]:80");
});

test("which Services: the pod's namespace with enableServiceLinks, kubernetes in default always, none headless", () => {
  const services = [
    svc("default", "kubernetes", "10.0.0.1", [{ name: "https", port: 443 }]),
    svc("shop", "cart", "10.0.0.9", [{ port: 80 }]),
    svc("shop", "headless", "None", [{ port: 80 }]),
    svc("other", "elsewhere", "10.0.0.10", [{ port: 80 }]),
  ];
  const shop = serviceEnvironment(services, "shop", true);
  assert.equal(shop.KUBERNETES_SERVICE_HOST, "10.0.0.1");
  assert.equal(shop.KUBERNETES_SERVICE_PORT_HTTPS, "443");
  assert.equal(shop.CART_SERVICE_HOST, "10.0.0.9");
  assert.ok(!("HEADLESS_SERVICE_HOST" in shop));
  assert.ok(!("ELSEWHERE_SERVICE_HOST" in shop));
  const off = serviceEnvironment(services, "shop", false);
  assert.deepEqual(Object.keys(off).filter((k) => !k.startsWith("KUBERNETES_")), [], "enableServiceLinks: false keeps only the master service");
});

test("under the container's own env; a source for $(VAR) in env, command and args", () => {
  const facts = { name: "p", namespace: "shop", uid: "u", labels: {}, annotations: {}, nodeName: "n", serviceAccountName: "", hostIps: [], podIps: [], containers: [], allocatable: { cpu: "1", memory: "1", "ephemeral-storage": "0" }, serviceEnv: { CART_SERVICE_HOST: "10.0.0.9", CART_SERVICE_PORT: "80" } };
  const container = { name: "c", image: "i", command: ["echo", "$(CART_SERVICE_HOST)"], args: [], env: [{ name: "URL", value: "http://$(CART_SERVICE_HOST):$(CART_SERVICE_PORT)" }, { name: "CART_SERVICE_PORT", value: "8080" }], requests: [], limits: [] };
  const out = containerEnvironment(container, facts);
  assert.deepEqual(out.env, [
    { name: "URL", value: "http://10.0.0.9:80" },
    { name: "CART_SERVICE_PORT", value: "8080" },
    { name: "CART_SERVICE_HOST", value: "10.0.0.9" },
  ]);
  assert.deepEqual(out.command, ["echo", "10.0.0.9"]);
  assert.throws(() => containerEnvironment(container, { ...facts, serviceEnv: undefined, servicesUnknown: true }), /services have not yet been read at least once, cannot construct envvars/);
});

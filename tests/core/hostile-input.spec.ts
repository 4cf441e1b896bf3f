// Input the apiserver would refuse, or accept, judged as it judges it: every problem of a pod at
// once, uids that could walk out of a directory, quantities with every suffix, duplicate names,
// and the --max-pods admission.
import { Agent } from "../../assembly/core/agent";
import { ContainerSpec, EnvVar, PodPhase, PodSpec, ResourceQuantity } from "../../assembly/core/model";
import { isSafeUid, podProblems } from "../../assembly/core/validation";
import { parseQuantity, QUANTITY_FORMAT_ERROR, QUANTITY_SUFFIX_ERROR } from "../../assembly/core/quantity";
import { FakeNode, config, spec } from "./fake-node";
import { imageReferenceProblem } from "../../assembly/core/image-reference";

function pod(): PodSpec {
  const p = new PodSpec();
  p.uid = "uid-1";
  p.namespace = "default";
  p.name = "web-node1";
  const c = new ContainerSpec();
  c.name = "app";
  c.image = "busybox";
  p.containers = [c];
  return p;
}

function fields(p: PodSpec): string {
  const all = podProblems(p, 0);
  const out: string[] = [];
  for (let i = 0; i < all.length; i++) out.push(all[i].field);
  return out.join(",");
}

describe("quantities as resource.Quantity parses them", () => {
  it("takes every suffix, including Ei and exponents", () => {
    expect(parseQuantity("1Ei").ok).toBe(true);
    expect(parseQuantity("1Ei").milliValue).toBe(i64.MAX_VALUE); // saturated, not refused
    expect(parseQuantity("1Pi").milliValue).toBe(1125899906842624 * 1000);
    expect(parseQuantity("1E").milliValue).toBe(i64.MAX_VALUE);
    expect(parseQuantity("2k").milliValue).toBe(2000000);
    expect(parseQuantity("5n").milliValue).toBe(1); // rounded up, as MilliValue does
    expect(parseQuantity("500u").milliValue).toBe(1);
    expect(parseQuantity("1E3").milliValue).toBe(1000000);
    expect(parseQuantity("1e-3").milliValue).toBe(1);
    expect(parseQuantity("12e+2").milliValue).toBe(1200000);
  });
  it("is exact for decimals and rounds up what is below a milli-unit", () => {
    expect(parseQuantity("0.1").milliValue).toBe(100);
    expect(parseQuantity("0.3").milliValue).toBe(300);
    expect(parseQuantity("1.1m").milliValue).toBe(2);
    expect(parseQuantity(".5").milliValue).toBe(500);
    expect(parseQuantity("1.").milliValue).toBe(1000);
    expect(parseQuantity("0.5Ki").milliValue).toBe(512000);
    expect(parseQuantity("-1").milliValue).toBe(-1000);
    expect(parseQuantity("0.0000000000000000000000000001").milliValue).toBe(1);
    expect(parseQuantity("00000000000000000000000000000012").milliValue).toBe(12000);
  });
  it("refuses with the apiserver's words", () => {
    expect(parseQuantity("").error).toBe(QUANTITY_FORMAT_ERROR);
    expect(parseQuantity("1x").error).toBe(QUANTITY_FORMAT_ERROR);
    expect(parseQuantity(" 1").error).toBe(QUANTITY_FORMAT_ERROR);
    expect(parseQuantity("1Ki5").error).toBe(QUANTITY_SUFFIX_ERROR);
    expect(parseQuantity("1Qi").error).toBe(QUANTITY_FORMAT_ERROR);
    expect(parseQuantity("1e").error).toBe(QUANTITY_SUFFIX_ERROR);
    expect(parseQuantity("1ii").error).toBe(QUANTITY_SUFFIX_ERROR);
  });
});

describe("pod validation reports every problem", () => {
  it("lists all the problems of a pod in field order", () => {
    const p = pod();
    p.name = "Web_Node";
    p.restartPolicy = "Sometimes";
    p.containers[0].env = [new EnvVar("A=B", "x"), new EnvVar("1BAD", "x"), new EnvVar("A B", "x")];
    p.containers[0].limits = [new ResourceQuantity("memory", "lots")];
    expect(fields(p)).toBe("metadata.name,spec.restartPolicy,spec.containers[0].env[0].name,spec.containers[0].resources.limits[memory]");
  });
  it("says a name is too long, and only that, when its characters are fine", () => {
    const p = pod();
    p.name = "a".repeat(254);
    const all = podProblems(p, 0);
    expect(all.length).toBe(1);
    expect(all[0].message).toBe('Invalid value: "' + p.name + '": must be no more than 253 characters');
    p.name = "A".repeat(254);
    expect(podProblems(p, 0).length).toBe(2);
  });
  it("refuses a uid that would reach a file path outside its directory", () => {
    expect(isSafeUid("0b6c2a44-9f8e-4b5e-8a8f-0c9c0f0e8d11")).toBe(true);
    expect(isSafeUid("a/../b")).toBe(false);
    expect(isSafeUid("..")).toBe(false);
    expect(isSafeUid(".hidden")).toBe(false);
    expect(isSafeUid("a b")).toBe(false);
    expect(isSafeUid("x".repeat(129))).toBe(false);
    const p = pod();
    p.uid = "../../etc";
    expect(fields(p)).toBe("metadata.uid");
  });
  it("needs a limit for an extended resource, and a standard name for a plain one", () => {
    const p = pod();
    p.containers[0].requests = [new ResourceQuantity("example.com/foo", "1")];
    const all = podProblems(p, 0);
    expect(all.length).toBe(1);
    expect(all[0].field).toBe("spec.containers[0].resources.limits");
    expect(all[0].message).toBe("Required value: Limit must be set for non overcommitable resources");
    p.containers[0].requests = [new ResourceQuantity("gpus", "1")];
    expect(podProblems(p, 0)[0].message).toBe('Invalid value: "gpus": must be a standard resource for containers');
  });
  it("takes the relaxed environment variable names of current Kubernetes", () => {
    const p = pod();
    p.containers[0].env = [new EnvVar("1BAD", "x"), new EnvVar("A B", "x"), new EnvVar("é", "x")];
    expect(fields(p)).toBe("spec.containers[0].env[2].name");
  });
  it("refuses an image with surrounding whitespace", () => {
    const p = pod();
    p.containers[0].image = " busybox";
    expect(podProblems(p, 0)[0].message).toBe('Invalid value: " busybox": must not have leading or trailing whitespace');
  });
});

describe("the agent's admission of many pods", () => {
  it("refuses a second pod of the same name, keeping the first", () => {
    const node = new FakeNode(new Agent(config()));
    const a = spec("uid-a", "Always", ["app"]);
    const b = spec("uid-b", "Always", ["app"]);
    b.name = a.name;
    const rejections = node.agent.handlePods(node.nowMs, [a, b]);
    expect(rejections.length).toBe(1);
    expect(rejections[0].index).toBe(1);
    expect(rejections[0].field).toBe("metadata.name");
    expect(rejections[0].message).toBe('Duplicate value: "' + a.name + '"');
    node.runUntil(node.nowMs + 2000);
    expect(node.runningCount("app")).toBe(1);
  });
  it("refuses pods beyond --max-pods with OutOfpods, as upstream's admission does", () => {
    const c = config();
    c.maxPods = 3;
    const node = new FakeNode(new Agent(c));
    const pods: PodSpec[] = [];
    for (let i = 0; i < 4; i++) pods.push(spec("uid-" + i.toString(), "Always", ["app"]));
    node.agent.handlePods(node.nowMs, pods);
    node.runUntil(node.nowMs + 3000);
    expect(node.runningCount("app")).toBe(3);
    const refused = node.statuses.get("uid-3");
    expect(refused.phase).toBe(PodPhase.Failed);
    expect(refused.reason).toBe("OutOfpods");
    expect(refused.message).toBe("Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3");
  });
  it("admits a new pod once a running one is gone", () => {
    const c = config();
    c.maxPods = 1;
    const node = new FakeNode(new Agent(c));
    node.agent.handlePods(node.nowMs, [spec("uid-a", "Always", ["app"])]);
    node.runUntil(node.nowMs + 2000);
    node.agent.handlePods(node.nowMs, [spec("uid-b", "Always", ["app"])]);
    node.runUntil(node.nowMs + 40000);
    expect(node.statuses.get("uid-b").phase).toBe(PodPhase.Running);
  });
});

describe("image references as the kubelet parses them", () => {
  it("takes the references registries use", () => {
    const good = ["busybox", "busybox:1.36", "docker.io/library/busybox:latest", "localhost/nanolet/pause:1", "localhost:5000/a/b_c__d-e.f:v1.2-3",
      "registry.example.com:443/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "[::1]:5000/app", "Example.COM/app"];
    for (let i = 0; i < good.length; i++) expect(imageReferenceProblem(good[i])).toBe("", good[i]);
  });
  it("refuses what it cannot parse, with distribution's words", () => {
    expect(imageReferenceProblem("busy box")).toBe("invalid reference format");
    expect(imageReferenceProblem("::::")).toBe("invalid reference format");
    expect(imageReferenceProblem("busybox:")).toBe("invalid reference format");
    expect(imageReferenceProblem("a//b")).toBe("invalid reference format");
    expect(imageReferenceProblem("app@sha256:12")).toBe("invalid reference format");
    expect(imageReferenceProblem("BusyBox")).toBe("invalid reference format: repository name must be lowercase");
    expect(imageReferenceProblem("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")).toBe(
      "invalid repository name (0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef), cannot specify 64-byte hexadecimal strings");
  });
  it("makes the container wait with InvalidImageName and never create it", () => {
    const node = new FakeNode(new Agent(config()));
    const p = spec("uid-img", "Always", ["app"]);
    p.containers[0].image = "busy box";
    node.agent.handlePods(node.nowMs, [p]);
    node.runUntil(node.nowMs + 30000);
    const status = node.statuses.get("uid-img");
    expect(status.phase).toBe(PodPhase.Pending);
    expect(status.containerStatuses[0].reason).toBe("InvalidImageName");
    expect(status.containerStatuses[0].message).toBe('Failed to apply default image tag "busy box": couldn\'t parse image name "busy box": invalid reference format');
    expect(node.runningCount("app")).toBe(0);
  });
});

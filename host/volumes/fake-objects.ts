// An ObjectGetter over objects held in memory, beside the interface it fakes: unit tests and the
// simulator put configMaps and secrets in it and change them.
import type { PodObject } from "../cluster/pod-reflector.js";
import type { ObjectRef, ObjectResource } from "./object-refs.js";

export class FakeObjects {
  private objects = new Map<string, PodObject>();
  /** Gets asked, in order (`configmaps/ns/name`). */
  readonly asked: string[] = [];

  put(resource: ObjectResource, namespace: string, name: string, object: PodObject): void {
    this.objects.set(`${resource}/${namespace}/${name}`, { ...object, metadata: { name, namespace, ...(object.metadata ?? {}) } });
  }

  delete(resource: ObjectResource, namespace: string, name: string): void {
    this.objects.delete(`${resource}/${namespace}/${name}`);
  }

  async get(ref: ObjectRef): Promise<PodObject | undefined> {
    const key = `${ref.resource}/${ref.namespace}/${ref.name}`;
    this.asked.push(key);
    return this.objects.get(key);
  }
}

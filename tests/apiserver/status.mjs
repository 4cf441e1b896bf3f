// Kubernetes API errors as the apiserver sends them: a Status object with a reason and a code.

export class ApiError extends Error {
  constructor(code, reason, message, details) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus() {
    const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: this.message, reason: this.reason, code: this.code };
    if (this.details) status.details = this.details;
    return status;
  }
}

const kindOf = (resource) => ({ pods: "pods", nodes: "nodes", leases: "leases.coordination.k8s.io", events: "events" })[resource] ?? resource;

export const notFound = (resource, name) => new ApiError(404, "NotFound", `${kindOf(resource)} "${name}" not found`, { name, kind: resource });
export const alreadyExists = (resource, name) => new ApiError(409, "AlreadyExists", `${kindOf(resource)} "${name}" already exists`, { name, kind: resource });
export const conflict = (resource, name, why) =>
  new ApiError(409, "Conflict", `Operation cannot be fulfilled on ${kindOf(resource)} "${name}": ${why}`, { name, kind: resource });
export const forbidden = (user, verb, resource, name, namespace, why) =>
  new ApiError(
    403,
    "Forbidden",
    `${kindOf(resource)}${name ? ` "${name}"` : ""} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group ""${namespace ? ` in the namespace "${namespace}"` : " at the cluster scope"}${why ? `: ${why}` : ""}`,
  );
export const unauthorized = () => new ApiError(401, "Unauthorized", "Unauthorized");
export const badRequest = (message) => new ApiError(400, "BadRequest", message);
export const invalid = (resource, name, message) => new ApiError(422, "Invalid", `${kindOf(resource)} "${name}" is invalid: ${message}`);
export const gone = (message) => new ApiError(410, "Expired", message);
export const unsupportedMediaType = (type) => new ApiError(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got ${type}`);
export const methodNotAllowed = () => new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

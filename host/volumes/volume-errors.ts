// Errors of volumes that the executor tells apart (no I/O here: the simulator's bundle imports it).

/** A container's mount that cannot be made; the container waits with CreateContainerConfigError. */
export class VolumeMountError extends Error {}

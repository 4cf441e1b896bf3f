// A TCP relay that counts what crosses it, TLS and all, as a metered uplink's meter would: bytes
// each way, connections opened, and the most open at once. An agent's kubeconfig points at it in
// place of the apiserver (whose certificate names 127.0.0.1, so the TLS checks still pass).
import net from "node:net";

export class ByteProxy {
  static async start(targetPort, targetHost = "127.0.0.1") {
    const proxy = new ByteProxy(targetPort, targetHost);
    await new Promise((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    proxy.port = proxy.server.address().port;
    return proxy;
  }

  constructor(targetPort, targetHost) {
    this.up = 0;
    this.down = 0;
    this.opened = 0;
    this.open = 0;
    this.mostOpen = 0;
    this.sockets = new Set();
    this.server = net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost);
      this.opened++;
      this.mostOpen = Math.max(this.mostOpen, ++this.open);
      this.sockets.add(client).add(upstream);
      client.on("data", (chunk) => {
        this.up += chunk.length;
        upstream.write(chunk);
      });
      upstream.on("data", (chunk) => {
        this.down += chunk.length;
        client.write(chunk);
      });
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        this.open--;
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      for (const s of [client, upstream]) s.on("close", close).on("error", close);
    });
  }

  get url() {
    return `https://127.0.0.1:${this.port}`;
  }

  /** The counters now; `since(earlier)` is what crossed between two readings. */
  reading() {
    return { up: this.up, down: this.down, opened: this.opened, mostOpen: this.mostOpen };
  }

  /** Starts counting the most connections open at once afresh (per phase). */
  resetMostOpen() {
    this.mostOpen = this.open;
  }

  close() {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}

// A loopback TCP relay between a client and a real server that the tests can
// cut: `cut(downForMs)` closes every connection it carries and closes new ones
// at once for `downForMs`; `cutAtCall(n, downForMs)` does the same when the
// n-th call (an HTTP/2 HEADERS frame from the client) from now starts, before
// passing it on, so that exactly that call fails UNAVAILABLE.
import { AddressInfo, createConnection, createServer, Server, Socket } from "node:net";

const PREFACE = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
const HEADERS = 0x1;

export class Relay {
  private readonly sockets = new Set<Socket>();
  private downUntil = 0;
  private callsToCut = 0;
  private cutDownForMs = 0;
  /** Cuts made so far. */
  cuts = 0;

  private constructor(
    private readonly server: Server,
    private readonly upstream: { host: string; port: number },
  ) {
    server.on("connection", (client) => this.accept(client));
  }

  static async start(upstream: string): Promise<Relay> {
    const [host, port] = [upstream.slice(0, upstream.lastIndexOf(":")), Number(upstream.slice(upstream.lastIndexOf(":") + 1))];
    const server = createServer();
    const relay = new Relay(server, { host, port });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    return relay;
  }

  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private accept(client: Socket): void {
    if (Date.now() < this.downUntil) {
      client.destroy();
      return;
    }
    const server = createConnection(this.upstream);
    this.sockets.add(client);
    this.sockets.add(server);
    const drop = () => {
      client.destroy();
      server.destroy();
      this.sockets.delete(client);
      this.sockets.delete(server);
    };
    client.on("error", drop).on("close", drop);
    server.on("error", drop).on("close", drop);
    server.on("data", (chunk: Buffer) => client.write(chunk));
    // Client -> server: parsed into frames to see where each call starts.
    let pending = Buffer.alloc(0);
    let prefaceLeft = PREFACE;
    client.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (prefaceLeft > 0) {
        const n = Math.min(prefaceLeft, pending.length);
        server.write(pending.subarray(0, n));
        pending = pending.subarray(n);
        prefaceLeft -= n;
      }
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const frame = pending.subarray(0, 9 + length);
        pending = pending.subarray(9 + length);
        if (frame[3] === HEADERS && this.callsToCut > 0 && --this.callsToCut === 0) {
          this.cut(this.cutDownForMs);
          return;
        }
        server.write(frame);
      }
    });
  }

  /** Closes every connection; new ones are closed at once for `downForMs`. */
  cut(downForMs = 0): void {
    this.cuts++;
    this.downUntil = Date.now() + downForMs;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Cuts (as {@link cut}) when the `n`-th call from now starts, instead of passing it on. */
  cutAtCall(n: number, downForMs = 0): void {
    this.callsToCut = n;
    this.cutDownForMs = downForMs;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}

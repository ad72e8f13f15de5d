// A real statekeeper server process for the tests: started from
// STATEKEEPER_BIN (default <repo root>/.venv/bin/statekeeper) on a free
// loopback port with its own data directory, killed with SIGKILL and started
// again on the same port and data directory. Every process started here is
// killed when the test process exits, even after a failure.
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { ConnectOptions, StatekeeperClient } from "../dist/index";

const REPO_ROOT = resolve(__dirname, "..", "..", "..");
export const STATEKEEPER_BIN = process.env.STATEKEEPER_BIN || join(REPO_ROOT, ".venv", "bin", "statekeeper");
/** The Python of the repository's virtualenv, for tests/harness/certs.py (env STATEKEEPER_PYTHON). */
export const REPO_PYTHON = process.env.STATEKEEPER_PYTHON || join(REPO_ROOT, ".venv", "bin", "python");

/**
 * A CA, a server certificate for 127.0.0.1/localhost and a client
 * certificate (CN "conformance") from the repository's tests/harness/certs.py,
 * in a new temporary directory.
 */
export function issueCertificates(): string {
  const dir = mkdtempSync(join(tmpdir(), "sk-ts-tls-"));
  execFileSync(REPO_PYTHON, ["-m", "tests.harness.certs", dir], { cwd: REPO_ROOT, stdio: "pipe" });
  return dir;
}

/**
 * Timeouts are multiplied by this: STATEKEEPER_TEST_TIMEOUT_SCALE (default 1)
 * times the machine's load per core when it is above 1.
 */
export const SCALE =
  Number(process.env.STATEKEEPER_TEST_TIMEOUT_SCALE || 1) * Math.max(1, loadavg()[0] / Math.max(1, cpus().length));

/** `ms` scaled by {@link SCALE}. */
export function scaled(ms: number): number {
  return Math.round(ms * SCALE);
}

/**
 * STATEKEEPER_CLIENT_TESTS_TIER=production runs every test server on the
 * production tier: the PostgreSQL and Redis of STATEKEEPER_TEST_POSTGRES_DSN
 * and STATEKEEPER_TEST_REDIS_URL (`scripts/services.sh start DIR && . DIR/env`),
 * migrated on start, each server with a tenant (API key) and a Redis key
 * prefix of its own, kept across its restarts. Default: the embedded store.
 */
export const PRODUCTION = process.env.STATEKEEPER_CLIENT_TESTS_TIER === "production";
const DSN = process.env.STATEKEEPER_TEST_POSTGRES_DSN;
const REDIS = process.env.STATEKEEPER_TEST_REDIS_URL;
if (PRODUCTION && !(DSN && REDIS)) {
  throw new Error("STATEKEEPER_CLIENT_TESTS_TIER=production needs STATEKEEPER_TEST_POSTGRES_DSN and STATEKEEPER_TEST_REDIS_URL");
}

const LIVE = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of LIVE) child.kill("SIGKILL");
});

export function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Polls `condition` every 20 ms until it holds; throws `what` after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(20);
  }
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

export class ServerProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** The server's output (for failure messages). */
  output = "";
  starts = 0;
  private probeOptions: ConnectOptions = {};

  /** The API key of this server's own tenant on the production tier; undefined on the embedded store. */
  readonly apiKey: string | undefined;
  readonly extraArgs: string[];

  private constructor(
    readonly port: number,
    readonly dataDir: string,
    extraArgs: string[],
  ) {
    if (PRODUCTION) {
      const id = randomBytes(6).toString("hex");
      this.apiKey = `ts-key-${id}`;
      extraArgs = [
        "--postgres-dsn", DSN!,
        "--redis-url", REDIS!,
        "--redis-key-prefix", `ts-${id}:`,
        "--migrate-on-start",
        "--api-key", `${this.apiKey}=ts-tenant-${id}`,
        ...extraArgs,
      ];
    }
    this.extraArgs = extraArgs;
  }

  /** A client of this server (with its tenant's API key on the production tier). */
  connect(options: ConnectOptions = {}): StatekeeperClient {
    return new StatekeeperClient(this.address, { apiKey: this.apiKey, ...options });
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** A server on a free port with a fresh data directory, started and serving (`extraArgs` go to `serve`). */
  static async start(extraArgs: string[] = [], probe: ConnectOptions = {}): Promise<ServerProcess> {
    const server = new ServerProcess(await freePort(), mkdtempSync(join(tmpdir(), "sk-ts-test-")), extraArgs);
    server.probeOptions = { apiKey: server.apiKey, ...probe };
    await server.start();
    return server;
  }

  /** Starts the process (again) and waits until it answers a health check. */
  async start(): Promise<void> {
    if (this.child) throw new Error("already running");
    const child = spawn(
      STATEKEEPER_BIN,
      ["serve", "--listen", this.address, "--data-dir", this.dataDir, "--log-level", "WARNING", "--shutdown-grace-seconds", "1", ...this.extraArgs],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.starts++;
    this.child = child;
    LIVE.add(child);
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    let exitedEarly = false;
    this.exited = new Promise((done) => {
      child.once("exit", () => {
        exitedEarly = true;
        LIVE.delete(child);
        done();
      });
      child.once("error", (error) => {
        this.output += `\nspawn ${STATEKEEPER_BIN}: ${error.message}`;
        exitedEarly = true;
        LIVE.delete(child);
        done();
      });
    });
    const probe = new StatekeeperClient(this.address, { ...this.probeOptions, retry: false, timeoutMs: 2_000 });
    const deadline = Date.now() + scaled(120_000);
    try {
      for (;;) {
        if (exitedEarly) {
          this.child = undefined;
          throw new Error(`statekeeper serve exited while starting:\n${this.output}`);
        }
        try {
          if ((await probe.healthCheck("", 2_000)) === "SERVING") return;
        } catch {
          // not up yet
        }
        if (Date.now() > deadline) {
          await this.kill();
          throw new Error(`statekeeper serve not serving after ${scaled(120_000)} ms:\n${this.output}`);
        }
        await delay(100);
      }
    } finally {
      probe.close();
    }
  }

  /** kill -9, and wait for the process to be gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill("SIGKILL");
    await this.exited;
  }

  /** Kills the process and removes the data directory. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

// Typed errors, deadlines, safe retries and idempotency keys, against a real
// server (and against its port while it is down).
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import {
  blackboard,
  ErrorReason,
  isStatekeeperError,
  message,
  REASONS,
  ReasonErrors,
  RetryEvent,
  session,
  StatekeeperClient,
  StatekeeperError,
  tlsOptionsFromEnv,
} from "../dist/index";
import { delay, issueCertificates, scaled, ServerProcess } from "./server";

let server: ServerProcess;
let sk: StatekeeperClient;

before(async () => {
  server = await ServerProcess.start();
  sk = server.connect({ timeoutMs: scaled(30_000) });
});

after(async () => {
  sk?.close();
  await server?.dispose();
});

test("one error class per ErrorReason of the generated enum", () => {
  const names = Object.keys(ErrorReason).filter((n) => n.startsWith("ERROR_REASON_") && n !== "ERROR_REASON_UNSPECIFIED");
  assert.deepEqual(
    [...REASONS],
    names.map((n) => n.slice("ERROR_REASON_".length)),
  );
  const classes = new Set<unknown>();
  for (const reason of REASONS) {
    const cls = ReasonErrors[reason];
    assert.equal(cls.reason, reason);
    classes.add(cls);
    const error = new cls(5, "x", { info: { reason, domain: "statekeeper.dev", metadata: {} } });
    assert.ok(error instanceof StatekeeperError && error instanceof Error);
    assert.equal(error.reason, reason);
    assert.equal(error.reasonEnum, ErrorReason[`ERROR_REASON_${reason}` as keyof typeof ErrorReason]);
  }
  assert.equal(classes.size, REASONS.length);
  assert.equal(ReasonErrors.ETAG_MISMATCH.name, "EtagMismatchError");
});

test("a failed call rejects with its reason's class, code and ErrorInfo metadata", async () => {
  await assert.rejects(
    sk.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId: "no-such-session" })),
    (error: unknown) => {
      assert.ok(error instanceof ReasonErrors.NOT_FOUND, `${error}`);
      assert.ok(!(error instanceof ReasonErrors.ETAG_MISMATCH));
      assert.equal(error.code, 5 /* NOT_FOUND */);
      assert.equal(error.domain, "statekeeper.dev");
      assert.equal(error.method, "statekeeper.v1.SessionService/GetSession");
      return true;
    },
  );
  const board = `ts-errors-${Date.now()}`;
  const put = (expectedModRevision?: bigint) =>
    sk.api.blackboard.putEntry(
      blackboard.PutEntryRequest.fromPartial({
        board,
        key: "k",
        value: { kind: { $case: "json", json: { v: 1 } } },
        expectedModRevision,
      }),
    );
  const created = await put(0n);
  await assert.rejects(put(0n), (error: unknown) => {
    assert.ok(isStatekeeperError(error, "REVISION_MISMATCH"), `${error}`);
    assert.equal(error.codeName, "FAILED_PRECONDITION");
    assert.equal(error.reasonEnum, ErrorReason.ERROR_REASON_REVISION_MISMATCH);
    assert.equal(error.errorMetadata["current_revision"], String(created.entry!.modRevision));
    return true;
  });
  await assert.rejects(
    sk.api.sessions.createSession(session.CreateSessionRequest.fromPartial({})),
    (error: unknown) => {
      assert.ok(error instanceof ReasonErrors.INVALID_FIELD, `${error}`);
      assert.ok(error.errorMetadata["field"]);
      return true;
    },
  );
});

test("the idempotency key is filled, kept across retries, and makes a repeat harmless", async () => {
  const created = await sk.api.sessions.createSession(
    session.CreateSessionRequest.fromPartial({ session: { userId: "ts-idem" } }),
  );
  const sessionId = created.session!.sessionId;
  const request = session.AppendMessagesRequest.fromPartial({
    sessionId,
    messages: [{ role: session.Role.ROLE_USER, content: "hello" }],
  });
  await sk.api.sessions.appendMessages(request);
  assert.equal(request.requestId, "", "the caller's request is not modified");

  const keyed = { ...request, requestId: `ts-${Date.now()}` };
  const first = await sk.api.sessions.appendMessages(keyed);
  const again = await sk.api.sessions.appendMessages(keyed);
  assert.equal(again.replayed, true);
  assert.equal(again.session?.messageCount, first.session?.messageCount);
  const got = await sk.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId }));
  assert.equal(got.session?.messageCount, 2n);
});

test("UNAVAILABLE: reads and keyed mutations are retried across a restart, unkeyed mutations are not", async () => {
  const events: RetryEvent[] = [];
  const client = server.connect({
    timeoutMs: scaled(120_000),
    retry: { maxAttempts: 1_000, initialBackoffMs: 50, maxBackoffMs: 500 },
    onRetry: (event) => events.push(event),
  });
  try {
    const created = await client.api.sessions.createSession(
      session.CreateSessionRequest.fromPartial({ session: { userId: "ts-retry" } }),
    );
    const sessionId = created.session!.sessionId;
    await server.kill();

    // An unkeyed mutation fails at once with UNAVAILABLE: it is not retried.
    await assert.rejects(
      client.api.blackboard.putEntry(
        blackboard.PutEntryRequest.fromPartial({
          board: "b",
          key: "k",
          value: { kind: { $case: "json", json: {} } },
        }),
      ),
      (error: unknown) => error instanceof StatekeeperError && error.code === 14 && error.reason === "",
    );
    assert.equal(events.length, 0);

    // A read and a keyed mutation wait for the server to come back.
    const request = session.AppendMessagesRequest.fromPartial({
      sessionId,
      messages: [{ role: session.Role.ROLE_USER, content: "while down" }],
    });
    const append = client.api.sessions.appendMessages(request);
    const read = client.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId }));
    await delay(500);
    await server.start();
    const [appended] = await Promise.all([append, read]);
    assert.equal(appended.session?.messageCount, 1n);

    const appendRetries = events.filter((e) => e.method.endsWith("/AppendMessages"));
    const readRetries = events.filter((e) => e.method.endsWith("/GetSession"));
    assert.ok(appendRetries.length >= 1 && readRetries.length >= 1, `${events.length} retries`);
    assert.ok(events.every((e) => e.error.code === 14), "only UNAVAILABLE is retried");
    const ids = new Set(appendRetries.map((e) => (e.request as { requestId: string }).requestId));
    assert.equal(ids.size, 1, "one idempotency key for every attempt");
    assert.ok([...ids][0]);
    assert.equal(request.requestId, "");

    // `idempotent: true` opts an unkeyed mutation in.
    await server.kill();
    const put = client.api.blackboard.putEntry(
      blackboard.PutEntryRequest.fromPartial({ board: "b", key: "k", value: { kind: { $case: "json", json: {} } } }),
      { idempotent: true },
    );
    await delay(300);
    await server.start();
    assert.ok((await put).header!.revision > 0n);
  } finally {
    client.close();
  }
});

test("the per-call deadline and an AbortSignal bound the retries", { timeout: scaled(120_000) }, async () => {
  const port = server.port;
  await server.kill();
  const retries: RetryEvent[] = [];
  const client = new StatekeeperClient(`127.0.0.1:${port}`, {
    retry: { maxAttempts: 1_000, initialBackoffMs: 50, maxBackoffMs: 100 },
    onRetry: (event) => retries.push(event),
  });
  const events: unknown[] = [];
  try {
    // Against a port nobody listens on, a read is retried until its 1 s deadline, not 1000 times.
    await assert.rejects(
      client.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId: "x" }), { timeoutMs: 1_000 }),
      (error: unknown) =>
        isStatekeeperError(error) && (error.code === 14 || error.code === 4 /* DEADLINE_EXCEEDED */),
    );
    assert.ok(retries.length >= 1, "not retried at all");
    assert.ok(retries.length < 999, `${retries.length} retries: the deadline did not stop them`);
    const noRetry = new StatekeeperClient(`127.0.0.1:${port}`, {
      retry: false,
      onRetry: (event) => events.push(event),
    });
    try {
      await assert.rejects(
        noRetry.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId: "x" })),
        (error: unknown) => isStatekeeperError(error) && error.code === 14,
      );
    } finally {
      noRetry.close();
    }
    assert.equal(events.length, 0);
    assert.equal(client.timeoutMs, 30_000, "the default deadline");

    // An AbortSignal ends a call that would retry for an hour.
    const abort = new AbortController();
    const aborted = client.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId: "x" }), {
      timeoutMs: 3_600_000,
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(), 300);
    await assert.rejects(aborted, (error: unknown) => isStatekeeperError(error));
    const retriesBefore = retries.length;
    await delay(500);
    assert.equal(retries.length, retriesBefore, "retries went on after the abort");
  } finally {
    client.close();
    await server.start();
  }
});

test("the client's default deadline ends a call that would wait an hour", { timeout: scaled(120_000) }, async () => {
  const client = server.connect({ timeoutMs: 1_500 });
  try {
    await assert.rejects(
      client.api.messages.requestReply(
        message.RequestReplyRequest.fromPartial({
          fromAgent: `ts-deadline-${Date.now()}`,
          toAgent: "nobody-answers",
          timeout: { seconds: 3_600n, nanos: 0 },
        }),
      ),
      (error: unknown) => isStatekeeperError(error) && error.code === 4 /* DEADLINE_EXCEEDED */,
    );
  } finally {
    client.close();
  }
});

test("the API key travels on every call; a missing one is UNAUTHENTICATED", async () => {
  const secured = await ServerProcess.start(["--api-key", "ts-secret=tenant-a"], { apiKey: "ts-secret" });
  const withKey = new StatekeeperClient(secured.address, { apiKey: "ts-secret" });
  const without = new StatekeeperClient(secured.address);
  try {
    const created = await withKey.api.sessions.createSession(
      session.CreateSessionRequest.fromPartial({ session: { userId: "ts-key" } }),
    );
    assert.ok(created.session?.sessionId);
    await assert.rejects(
      without.api.sessions.getSession(session.GetSessionRequest.fromPartial({ sessionId: created.session!.sessionId })),
      (error: unknown) => {
        assert.ok(error instanceof ReasonErrors.UNAUTHENTICATED, `${error}`);
        assert.equal(error.code, 16 /* UNAUTHENTICATED */);
        return true;
      },
    );
  } finally {
    withKey.close();
    without.close();
    await secured.dispose();
  }
  assert.throws(() => new StatekeeperClient(secured.address, { apiKey: "a", bearerToken: "b" }), /not both/);
});

test("the README's first example is examples/quickstart.ts (which npm test type-checks)", () => {
  const root = join(__dirname, "..");
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const example = readFileSync(join(root, "examples", "quickstart.ts"), "utf8");
  const first = /```ts\n([\s\S]*?)```/.exec(readme);
  assert.equal(first?.[1], example);
  assert.ok(example.trimEnd().split("\n").length <= 15);
  assert.match(readme, /^# .*\n\n## Add the dependency\n/);
});

test("mTLS: the CA, client certificate and key, server name and API key options", async () => {
  const dir = issueCertificates();
  const tls = {
    rootCa: join(dir, "ca.pem"),
    clientCert: join(dir, "client.pem"),
    clientKey: join(dir, "client.key"),
    serverName: "localhost",
  };
  const secured = await ServerProcess.start(
    [
      "--tls-cert", join(dir, "server.pem"),
      "--tls-key", join(dir, "server.key"),
      "--tls-client-ca", join(dir, "ca.pem"),
      "--api-key", "ts-tls-key=tenant-tls",
    ],
    { tls, apiKey: "ts-tls-key" },
  );
  const fromEnv = tlsOptionsFromEnv({
    STATEKEEPER_TLS_ROOT_CA: tls.rootCa,
    STATEKEEPER_TLS_CLIENT_CERT: tls.clientCert,
    STATEKEEPER_TLS_CLIENT_KEY: tls.clientKey,
    STATEKEEPER_TLS_SERVER_NAME: "localhost",
  });
  assert.deepEqual(fromEnv, tls);
  assert.equal(tlsOptionsFromEnv({}), undefined);
  const good = new StatekeeperClient(secured.address, { apiKey: "ts-tls-key", tls: fromEnv });
  const noCert = new StatekeeperClient(secured.address, { apiKey: "ts-tls-key", tls: { rootCa: tls.rootCa }, retry: false });
  const plain = new StatekeeperClient(secured.address, { apiKey: "ts-tls-key", retry: false });
  try {
    const created = await good.api.sessions.createSession(
      session.CreateSessionRequest.fromPartial({ session: { userId: "ts-tls" } }),
    );
    assert.ok(created.session?.sessionId);
    for (const refused of [noCert, plain]) {
      await assert.rejects(
        refused.api.sessions.createSession(
          session.CreateSessionRequest.fromPartial({ session: { userId: "ts-tls" } }),
          { timeoutMs: scaled(10_000) },
        ),
        (error: unknown) => isStatekeeperError(error) && error.code === 14 /* UNAVAILABLE */,
      );
    }
    assert.throws(() => new StatekeeperClient(secured.address, { tls: { clientCert: tls.clientCert } }), /together/);
  } finally {
    good.close();
    noCert.close();
    plain.close();
    await secured.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

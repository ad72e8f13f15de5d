package dev.statekeeper.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real statekeeper server process for the tests: {@code statekeeper serve} on a free loopback
 * port with a temporary data dir and an API key. The executable is STATEKEEPER_BIN, or the
 * repository's .venv/bin/statekeeper. {@link #kill()} is kill -9; {@link #start()} starts it again
 * on the same port and data dir. {@link #close()} stops it and removes the data dir; a JVM
 * shutdown hook stops it too if a test run is interrupted.
 */
final class ServerProcess implements AutoCloseable {
  static final String API_KEY = "sk-java-tests";

  private final Path bin;
  private final Path dataDir;
  private final Path log;
  private final int port;
  private final Thread hook;
  private Process process;
  private int starts;

  private final List<String> extraArgs;

  private ServerProcess(List<String> extraArgs) throws IOException {
    this.extraArgs = List.copyOf(extraArgs);
    this.bin = executable();
    this.dataDir = Files.createTempDirectory("statekeeper-java-test");
    this.log = dataDir.resolve("server.log");
    this.port = freePort();
    this.hook = new Thread(this::stopQuietly, "statekeeper-test-server-stop");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** A started server (its readiness awaited). */
  static ServerProcess launch(String... extraArgs) throws Exception {
    ServerProcess server = new ServerProcess(List.of(extraArgs));
    try {
      server.start();
      return server;
    } catch (Exception | Error e) {
      server.close();
      throw e;
    }
  }

  /** The load of this machine per core, at least 1: the factor of every test deadline. */
  static double loadFactor() {
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    int cores = Runtime.getRuntime().availableProcessors();
    return Math.min(10, Math.max(1, load / Math.max(1, cores)));
  }

  /** {@code base} scaled by the machine's load. */
  static Duration scaled(Duration base) {
    return Duration.ofMillis((long) (base.toMillis() * loadFactor()));
  }

  private static Path executable() {
    String env = System.getenv("STATEKEEPER_BIN");
    if (env != null && !env.isEmpty()) {
      return Path.of(env);
    }
    Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    for (Path p = dir; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("proto")) && Files.isDirectory(p.resolve("clients"))) {
        return p.resolve(".venv/bin/statekeeper");
      }
    }
    return dir.resolve("../../.venv/bin/statekeeper").normalize();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  String target() {
    return "127.0.0.1:" + port;
  }

  /** A client of this server with the API key (fast retries, so tests are not slowed). */
  StatekeeperClient client() {
    return StatekeeperClient.builder(target()).apiKey(API_KEY).build();
  }

  /** Starts the server (again) and waits until it answers health checks. */
  synchronized void start() throws Exception {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("server already running");
    }
    starts++;
    Files.writeString(
        log,
        "---- start " + starts + "\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                    bin.toString(),
                    "serve",
                    "--listen",
                    target(),
                    "--data-dir",
                    dataDir.resolve("data").toString(),
                    "--workers",
                    "1",
                    "--api-key",
                    API_KEY + "=java-tests",
                    "--log-format",
                    "text",
                    "--log-level",
                    "WARNING"));
    command.addAll(extraArgs);
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    process = pb.start();
    awaitReady(scaled(Duration.ofSeconds(90)));
  }

  private void awaitReady(Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    ManagedChannel channel = ManagedChannelBuilder.forTarget(target()).usePlaintext().build();
    try {
      while (true) {
        if (!process.isAlive()) {
          throw new IllegalStateException(
              "statekeeper serve exited with " + process.exitValue() + ":\n" + logTail());
        }
        try {
          HealthCheckResponse res =
              HealthGrpc.newBlockingStub(channel)
                  .withDeadlineAfter(2, TimeUnit.SECONDS)
                  .check(HealthCheckRequest.getDefaultInstance());
          if (res.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
            return;
          }
        } catch (RuntimeException notYet) {
          channel.resetConnectBackoff();
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "statekeeper serve not ready within " + within + ":\n" + logTail());
        }
        Thread.sleep(100);
      }
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** kill -9, and waits for the process to be gone. */
  synchronized void kill() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(60, TimeUnit.SECONDS);
    }
  }

  String logTail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private synchronized void stopQuietly() {
    if (process != null && process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(15, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    stopQuietly();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

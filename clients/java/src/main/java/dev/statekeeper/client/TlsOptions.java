package dev.statekeeper.client;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * How to reach a server that serves TLS; the same options as every other statekeeper client.
 *
 * @param rootCa the CA certificate(s) (PEM file) that signed the server's certificate; null: the
 *     system's roots
 * @param clientCert this client's certificate (PEM file), sent when the server requires one
 *     (mTLS); null for none; given with {@code clientKey}
 * @param clientKey the PKCS#8 PEM key of {@code clientCert}
 * @param serverName the name to verify the server's certificate for instead of the target's host;
 *     null for the host
 */
public record TlsOptions(File rootCa, File clientCert, File clientKey, String serverName) {
  public TlsOptions {
    if ((clientCert == null) != (clientKey == null)) {
      throw new IllegalArgumentException("TlsOptions: clientCert and clientKey go together");
    }
  }

  /**
   * Options from STATEKEEPER_TLS_ROOT_CA, STATEKEEPER_TLS_CLIENT_CERT, STATEKEEPER_TLS_CLIENT_KEY and
   * STATEKEEPER_TLS_SERVER_NAME; null when none is set.
   */
  public static TlsOptions fromEnv() {
    String ca = env("STATEKEEPER_TLS_ROOT_CA");
    String cert = env("STATEKEEPER_TLS_CLIENT_CERT");
    String key = env("STATEKEEPER_TLS_CLIENT_KEY");
    String name = env("STATEKEEPER_TLS_SERVER_NAME");
    if (ca == null && cert == null && key == null && name == null) {
      return null;
    }
    return new TlsOptions(file(ca), file(cert), file(key), name);
  }

  /** grpc-java TlsChannelCredentials of these options. */
  public ChannelCredentials credentials() {
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
    try {
      if (rootCa != null) {
        builder.trustManager(rootCa);
      }
      if (clientCert != null) {
        builder.keyManager(clientCert, clientKey);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("statekeeper: cannot read a TLS file", e);
    }
    return builder.build();
  }

  private static String env(String name) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? null : value;
  }

  private static File file(String path) {
    return path == null ? null : new File(path);
  }
}

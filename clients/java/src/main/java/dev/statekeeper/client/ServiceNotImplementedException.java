package dev.statekeeper.client;

import com.google.rpc.ErrorInfo;
import io.grpc.Metadata;
import io.grpc.Status;

/**
 * The server answered UNIMPLEMENTED: it does not serve the method (for example a server older
 * than the contract this client was built from).
 */
public final class ServiceNotImplementedException extends StatekeeperException {
  private static final long serialVersionUID = 1L;

  ServiceNotImplementedException(Status status, Metadata trailers, ErrorInfo info) {
    super(status, trailers, info);
  }

  /** ErrorInfo metadata["capability"] when the server names one, else the status description. */
  public String capability() {
    return metadata("capability")
        .orElse(getStatus().getDescription() == null ? "" : getStatus().getDescription());
  }
}

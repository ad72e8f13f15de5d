// Command generrors writes statekeeper/errors_gen.go: one named sentinel
// error per value of the generated statekeeperv1.ErrorReason enum
// (ERROR_REASON_ETAG_MISMATCH -> ErrEtagMismatch), so that a reason added to
// common.proto gets its Go name by `go generate ./...` after `make generate`.
// statekeeper's tests fail when the file is stale.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/statekeeper/statekeeper/clients/go/internal/reasons"
)

func main() {
	out := flag.String("out", "errors_gen.go", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, reasons.Source(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// Package unavailable holds the one error every stubbed boxcutter entry point reports.
package unavailable

import "errors"

// Err is returned (or panicked with) by every stub that would do boxcutter work.
var Err = errors.New("boxcutter is not available in this build (module host refused by the Go proxy); BoxcutterRuntime must stay disabled")

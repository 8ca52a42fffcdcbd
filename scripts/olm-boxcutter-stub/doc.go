// Package boxcutter is NOT the real pkg.package-operator.run/boxcutter.
//
// Why this exists: operator-controller v1.11.0 imports boxcutter v0.14.0 for its alpha, default-off
// BoxcutterRuntime (ClusterObjectSet revisions), and the Go module proxy on olmpub's machines refuses
// that module's host (HTTP 403, "Go module host not permitted") at every version, as it does
// github.com/package-operator/boxcutter. scripts/tools.sh builds operator-controller (test
// infrastructure only, never shipped) with `go mod edit -replace` pointing here.
//
// What is here: only the identifiers and signatures operator-controller v1.11.0 compiles against.
//   - managedcache.NewTrackingCache IS used on the default Helm path (main.go creates it, adds it to
//     the manager, feeds its Source to the ClusterExtension controller, and the Helm applier calls
//     Watch after each apply and Free from a finalizer). Here it is a no-op: Start waits for the
//     context, Source never fires, Free has nothing to free, and Watch returns an error that
//     operator-controller logs as "drift detection disabled" (it treats that as non-fatal). So
//     install, upgrade and uninstall work, but manual edits to installed objects are not reverted
//     until the ClusterExtension is reconciled for another reason.
//   - Everything else (machinery, ownerhandling, probing, validation, this package) is reached only
//     with --feature-gates=BoxcutterRuntime=true; it returns unavailable.Err or panics with its text.
//     BoxcutterRuntime must stay disabled.
package boxcutter

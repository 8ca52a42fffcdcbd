// Stand-in for pkg.package-operator.run/boxcutter, which the Go module proxy here refuses to serve.
// See doc.go. Used only by scripts/tools.sh (go mod edit -replace) to build operator-controller.
module pkg.package-operator.run/boxcutter

go 1.26.0

require (
	github.com/go-logr/logr v1.4.3
	k8s.io/apimachinery v0.36.2
	k8s.io/client-go v0.36.2
	sigs.k8s.io/controller-runtime v0.24.1
)

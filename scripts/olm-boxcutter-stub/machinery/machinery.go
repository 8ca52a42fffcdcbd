// Package machinery: boxcutter stub (see the module's doc.go). The engines do nothing but fail.
package machinery

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"pkg.package-operator.run/boxcutter/internal/unavailable"
	"pkg.package-operator.run/boxcutter/machinery/types"
	"pkg.package-operator.run/boxcutter/validation"
)

type Action string

const ActionCollision Action = "Collision"

type RevisionResult interface {
	GetValidationError() error
	GetPhases() []PhaseResult
	InTransition() bool
	IsComplete() bool
	String() string
}

type PhaseResult interface {
	GetValidationError() error
	GetObjects() []ObjectResult
	IsComplete() bool
}

type ObjectResult interface {
	Action() Action
	Object() client.Object
	ProbeResults() types.ProbeResultContainer
	String() string
}

type RevisionTeardownResult interface{ IsComplete() bool }

type (
	Comparator     struct{}
	ObjectEngine   struct{}
	PhaseEngine    struct{}
	RevisionEngine struct{}
)

func NewComparator(discovery.OpenAPIV3SchemaInterface, *runtime.Scheme, string) *Comparator {
	return &Comparator{}
}

func NewObjectEngine(*runtime.Scheme, client.Reader, client.Writer, *Comparator, string, string, string, client.Reader) *ObjectEngine {
	return &ObjectEngine{}
}

func NewPhaseEngine(*ObjectEngine, *validation.PhaseValidator) *PhaseEngine { return &PhaseEngine{} }

func NewRevisionEngine(*PhaseEngine, *validation.RevisionValidator, client.Writer) *RevisionEngine {
	return &RevisionEngine{}
}

func (*RevisionEngine) Reconcile(context.Context, types.Revision, ...types.RevisionReconcileOption) (RevisionResult, error) {
	return nil, unavailable.Err
}

func (*RevisionEngine) Teardown(context.Context, types.Revision, ...types.RevisionTeardownOption) (RevisionTeardownResult, error) {
	return nil, unavailable.Err
}

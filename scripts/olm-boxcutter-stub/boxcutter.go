package boxcutter

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"pkg.package-operator.run/boxcutter/internal/unavailable"
	"pkg.package-operator.run/boxcutter/machinery/types"
	"pkg.package-operator.run/boxcutter/ownerhandling"
	"pkg.package-operator.run/boxcutter/probing"
)

type (
	Phase                   = types.Phase
	RevisionBuilder         = types.Revision
	RevisionReconcileOption = types.RevisionReconcileOption
	ObjectReconcileOption   = types.ObjectReconcileOption
)

// WithCollisionProtection is converted from ocv1.CollisionProtection by operator-controller.
type WithCollisionProtection string

const ProgressProbeType = "progress"

func NewPhase(string, []client.Object) Phase { panic(unavailable.Err) }

func NewRevisionWithOwner(string, int64, []Phase, client.Object, *ownerhandling.Native) RevisionBuilder {
	panic(unavailable.Err)
}

func WithSiblingOwners([]client.Object) RevisionReconcileOption  { return nil }
func WithProbe(string, probing.Prober) RevisionReconcileOption   { return nil }
func WithAggregatePhaseReconcileErrors() RevisionReconcileOption { return nil }
func WithObjectReconcileOptions(client.Object, ...ObjectReconcileOption) RevisionReconcileOption {
	return nil
}

// Package validation: boxcutter stub (see the module's doc.go).
package validation

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type (
	PhaseValidator    struct{}
	RevisionValidator struct{}
)

func NewClusterPhaseValidator(meta.RESTMapper, client.Writer) *PhaseValidator {
	return &PhaseValidator{}
}

func NewRevisionValidator() *RevisionValidator { return &RevisionValidator{} }

// Package types: boxcutter stub (see the module's doc.go).
package types

import "sigs.k8s.io/controller-runtime/pkg/client"

type Revision interface{ GetPhases() []Phase }

type Phase interface{ GetObjects() []client.Object }

type (
	RevisionReconcileOption interface{}
	RevisionTeardownOption  interface{}
	ObjectReconcileOption   interface{}
)

type ProbeStatus string

const ProbeStatusTrue ProbeStatus = "True"

type ProbeResult struct {
	Status   ProbeStatus
	Messages []string
}

type ProbeResultContainer map[string]ProbeResult

// Package ownerhandling: boxcutter stub (see the module's doc.go).
package ownerhandling

import "k8s.io/apimachinery/pkg/runtime"

type Native struct{}

func NewNative(*runtime.Scheme) *Native { return &Native{} }

// Package probing: boxcutter stub (see the module's doc.go). Probes are plain data here; nothing
// evaluates them. Field layouts match operator-controller's api/v1 probe types, which it converts.
package probing

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type Prober interface{}

type And []Prober

type ConditionProbe struct{ Type, Status string }

type FieldsEqualProbe struct{ FieldA, FieldB string }

type FieldValueProbe struct{ FieldPath, Value string }

type GroupKindSelector struct {
	schema.GroupKind
	Prober
}

type LabelSelector struct {
	labels.Selector
	Prober
}

type ObservedGenerationProbe struct{ Prober }

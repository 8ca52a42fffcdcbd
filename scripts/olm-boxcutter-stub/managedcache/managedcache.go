// Package managedcache: boxcutter stub (see the module's doc.go). This is the one package
// operator-controller uses on its default Helm path, so NewTrackingCache succeeds and returns a
// no-op cache that keeps that path running without drift detection.
package managedcache

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"pkg.package-operator.run/boxcutter/internal/unavailable"
)

type TrackingCache interface {
	client.Reader
	Start(ctx context.Context) error
	Source(handler handler.EventHandler, predicates ...predicate.Predicate) source.Source
	Watch(ctx context.Context, user client.Object, gvks sets.Set[schema.GroupVersionKind]) error
	Free(ctx context.Context, user client.Object) error
}

func NewTrackingCache(log logr.Logger, _ *rest.Config, _ cache.Options) (TrackingCache, error) {
	log.Info("boxcutter stub: the tracking cache is a no-op; installed objects are not watched (no drift detection)")
	return noop{}, nil
}

type noop struct{}

// Start runs as a manager runnable until the manager stops.
func (noop) Start(ctx context.Context) error { <-ctx.Done(); return nil }

// Source never delivers an event.
func (noop) Source(handler.EventHandler, ...predicate.Predicate) source.Source {
	return source.Func(func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error { return nil })
}

// Watch fails; the Helm applier logs it and carries on without drift detection.
func (noop) Watch(context.Context, client.Object, sets.Set[schema.GroupVersionKind]) error {
	return fmt.Errorf("the tracking cache is a no-op stub that watches nothing: %w", unavailable.Err)
}

// Free succeeds: nothing was ever watched (it runs from the ClusterExtension deletion finalizer).
func (noop) Free(context.Context, client.Object) error { return nil }

func (noop) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return unavailable.Err
}

func (noop) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return unavailable.Err
}

/**
 * The operator runtime: controller-runtime's seams in TypeScript. See manager.ts for the wiring and
 * each module's header for the semantics it reproduces.
 */
export { Manager, type ManagerOptions, type Runnable } from './manager.js';
export {
  Controller,
  TerminalError,
  isTerminalError,
  isPanic,
  type ControllerOptions,
  type ControllerStats,
  type Reconciler,
  type ReconcileContext,
  type Result,
} from './controller/controller.js';
export {
  enqueueRequestForObject,
  enqueueRequestForOwner,
  enqueueRequestsFromMapFunc,
  generationChangedPredicate,
  requestKey,
  requestFromKey,
  requestFor,
  type Request,
  type ObjectEvent,
  type EventMapper,
  type Predicate,
} from './controller/handler.js';
export { WorkQueue, LOW_PRIORITY, type AddOptions, type QueueItem, type WorkQueueOptions } from './queue/workqueue.js';
export { ItemExponentialFailureRateLimiter, type RateLimiter } from './queue/ratelimiter.js';
export { Informer, type EventHandler, type InformerOptions } from './cache/informer.js';
export { Reflector, type ReflectorOptions, type ReflectorStats } from './cache/reflector.js';
export { Store, NAMESPACE_INDEX, deepFreeze, type IndexFunc } from './cache/store.js';
export {
  KubeClient,
  WriteCounter,
  type KubeClientOptions,
  type ApplyOptions,
  type ListOptions,
  type WatchOptions,
  type DeleteOptions,
  type WriteOptions,
  type PatchType,
  type RequestOptions,
} from './kube/client.js';
export { loadKubeConfig, inClusterNamespace, parseWatchNamespaces, isInCluster } from './kube/config.js';
export {
  KubeApiError,
  KubeTransportError,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isTooManyRequests,
} from './kube/errors.js';
export { builtinResource, resourcePath, type ResourceInfo } from './kube/resources.js';
export { objectKey, parseApiVersion, clone, type KubeObject, type ObjectMeta, type OwnerReference, type TypeRef, type KubeList, type ApiStatus, type WatchEvent } from './kube/types.js';
export { LeaderElector, defaultIdentity, formatMicroTime, type LeaderElectorOptions, type LeaderElectionRecord, type ResourceLock, type StoppedReason } from './leader/election.js';
export { LeaseLock, LEASE, type Lease } from './leader/leaselock.js';
export { HealthProbes, evaluateChecks, ping, type Checker, type HealthProbeServerOptions } from './healthz.js';
export { RuntimeMetrics, RECONCILE_TIME_BUCKETS, WORKQUEUE_BUCKETS } from './metrics/registry.js';
export { MetricsServer, type MetricsServerOptions } from './metrics/server.js';
export { DelegatingAuth, bearerToken, type AuthDecision, type UserInfo } from './metrics/auth.js';
export { WebhookServer, WebhookBadRequest, DEFAULT_WEBHOOK_CERT_DIR, type WebhookHandler, type WebhookServerOptions } from './webhook/server.js';
export { admissionHandler, parseAdmissionReview, allowed, denied, errored, patched, jsonPatch, type AdmissionRequest, type AdmissionResponse, type AdmissionReview } from './webhook/admission.js';
export { conversionHandler, type ConversionReview } from './webhook/conversion.js';
export { EventRecorder, EVENT, type EventType, type EventRecorderOptions } from './events.js';
export { Logger, parseLogLevel, silentLogger, type LogLevel } from './log.js';
export { setupSignalHandler } from './signals.js';
export { generateSelfSigned } from './tls/selfsigned.js';
export { CertWatcher } from './tls/certwatcher.js';
export { realClock, sleep, type Clock } from './clock.js';

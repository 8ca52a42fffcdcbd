/**
 * The election record stored in a coordination.k8s.io/v1 Lease. Updates are PUTs carrying the
 * resourceVersion last seen, so two candidates cannot both win a race (409 Conflict for the loser).
 * Each call has its own timeout, max(renewDeadline/2, 1 s) as controller-runtime configures it.
 */
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import type { LeaderElectionRecord, ResourceLock } from './election.js';

export const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } as const;

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    strategy?: string;
    preferredHolder?: string;
  };
}

function toRecord(lease: Lease): LeaderElectionRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: s.acquireTime ?? '',
    renewTime: s.renewTime ?? '',
    leaseTransitions: s.leaseTransitions ?? 0,
  };
}

function toSpec(r: LeaderElectionRecord): Lease['spec'] {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime || undefined,
    renewTime: r.renewTime || undefined,
    leaseTransitions: r.leaseTransitions,
  };
}

export class LeaseLock implements ResourceLock {
  private lease?: Lease;

  constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
    private readonly timeoutMs = 5_000,
  ) {}

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async get(signal?: AbortSignal): Promise<LeaderElectionRecord | undefined> {
    try {
      this.lease = await this.client.get<Lease>(LEASE, this.name, this.namespace, { signal, timeoutMs: this.timeoutMs });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    return toRecord(this.lease);
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.lease = await this.client.create<Lease>(
      { apiVersion: LEASE.apiVersion, kind: LEASE.kind, metadata: { name: this.name, namespace: this.namespace }, spec: toSpec(record) },
      { signal, timeoutMs: this.timeoutMs },
    );
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    const next: Lease = { ...this.lease, spec: { ...this.lease.spec, ...toSpec(record) } };
    this.lease = await this.client.replace<Lease>(next, { signal, timeoutMs: this.timeoutMs });
  }
}

import assert from 'node:assert/strict';
import { HealthProbes } from '../../../operator/runtime/healthz.js';

describe('runtime/healthz: probe handlers (controller-runtime shapes)', () => {
  let synced = false;
  const probes = new HealthProbes({ bindAddress: '0' });
  probes.addHealthzCheck('ping', () => {});
  probes.addReadyzCheck('informers', () => {
    if (!synced) throw new Error('not synced');
  });
  probes.addReadyzCheck('webhook', () => true);

  it('answers ok with 200 when every check passes, and lists checks with ?verbose', async () => {
    synced = true;
    assert.deepEqual((await probes.handle('GET', '/healthz')).body, 'ok');
    const r = await probes.handle('GET', '/readyz?verbose');
    assert.equal(r.status, 200);
    assert.equal(r.body, '[+]informers ok\n[+]webhook ok\nhealthz check passed\n');
  });

  it('answers 500 with per-check lines (reasons withheld) when a check fails', async () => {
    synced = false;
    const r = await probes.handle('GET', '/readyz');
    assert.equal(r.status, 500);
    assert.equal(r.body, '[-]informers failed: reason withheld\n[+]webhook ok\nhealthz check failed\n');
    assert.equal(r.headers['Content-Type'], 'text/plain; charset=utf-8');
  });

  it('skips ?exclude checks and warns about unknown ones', async () => {
    synced = false;
    const r = await probes.handle('GET', '/readyz?exclude=informers&exclude=nope&verbose');
    assert.equal(r.status, 200);
    assert.equal(r.body, '[+]informers excluded: ok\n[+]webhook ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nhealthz check passed\n');
  });

  it('serves one named check at /readyz/<name>', async () => {
    synced = false;
    assert.equal((await probes.handle('GET', '/readyz/webhook')).status, 200);
    const r = await probes.handle('GET', '/readyz/informers');
    assert.equal(r.status, 500);
    assert.match(r.body, /internal server error: not synced/);
    assert.equal((await probes.handle('GET', '/readyz/unknown')).status, 404);
    assert.equal((await probes.handle('GET', '/other')).status, 404);
  });

  it('installs ping when no check is registered', async () => {
    const empty = new HealthProbes({ bindAddress: '0' });
    const r = await empty.handle('GET', '/healthz?verbose');
    assert.equal(r.body, '[+]ping ok\nhealthz check passed\n');
  });

  it('rejects duplicate and malformed check names', () => {
    assert.throws(() => probes.addReadyzCheck('webhook', () => {}), /already registered/);
    assert.throws(() => probes.addReadyzCheck('a/b', () => {}), /invalid check name/);
  });
});

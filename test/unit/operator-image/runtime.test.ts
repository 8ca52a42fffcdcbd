/** The runtime layer's system files, base image trees (whiteouts, symlinks), finding node, labels. */
import assert from 'node:assert/strict';
import type { ImageConfig } from '../../../bundle/oci/content.js';
import { GROUP, ImageTree, NSSWITCH, PASSWD, declaredNodeVersion, findNode, nodeCandidates, systemEntries, throughBase, type FsNode } from '../../../bundle/operator-image/runtime.js';
import { EXPOSED_PORTS, defaultTag, operatorImageLabels } from '../../../bundle/operator-image/build.js';

const cfg = (env: string[] = []): ImageConfig => ({ architecture: 'amd64', os: 'linux', config: { Env: env }, rootfs: { type: 'layers', diff_ids: [] } });
const f: FsNode = { type: 'file' };
const d: FsNode = { type: 'dir' };
const l = (target: string): FsNode => ({ type: 'symlink', target });

describe('operator image: runtime', () => {
  it('names 65532 "nonroot" in passwd and group, resolves hosts from files then DNS', () => {
    assert.match(PASSWD, /^nonroot:x:65532:65532:nonroot:\/home\/nonroot:\/sbin\/nologin$/m);
    assert.match(PASSWD, /^root:x:0:0:/m);
    assert.match(GROUP, /^nonroot:x:65532:$/m);
    assert.match(NSSWITCH, /^hosts: +files dns$/m);
    assert.match(NSSWITCH, /^passwd: +files$/m);
  });

  it('has a sticky world-writable /tmp, a private home for 65532 and the CA bundle only when asked', () => {
    const with_ = systemEntries({ caCertificates: '/etc/ssl/certs/ca-certificates.crt' });
    const tmp = with_.find((e) => e.path === '/tmp')!;
    assert.equal(tmp.type, 'dir');
    assert.equal((tmp as { mode: number }).mode, 0o1777);
    const home = with_.find((e) => e.path === '/home/nonroot') as { uid?: number; gid?: number; mode?: number };
    assert.deepEqual([home.uid, home.gid, home.mode], [65532, 65532, 0o700]);
    assert.ok(with_.some((e) => e.path === '/etc/ssl/certs/ca-certificates.crt' && 'source' in e && e.source === '/etc/ssl/certs/ca-certificates.crt'));
    assert.ok(!systemEntries({ caCertificates: false }).some((e) => e.path.startsWith('/etc/ssl')));
    // Nothing else is writable by the image's user.
    for (const e of with_) if (e.path !== '/tmp' && e.path !== '/home/nonroot') assert.ok(!('uid' in e && e.uid === 65532), e.path);
  });

  describe('a base image tree', () => {
    it('applies layers in order with whiteouts and opaque directories', () => {
      const t = new ImageTree();
      t.apply([
        { path: 'usr/', node: d },
        { path: 'usr/local/bin/node', node: f },
        { path: 'opt/a/x', node: f },
        { path: 'opt/a/y', node: f },
        { path: 'etc/passwd', node: f },
      ]);
      t.apply([
        { path: 'usr/local/bin/.wh.node', node: f },
        { path: 'opt/a/.wh..wh..opq', node: f },
        { path: 'opt/a/z', node: f },
      ]);
      assert.equal(t.nodes.has('usr/local/bin/node'), false);
      assert.deepEqual([...t.nodes.keys()].filter((k) => k.startsWith('opt/a/')), ['opt/a/z']);
      assert.deepEqual(t.nodes.get('etc/passwd'), f);
    });

    it('follows symlinks (relative, absolute, chained) and never leaves the root', () => {
      const t = new ImageTree();
      t.apply([
        { path: 'lib', node: l('usr/lib') },
        { path: 'lib64', node: l('usr/lib64') },
        { path: 'usr/lib64/ld-linux-x86-64.so.2', node: l('../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2') },
        { path: 'usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', node: f },
        { path: 'escape', node: l('../../../../etc') },
      ]);
      assert.equal(t.resolve('lib/x86_64-linux-gnu/libc.so.6'), 'usr/lib/x86_64-linux-gnu/libc.so.6');
      assert.equal(t.resolve('lib64/ld-linux-x86-64.so.2'), 'usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2');
      assert.equal(t.resolve('lib64/ld-linux-x86-64.so.2', false), 'usr/lib64/ld-linux-x86-64.so.2');
      assert.equal(t.resolve('escape/passwd'), 'etc/passwd');
      assert.deepEqual(t.lookup('/lib64/ld-linux-x86-64.so.2'), f);
    });

    it('finds node on the base PATH first, then in the usual places; symlinked node counts', () => {
      const t = new ImageTree();
      t.apply([
        { path: 'nodejs/bin/node', node: f },
        { path: 'opt/node-v20/bin/node', node: f },
        { path: 'usr/bin/node', node: l('/opt/node-v20/bin/node') },
      ]);
      assert.equal(findNode(t, cfg(['PATH=/opt/node-v20/bin:/usr/bin'])), '/opt/node-v20/bin/node');
      assert.equal(findNode(t, cfg(['PATH=/bin'])), '/usr/bin/node');
      assert.deepEqual(nodeCandidates(cfg(['PATH=/x:relative'])), ['/usr/local/bin/node', '/x/node', '/usr/bin/node', '/nodejs/bin/node', '/bin/node']);
      const empty = new ImageTree();
      empty.apply([{ path: 'usr/local/bin/node', node: d }]);
      assert.equal(findNode(empty, cfg()), undefined, 'a directory named node is not node');
    });

    it('places new files through the base symlinks and keeps the base directories', () => {
      const t = new ImageTree();
      t.apply([
        { path: 'lib', node: l('usr/lib') },
        { path: 'usr/lib/x86_64-linux-gnu', node: d },
        { path: 'usr/local/bin', node: d },
      ]);
      const out = throughBase(
        [
          { path: '/lib/x86_64-linux-gnu/libc.so.6', type: 'file', content: 'c' },
          { path: '/usr/local/bin', type: 'dir' },
          { path: '/usr/local/bin/node', type: 'symlink', target: '/nodejs/bin/node' },
        ],
        t,
      );
      assert.deepEqual(out.map((e) => e.path), ['/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/local/bin/node']);
    });

    it('reads the node version a base declares', () => {
      assert.equal(declaredNodeVersion(cfg(['NODE_VERSION=20.19.1'])), '20.19.1');
      assert.equal(declaredNodeVersion(cfg(['NODE_VERSION=v22.1.0'])), '22.1.0');
      assert.equal(declaredNodeVersion(cfg(['PATH=/bin'])), undefined);
    });
  });

  it('labels the image with the OCI keys, the revision only when known', () => {
    const labels = operatorImageLabels({ version: '1.2.3', created: '2024-01-01T00:00:00Z', source: 'https://example.com/x', license: 'Apache-2.0', revision: 'abc' });
    assert.equal(labels['org.opencontainers.image.title'], 'inference-operator');
    assert.equal(labels['org.opencontainers.image.version'], '1.2.3');
    assert.equal(labels['org.opencontainers.image.licenses'], 'Apache-2.0');
    assert.equal(labels['org.opencontainers.image.revision'], 'abc');
    assert.equal(labels['org.opencontainers.image.created'], '2024-01-01T00:00:00Z');
    assert.equal(labels['org.opencontainers.image.source'], 'https://example.com/x');
    assert.ok(!('org.opencontainers.image.revision' in operatorImageLabels({ version: '1', created: 'x', source: 's' })));
  });

  it('exposes health, metrics and webhook ports; tags drop "+"', () => {
    assert.deepEqual(EXPOSED_PORTS, ['8081/tcp', '8443/tcp', '9443/tcp']);
    assert.equal(defaultTag('1.0.0+build.5'), '1.0.0_build.5');
  });
});

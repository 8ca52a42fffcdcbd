import assert from 'node:assert/strict';
import { renderMermaid, parseMermaidStructure } from '../../../catalog/graph/mermaid.js';
import { buildGraph, renderHtml, renderSvg } from '../../../catalog/graph/svg.js';
import type { DeclarativeConfig } from '../../../catalog/fbc/types.js';

const img = (n: number) => `quay.io/x/foo@sha256:${String(n).repeat(64)}`;
function sample(): DeclarativeConfig {
  const b = (name: string, version: string, i: number) => ({ schema: 'olm.bundle', name, package: 'foo', image: img(i), properties: [{ type: 'olm.package', value: { packageName: 'foo', version } }] });
  return {
    packages: [{ schema: 'olm.package', name: 'foo', defaultChannel: 'stable' }],
    channels: [
      { schema: 'olm.channel', name: 'stable', package: 'foo', entries: [{ name: 'foo.v1.0.0' }, { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0', skipRange: '<1.1.0' }, { name: 'foo.v1.2.0', replaces: 'foo.v1.1.0', skips: ['foo.v1.0.0'] }] },
      { schema: 'olm.channel', name: 'alpha', package: 'foo', entries: [{ name: 'foo.v1.2.0', replaces: 'foo.v1.1.0' }] },
    ],
    bundles: [b('foo.v1.0.0', '1.0.0', 1), b('foo.v1.1.0', '1.1.0', 2), b('foo.v1.2.0', '1.2.0', 3)],
    deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.channel', name: 'alpha' }, message: 'gone' }, { reference: { schema: 'olm.bundle', name: 'foo.v1.0.0' }, message: '<CVE>' }] }],
    others: [],
  };
}

describe('catalog/graph: Mermaid (opm alpha render-graph shape)', () => {
  it('prints exactly what opm prints for this catalog', () => {
    assert.equal(
      renderMermaid(sample()),
      `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "foo"
  subgraph "foo"
    %% channel "alpha"
    subgraph foo-alpha["alpha"]
      foo-alpha-foo.v1.2.0["foo.v1.2.0"]
      foo-alpha-foo.v1.1.0["foo.v1.1.0"]-- replace --> foo-alpha-foo.v1.2.0["foo.v1.2.0"]
    end
    %% channel "stable"
    subgraph foo-stable["stable"]
      foo-stable-foo.v1.2.0["foo.v1.2.0"]
      foo-stable-foo.v1.0.0["foo.v1.0.0"]-- skip --> foo-stable-foo.v1.2.0["foo.v1.2.0"]
      foo-stable-foo.v1.1.0["foo.v1.1.0"]-- replace --> foo-stable-foo.v1.2.0["foo.v1.2.0"]
      foo-stable-foo.v1.1.0["foo.v1.1.0"]
      foo-stable-foo.v1.0.0["foo.v1.0.0"]-- "skipRange(<1.1.0)" --> foo-stable-foo.v1.1.0["foo.v1.1.0"]
      foo-stable-foo.v1.0.0["foo.v1.0.0"]-- replace --> foo-stable-foo.v1.1.0["foo.v1.1.0"]
      foo-stable-foo.v1.0.0["foo.v1.0.0"]
    end
  end
style foo-alpha fill:#DCD0FF
class foo-stable-foo.v1.0.0 deprecated
`,
    );
  });

  it('parses Mermaid into nodes and labelled edges for structural comparison', () => {
    const s = parseMermaidStructure(renderMermaid(sample()));
    assert.deepEqual(s.nodes, ['foo-alpha-foo.v1.2.0', 'foo-stable-foo.v1.0.0', 'foo-stable-foo.v1.1.0', 'foo-stable-foo.v1.2.0']);
    assert.ok(s.edges.includes('foo-stable-foo.v1.0.0 -"skipRange(<1.1.0)"-> foo-stable-foo.v1.1.0'));
    assert.equal(s.edges.length, 5);
    assert.deepEqual(s.styles, ['style foo-alpha fill:#DCD0FF']);
  });

  it('fails on a bundle without exactly one valid olm.package, as opm does', () => {
    const c = sample();
    c.bundles[0]!.properties = [];
    assert.throws(() => renderMermaid(c), /expected exactly 1/);
  });
});

describe('catalog/graph: SVG and HTML', () => {
  it('builds lanes per channel with ghost nodes for edges from other channels, heads and deprecations', () => {
    const g = buildGraph(sample());
    assert.equal(g.length, 1);
    assert.deepEqual(g[0]!.columns, ['foo.v1.0.0', 'foo.v1.1.0', 'foo.v1.2.0']);
    const alpha = g[0]!.channels[0]!;
    assert.equal(alpha.deprecated, 'gone');
    assert.deepEqual(alpha.nodes.map((n) => [n.version, n.external, n.head]), [['1.1.0', true, false], ['1.2.0', false, true]]);
    const stable = g[0]!.channels[1]!;
    assert.equal(stable.isDefault, true);
    assert.deepEqual(stable.edges.map((e) => `${e.kind}:${e.from}>${e.to}`).sort(), ['replace:foo.v1.0.0>foo.v1.1.0', 'replace:foo.v1.1.0>foo.v1.2.0', 'skip:foo.v1.0.0>foo.v1.2.0', 'skipRange:foo.v1.0.0>foo.v1.1.0']);
    assert.equal(stable.nodes.find((n) => n.version === '1.0.0')!.deprecated, '<CVE>');
  });

  it('renders a self-contained, deterministic SVG: lanes, boxes, arrows, legend, escaped text', () => {
    const svg = renderSvg(buildGraph(sample()), 'Upgrade graph: foo');
    assert.equal(svg, renderSvg(buildGraph(sample()), 'Upgrade graph: foo'));
    assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
    assert.equal((svg.match(/class="channel"/g) ?? []).length, 2);
    assert.equal((svg.match(/<g class="node/g) ?? []).length, 5);
    assert.equal((svg.match(/class="edge replace"/g) ?? []).length, 3);
    assert.equal((svg.match(/class="edge skip"/g) ?? []).length, 1);
    assert.equal((svg.match(/class="edge skipRange"/g) ?? []).length, 1);
    assert.ok(svg.includes('class="legend"'));
    assert.ok(svg.includes('deprecated: &lt;CVE&gt;'));
    assert.ok(!/https?:\/\/(?!www\.w3\.org\/2000\/svg)/.test(svg), 'no external references');
    assert.ok(!svg.includes('<script'));
  });

  it('wraps it in an HTML page that needs no network: inline SVG, tables, Mermaid source, no scripts', () => {
    const html = renderHtml(sample(), 'Upgrade graph: foo');
    assert.ok(html.startsWith('<!doctype html>'));
    assert.ok(html.includes('<svg xmlns'));
    assert.ok(!html.includes('<script') && !/\b(src|href)=/.test(html));
    assert.ok(html.includes('<h3>foo / stable (default)</h3>'));
    assert.ok(html.includes('foo-stable-foo.v1.0.0[&quot;foo.v1.0.0&quot;]-- replace --&gt;'));
  });
});

import assert from 'node:assert/strict';
import AjvModule from 'ajv';
import YAML from 'yaml';
import {
  CHART_NAME,
  KUBE_VERSION_CONSTRAINT,
  buildChart,
  defaultValues,
  mergeValues,
  objectTemplate,
  parseSet,
  renderChart,
  type BuiltChart,
} from '../../../bundle/chart/index.js';
import { scalar, templatedString } from '../../../bundle/chart/template-writer.js';
import { blockValue, rawValue, spliceKey, templateString, ValueCondition, when } from '../../../bundle/manifests/knobs.js';
import { OlmpubError } from '../../../lib/errors.js';

export const IMAGE = `registry.example.com/olmpub/inference-operator@sha256:${'d'.repeat(64)}`;
const Ajv = AjvModule.default ?? AjvModule;

const file = (c: BuiltChart, path: string): string => {
  const f = c.files.find((x) => x.path === path);
  assert.ok(f, `${path} is in the chart`);
  return String(f.content);
};

describe('helm chart: files', () => {
  const chart = buildChart({ version: '1.2.3-rc.1', appVersion: '1.2.3-rc.1', image: IMAGE, permissions: [] });

  it('has Chart.yaml v2 with version, appVersion, kubeVersion and the publishing metadata', () => {
    const meta = YAML.parse(file(chart, 'Chart.yaml'));
    assert.equal(meta.apiVersion, 'v2');
    assert.equal(meta.name, CHART_NAME);
    assert.equal(meta.version, '1.2.3-rc.1');
    assert.equal(meta.appVersion, '1.2.3-rc.1');
    assert.equal(meta.kubeVersion, KUBE_VERSION_CONSTRAINT);
    assert.equal(meta.type, 'application');
    assert.ok(meta.description && meta.home && meta.sources.length && meta.maintainers[0].name);
    assert.match(meta.icon, /^data:image\/svg\+xml;base64,/);
    assert.equal(meta.annotations['artifacthub.io/prerelease'], 'true');
    assert.match(meta.annotations['artifacthub.io/images'], new RegExp(IMAGE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.deepEqual(Object.keys(meta), [...Object.keys(meta)].sort(), 'keys sorted, as helm package re-marshals Chart.yaml');
  });

  it('has one template per model object, helpers, NOTES, plain CRDs and a README with the CRD upgrade path', () => {
    const paths = chart.files.map((f) => f.path);
    for (const p of ['values.yaml', 'values.schema.json', 'templates/_helpers.tpl', 'templates/NOTES.txt', 'README.md', 'crds/inferenceservices.inference.olmpub.dev.yaml', 'templates/deployment.yaml', 'templates/validating-webhook-configuration.yaml', 'templates/service-monitor.yaml']) {
      assert.ok(paths.includes(p), p);
    }
    assert.ok(!paths.some((p) => p.startsWith('templates/crd')), 'CRDs are not templates');
    const crd = file(chart, 'crds/inferenceservices.inference.olmpub.dev.yaml');
    assert.ok(!crd.includes('{{'), 'crds/ is never templated');
    assert.equal(YAML.parse(crd).kind, 'CustomResourceDefinition');
    for (const f of chart.files) assert.ok(!String(f.content).includes('\u27EA'), `${f.path}: no unresolved chart reference`);
    const readme = file(chart, 'README.md');
    assert.match(readme, /## CRDs and upgrades/);
    assert.match(readme, /kubectl apply --server-side --force-conflicts -f inference-operator\/crds\//);
    assert.match(readme, /\| `webhook\.enabled` \| `true` \|/);
    assert.match(file(chart, 'templates/NOTES.txt'), /Helm never upgrades CRDs/);
  });

  it('guards optional objects with conditions on values', () => {
    assert.match(file(chart, 'templates/service-monitor.yaml'), /^\{\{- if \.Values\.serviceMonitor\.enabled \}\}\n/);
    assert.match(file(chart, 'templates/certificate.yaml'), /^\{\{- if and \.Values\.webhook\.enabled \.Values\.certManager\.enabled \}\}\n/);
    assert.match(file(chart, 'templates/pod-disruption-budget.yaml'), /^\{\{- if gt \(int \.Values\.replicas\) 1 \}\}\n/);
    assert.match(file(chart, 'templates/deployment.yaml'), /replicas: \{\{ \.Values\.replicas \}\}/);
    assert.match(file(chart, 'templates/deployment.yaml'), /namespace: "\{\{ \.Release\.Namespace \}\}"/);
    assert.match(file(chart, 'templates/deployment.yaml'), /\{\{- toYaml \.Values\.resources \| nindent 12 \}\}/);
    assert.ok(!/^\{\{- if/.test(file(chart, 'templates/deployment.yaml')), 'the Deployment is unconditional');
  });

  it('ships values.yaml that parses to the defaults, documented, and a schema that accepts them and refuses mistakes', () => {
    const values = YAML.parse(file(chart, 'values.yaml'));
    assert.deepEqual(values, JSON.parse(JSON.stringify(defaultValues(IMAGE))));
    assert.equal(values.image.digest, `sha256:${'d'.repeat(64)}`);
    assert.match(file(chart, 'values.yaml'), /# -- Serve the webhooks\./);
    const schema = JSON.parse(file(chart, 'values.schema.json'));
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.ok(validate(values), JSON.stringify(validate.errors));
    const bad = (patch: unknown) => validate(mergeValues(values, patch));
    assert.equal(bad({ image: { digest: 'latest' } }), false, 'a tag is not a digest');
    assert.equal(bad({ replicas: 0 }), false);
    assert.equal(bad({ logLevel: 'verbose' }), false);
    assert.equal(bad({ webhok: { enabled: false } }), false, 'a typo is refused');
    assert.equal(bad({ watchNamespaces: ['Team_A'] }), false);
    assert.equal(bad({ webhook: { timeoutSeconds: 31 } }), false);
    assert.equal(bad({ replicas: 3, watchNamespaces: ['team-a'], nodeSelector: { a: 'b' } }), true);
  });

  it('is pure: the same options give the same files', () => {
    const again = buildChart({ version: '1.2.3-rc.1', appVersion: '1.2.3-rc.1', image: IMAGE, permissions: [] });
    assert.deepEqual(again.files, chart.files);
    assert.throws(() => buildChart({ version: 'v1.0.0', image: IMAGE }), (e: unknown) => e instanceof OlmpubError && e.code === 'chart-bad-version');
    assert.throws(() => buildChart({ version: '1.0.0', image: 'ghcr.io/a/b:latest' }), /not pinned by digest/);
  });
});

describe('helm chart: template writer', () => {
  it('writes chart references as template actions', () => {
    assert.equal(templatedString(`${templateString('.Release.Namespace')}/x "q"`), '"{{ .Release.Namespace }}/x \\"q\\""');
    assert.equal(scalar(rawValue('.Values.replicas')), '{{ .Values.replicas }}');
    assert.equal(scalar('true'), '"true"', 'strings that YAML would read as booleans are quoted');
    assert.equal(scalar('--leader-elect'), '--leader-elect');
    const cond = new ValueCondition('.Values.on');
    const text = objectTemplate(
      {
        kind: 'X',
        metadata: { labels: { [spliceKey('include', 'x.labels')]: '', extra: 'y' }, annotations: { [spliceKey('toYaml', '.Values.a')]: '' } },
        list: ['a', when(cond, 'b'), when(cond, { name: 'c', port: 1 })],
        guarded: when(cond, { k: 'v' }),
        block: blockValue('.Values.r'),
        maybe: blockValue('.Values.m', true),
        empty: {},
      },
      cond,
      'header',
    );
    assert.equal(
      text,
      [
        '{{- if .Values.on }}',
        '# header',
        'kind: X',
        'metadata:',
        '  labels:',
        '    {{- include "x.labels" . | nindent 4 }}',
        '    extra: y',
        '  annotations:',
        '    {{- with .Values.a }}{{- toYaml . | nindent 4 }}{{- end }}',
        'list:',
        '  - a',
        '  {{- if .Values.on }}',
        '  - b',
        '  {{- end }}',
        '  {{- if .Values.on }}',
        '  - name: c',
        '    port: 1',
        '  {{- end }}',
        '{{- if .Values.on }}',
        'guarded:',
        '  k: v',
        '{{- end }}',
        'block:',
        '  {{- toYaml .Values.r | nindent 2 }}',
        '{{- with .Values.m }}',
        'maybe:',
        '  {{- toYaml . | nindent 2 }}',
        '{{- end }}',
        'empty: {}',
        '{{- end }}',
        '',
      ].join('\n'),
    );
  });
});

describe('helm chart: values', () => {
  it('merges like Helm (maps deep, lists replaced, null deletes) and reads --set', () => {
    const merged = mergeValues({ a: { b: 1, c: [1, 2] }, d: 'x' }, { a: { c: [3] }, d: null });
    assert.deepEqual(merged, { a: { b: 1, c: [3] } });
    assert.deepEqual(parseSet('webhook.enabled=false'), { webhook: { enabled: false } });
    assert.deepEqual(parseSet('replicas=3'), { replicas: 3 });
    assert.deepEqual(parseSet('watchNamespaces={a,b}'), { watchNamespaces: ['a', 'b'] });
    assert.deepEqual(parseSet('nodeSelector.kubernetes\\.io/os=linux'), { nodeSelector: { 'kubernetes.io/os': 'linux' } });
    assert.throws(() => parseSet('novalue'), /KEY=VALUE/);
  });

  it('renders the model for the values a release would get', () => {
    const { manifests } = renderChart({ image: IMAGE, version: '1.0.0', values: { webhook: { enabled: false }, replicas: 1 }, release: { name: 'r1', namespace: 'apps' } });
    const kinds = manifests.objects.map((o) => o.kind);
    assert.ok(!kinds.includes('ValidatingWebhookConfiguration') && !kinds.includes('PodDisruptionBudget') && !kinds.includes('Certificate'));
    assert.equal(manifests.deployment.metadata.namespace, 'apps');
    assert.equal(manifests.deployment.metadata.labels!['app.kubernetes.io/instance'], 'r1');
    assert.equal(manifests.deployment.metadata.labels!['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(manifests.deployment.metadata.labels!['helm.sh/chart'], 'inference-operator-1.0.0');
    const crd = manifests.crds[0]!;
    assert.equal((crd.spec.conversion as { webhook: { clientConfig: { service: { namespace: string } } } }).webhook.clientConfig.service.namespace, 'inference-operator-system', 'crds/ is rendered for the default namespace whatever the release');
    assert.equal(crd.metadata.labels!['app.kubernetes.io/instance'], 'inference-operator');
  });
});

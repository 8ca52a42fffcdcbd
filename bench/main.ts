/**
 * olmpub against the reference tools, measured in the same run: wall time (median of N runs) and peak RSS
 * of each process, and the ratio olmpub/peer (above 1: olmpub is slower or bigger). Run it through
 * `npm run bench` (scripts/bench.sh builds, ensures the tools and a registry, then calls this).
 *
 *   node dist/bench/main.js [--runs N] [--quick] [--packages P] [--bundles B] [--layers L] [--layer-mib M]
 *                           [--registry HOST:PORT | --no-registry] [--only validate,graph,chart,push] [--keep]
 *
 * Each run executes the commands of a benchmark in rotating order (one tool first, then the next, ...)
 * so slow drift of a shared machine's load hits every tool alike. The cheap benchmarks start with one
 * unmeasured warm-up run per command (not with --quick); the large-catalog ones run right after the
 * catalog is written, so it is in the page cache. Generated data lives in a temp directory, removed at the
 * end (--keep keeps it). Nothing here asserts a timing: the numbers are printed for people.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { generateCatalog, type CatalogStats } from './catalog-gen.js';
import { generateImageLayout, type ImageStats } from './oci-gen.js';
import { measure, median, type Cmd, type Sample } from './measure.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OLMPUB = join(ROOT, 'bin', 'olmpub.js');
const SMALL_CATALOG = join(ROOT, 'test/fixtures/catalogs/valid/two-channels-json/catalog');
const CHART_IMAGE = `registry.example.com/olmpub-bench/inference-operator@sha256:${'a'.repeat(64)}`;
/** helm built from the module proxy reports Kubernetes v1.20 by default; the chart needs >= 1.30. */
const KUBE_VERSION = '1.36.0';
const AREAS = ['validate', 'graph', 'chart', 'push'] as const;
type Area = (typeof AREAS)[number];

interface Options {
  runs: number;
  packages: number;
  bundles: number;
  layers: number;
  layerMiB: number;
  registry: string | undefined;
  only: Set<Area>;
  keep: boolean;
  quick: boolean;
}

const USAGE = `usage: scripts/bench.sh [--runs N] [--quick] [--packages P] [--bundles B] [--layers L] [--layer-mib M] [--registry HOST:PORT | --no-registry] [--only ${AREAS.join(',')}] [--keep]
  --runs N         measured runs per command (default 5; 1 with --quick); the median is printed
  --quick          1 run, no warm-up, a catalog of 20 packages × 15 bundles
  --packages P     packages in the generated catalog (default 60; 200 is a large public catalog)
  --bundles B      bundles per package, each in 3 channels (default 30)
  --layers L       layers of the pushed image (default 3)
  --layer-mib M    size of each layer in MiB (default 20)
  --registry H:P   plain-HTTP registry to push to (default: scripts/testenv env REGISTRY)
  --no-registry    skip the push benchmarks
  --only LIST      some of: ${AREAS.join(', ')}
  --keep           keep the generated data (printed at the end)
`;

function usage(message: string): never {
  process.stderr.write(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      quick: { type: 'boolean', default: false },
      packages: { type: 'string' },
      bundles: { type: 'string' },
      layers: { type: 'string' },
      'layer-mib': { type: 'string' },
      registry: { type: 'string' },
      'no-registry': { type: 'boolean', default: false },
      only: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const int = (name: string, v: string | undefined, dflt: number, min: number): number => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) usage(`--${name} must be an integer >= ${min}, got "${v}"`);
    return n;
  };
  const quick = values.quick!;
  const only = new Set<Area>();
  for (const a of (values.only ?? AREAS.join(',')).split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(AREAS as readonly string[]).includes(a)) usage(`--only takes ${AREAS.join(', ')}; got "${a}"`);
    only.add(a as Area);
  }
  if (values['no-registry']) only.delete('push');
  let registry = values.registry;
  if (only.has('push') && registry === undefined) {
    try {
      registry = execFileSync(join(ROOT, 'scripts/testenv'), ['env', 'REGISTRY'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch {
      usage('no registry: pass --registry HOST:PORT, start the test environment (scripts/testenv up), or pass --no-registry');
    }
  }
  return {
    runs: int('runs', values.runs, quick ? 1 : 5, 1),
    packages: int('packages', values.packages, quick ? 20 : 60, 1),
    bundles: int('bundles', values.bundles, quick ? 15 : 30, 3),
    layers: int('layers', values.layers, 3, 1),
    layerMiB: int('layer-mib', values['layer-mib'], 20, 1),
    registry,
    only,
    keep: values.keep!,
    quick,
  };
}

function toolDir(tool: string): string {
  return execFileSync(join(ROOT, 'scripts/tools.sh'), ['path', tool], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/**
 * One benchmark: olmpub (one or more variants, named "olmpub…") and its peers. `cmd(tool, run)` gives the
 * command of a run (-1 = the warm-up run); `label` names each tool's command in the table.
 */
interface Bench {
  title: string;
  tools: string[];
  label: Record<string, string>;
  /** One unmeasured run of each command first (never with --quick). */
  warmup: boolean;
  cmd: (tool: string, run: number) => Cmd;
  /** Unmeasured work before the first run (e.g. seeding a registry). */
  before?: () => Promise<void>;
  /** Unmeasured checks after each command (e.g. the pushed digest). */
  check?: (tool: string, run: number) => Promise<void>;
}

interface Result {
  bench: Bench;
  samples: Map<string, Sample[]>;
}

const isOurs = (tool: string) => tool.startsWith('olmpub');

async function runBench(b: Bench, opts: Options, tmp: string): Promise<Result> {
  process.stderr.write(`bench: ${b.title} `);
  await b.before?.();
  const samples = new Map<string, Sample[]>(b.tools.map((t) => [t, []]));
  for (let run = b.warmup && !opts.quick ? -1 : 0; run < opts.runs; run++) {
    // Rotate who goes first, so drifting load on a shared machine hits every tool alike.
    const k = (run + 1) % b.tools.length;
    const order = [...b.tools.slice(k), ...b.tools.slice(0, k)];
    for (const tool of order) {
      const s = await measure(b.cmd(tool, run), tmp);
      if (run >= 0) samples.get(tool)!.push(s);
      await b.check?.(tool, run);
    }
    process.stderr.write(run < 0 ? 'w' : '.');
  }
  process.stderr.write('\n');
  return { bench: b, samples };
}

const seconds = (ms: number) => (ms < 1000 ? `${(ms / 1000).toFixed(3)} s` : `${(ms / 1000).toFixed(2)} s`);
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

function table(results: Result[]): string {
  const rows: string[][] = [['benchmark', 'olmpub', 'peer', 'olmpub wall', 'peer wall', 'wall ratio', 'olmpub RSS', 'peer RSS', 'RSS ratio']];
  for (const { bench, samples } of results) {
    for (const [ours, os] of samples) {
      if (!isOurs(ours)) continue;
      const ow = median(os.map((s) => s.wallMs));
      const or = median(os.map((s) => s.rssKiB));
      for (const [peer, ps] of samples) {
        if (isOurs(peer)) continue;
        const pw = median(ps.map((x) => x.wallMs));
        const pr = median(ps.map((x) => x.rssKiB));
        rows.push([bench.title, bench.label[ours] ?? ours, bench.label[peer] ?? peer, seconds(ow), seconds(pw), ratio(ow, pw), mib(or), mib(pr), ratio(or, pr)]);
      }
    }
  }
  const text = 3;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i < text ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i < text ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(rows[0]!), sep, ...rows.slice(1).map(line)].join('\n');
}

/** Every run's wall time (how noisy the medians are) and the median CPU time (how much ran in parallel). */
function spread(results: Result[]): string[] {
  return results.map(({ bench, samples }) =>
    `${bench.title}: ${[...samples].map(([tool, s]) => `${tool} ${s.map((x) => (x.wallMs / 1000).toFixed(2)).join(' ')} (CPU ${(median(s.map((x) => x.cpuMs)) / 1000).toFixed(2)})`).join('; ')}`);
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const tmp = await mkdtemp(join(tmpdir(), 'olmpub-bench-'));
  const notes: string[] = [];
  const skipped: string[] = [];
  const results: Result[] = [];
  const load0 = loadavg();
  const started = Date.now();
  try {
    const bin = {
      opm: join(toolDir('opm'), 'opm'),
      helm: join(toolDir('helm'), 'helm'),
      crane: join(toolDir('crane'), 'crane'),
      oras: join(toolDir('oras'), 'oras'),
    };
    const env = { ...process.env, NO_COLOR: '1' };
    const node = process.execPath;
    const olmpub = (tool: string, ...args: string[]): Cmd => ({ tool, argv: [node, OLMPUB, ...args], env });
    const peer = (tool: string, ...argv: string[]): Cmd => ({ tool, argv, env });
    const benches: Bench[] = [];

    benches.push({
      title: 'startup (load and exit)',
      tools: ['olmpub', 'opm'],
      label: { olmpub: '--version', opm: 'opm version' },
      warmup: true,
      cmd: (tool) => (tool === 'olmpub' ? olmpub(tool, '--version') : peer(tool, bin.opm, 'version')),
    });

    let catalog: CatalogStats | undefined;
    const largeDir = join(tmp, 'catalog-large');
    if (opts.only.has('validate') || opts.only.has('graph')) {
      process.stderr.write(`bench: generating a catalog of ${opts.packages} packages × 3 channels × ${opts.bundles} bundles in ${largeDir}\n`);
      catalog = await generateCatalog(largeDir, { packages: opts.packages, bundlesPerPackage: opts.bundles });
    }
    const large = catalog ? `large (${catalog.bundles} bundles)` : '';

    if (opts.only.has('validate')) {
      benches.push({
        title: 'FBC validate, small (3 bundles)',
        tools: ['olmpub', 'opm'],
        label: { olmpub: 'catalog validate', opm: 'opm validate' },
        warmup: true,
        cmd: (tool) => (tool === 'olmpub' ? olmpub(tool, 'catalog', 'validate', SMALL_CATALOG) : peer(tool, bin.opm, 'validate', SMALL_CATALOG)),
      });
      benches.push({
        title: `FBC validate, ${large}`,
        tools: ['olmpub', 'olmpub-opm-rules', 'opm'],
        label: { olmpub: 'catalog validate', 'olmpub-opm-rules': 'catalog validate --opm-rules', opm: 'opm validate' },
        warmup: false,
        cmd: (tool) => {
          if (tool === 'opm') return peer(tool, bin.opm, 'validate', largeDir);
          return tool === 'olmpub' ? olmpub(tool, 'catalog', 'validate', largeDir) : olmpub(tool, 'catalog', 'validate', '--opm-rules', largeDir);
        },
      });
    }
    if (opts.only.has('graph')) {
      const outs: Record<string, string> = { olmpub: join(tmp, 'graph-olmpub.mmd'), opm: join(tmp, 'graph-opm.mmd') };
      const graphsDone = new Set<string>();
      benches.push({
        title: `upgrade graph (Mermaid), ${large}`,
        tools: ['olmpub', 'opm'],
        label: { olmpub: 'catalog graph', opm: 'opm alpha render-graph' },
        warmup: false,
        cmd: (tool, run) => {
          const c = tool === 'olmpub' ? olmpub(tool, 'catalog', 'graph', largeDir) : peer(tool, bin.opm, 'alpha', 'render-graph', largeDir);
          // The first run keeps stdout in a file (sh execs the tool, so time still measures the tool) to compare the two graphs.
          if (run === 0) c.argv = ['sh', '-c', 'out=$1; shift; exec "$@" >"$out"', 'sh', outs[tool]!, ...c.argv];
          return c;
        },
        check: async (tool, run) => {
          if (run !== 0) return;
          graphsDone.add(tool);
          if (graphsDone.size !== 2) return;
          const [a, b] = await Promise.all([readFile(outs.olmpub!, 'utf8'), readFile(outs.opm!, 'utf8')]);
          const sorted = (t: string) => t.split('\n').sort().join('\n');
          const verdict = a === b ? 'identical bytes' : sorted(a) === sorted(b) ? 'the same lines (opm orders packages by Go map iteration, which differs between its own runs)' : `DIFFERENT graphs (${a.length} vs ${b.length} bytes): the comparison is not like for like`;
          notes.push(`upgrade graph: olmpub's and opm's Mermaid (${(b.length / 1048576).toFixed(1)} MiB): ${verdict}.`);
        },
      });
    }

    if (opts.only.has('chart')) {
      const buildDir = join(tmp, 'bundle-build');
      const helmHome = join(tmp, 'helm-home');
      const helmEnv = { ...env, HELM_CACHE_HOME: helmHome, HELM_CONFIG_HOME: helmHome, HELM_DATA_HOME: helmHome };
      const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      const tgz = join(buildDir, 'chart', `inference-operator-${version}.tgz`);
      const helmArgs = ['template', 'inference-operator', tgz, '--namespace', 'inference-operator-system', '--include-crds', '--kube-version', KUBE_VERSION];
      benches.push({
        title: 'Helm chart rendering, default values',
        tools: ['olmpub', 'helm'],
        label: { olmpub: 'chart render', helm: 'helm template --include-crds' },
        warmup: true,
        before: async () => {
          // helm renders the chart olmpub packages; building it is not measured.
          execFileSync(node, [OLMPUB, 'bundle', 'build', '--out', buildDir, '--image', CHART_IMAGE], { stdio: ['ignore', 'ignore', 'inherit'], env });
          const ours = execFileSync(node, [OLMPUB, 'chart', 'render', '--image', CHART_IMAGE], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
          const theirs = execFileSync(bin.helm, helmArgs, { encoding: 'utf8', env: helmEnv, maxBuffer: 64 << 20 });
          type Obj = { kind?: string; metadata?: { name?: string; namespace?: string } };
          const keys = (t: string) => YAML.parseAllDocuments(t).map((d) => d.toJS() as Obj | null).filter((o): o is Obj => !!o && typeof o === 'object').map((o) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort();
          const [k1, k2] = [keys(ours), keys(theirs)];
          const same = JSON.stringify(k1) === JSON.stringify(k2);
          notes.push(`chart rendering: olmpub prints ${k1.length} objects, helm ${k2.length}: ${same ? 'the same objects' : 'DIFFERENT objects, the comparison is not like for like'} (test/integration/chart/helm.test.ts asserts equality field by field).`);
        },
        cmd: (tool) => (tool === 'olmpub' ? olmpub(tool, 'chart', 'render', '--image', CHART_IMAGE) : { tool, argv: [bin.helm, ...helmArgs], env: helmEnv }),
      });
    }

    let image: ImageStats | undefined;
    if (opts.only.has('push')) {
      const registry = opts.registry!;
      const layout = join(tmp, 'image-layout');
      process.stderr.write(`bench: generating an OCI layout with ${opts.layers} layers of ${opts.layerMiB} MiB in ${layout}\n`);
      image = await generateImageLayout(layout, 'v1', opts.layers, opts.layerMiB * 1048576);
      const img = image;
      const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
      const pushCmd = (tool: string, ref: string): Cmd => {
        if (tool === 'olmpub') return olmpub(tool, 'image', 'copy', `oci:${layout}:v1`, ref, '--plain-http');
        if (tool === 'crane') return peer(tool, bin.crane, 'push', layout, ref, '--insecure');
        return peer(tool, bin.oras, 'cp', '--from-oci-layout', `${layout}:v1`, ref, '--to-plain-http', '--no-tty');
      };
      const repo = (tool: string, suffix: string) => `${registry}/olmpub-bench/${runId}/${tool}-${suffix}:v1`;
      const fresh = (tool: string, run: number) => repo(tool, run < 0 ? 'warmup' : String(run));
      const present = (tool: string) => repo(tool, 'present');
      const tools = ['olmpub', 'crane', 'oras'];
      const label = { olmpub: 'image copy oci:… --plain-http', crane: 'crane push LAYOUT', oras: 'oras cp --from-oci-layout' };
      const verified = new Set<string>();
      const checkDigest = async (tool: string, ref: string) => {
        if (verified.has(tool)) return;
        verified.add(tool);
        const path = ref.slice(registry.length + 1);
        const [name, tag] = [path.slice(0, path.lastIndexOf(':')), path.slice(path.lastIndexOf(':') + 1)];
        const res = await fetch(`http://${registry}/v2/${name}/manifests/${tag}`, { method: 'HEAD', headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' } });
        const digest = res.headers.get('docker-content-digest');
        if (digest !== img.manifestDigest) throw new Error(`${tool} pushed ${ref} as ${digest ?? `HTTP ${res.status}`}, not as the layout's ${img.manifestDigest}: the push comparison would not be like for like`);
      };
      benches.push({
        title: `image push, ${opts.layers} × ${opts.layerMiB} MiB layers, new repository`,
        tools,
        label,
        warmup: true,
        cmd: (tool, run) => pushCmd(tool, fresh(tool, run)),
        check: (tool, run) => checkDigest(tool, fresh(tool, run)),
      });
      benches.push({
        title: 'image push again, every blob present',
        tools,
        label,
        warmup: true,
        before: async () => {
          for (const tool of tools) await measure(pushCmd(tool, present(tool)), tmp);
        },
        cmd: (tool) => pushCmd(tool, present(tool)),
      });
      notes.push(`image push: each tool's pushed manifest digest equals the layout's (${image.manifestDigest.slice(0, 19)}…), checked after its first push; registry ${registry}, repositories olmpub-bench/${runId}/*; concurrency: olmpub 3, oras 3, crane 4 (their defaults).`);
    } else skipped.push('image push: no registry (--no-registry, or --only without push).');
    skipped.push(
      'helm package: skipped. olmpub packages its chart only inside `olmpub bundle build`, which also renders and checks the registry+v1 bundle, builds two OCI images and writes a layout; no olmpub command only packages a chart, so nothing pairs fairly with `helm package`.',
      'catalog rendering: skipped. `olmpub catalog render` reads olmpub\'s own template (olmpub.catalog.v1), not opm\'s basic or semver templates (opm\'s semver template also pulls every bundle image), and no olmpub command loads an FBC directory and writes it back as `opm render DIR -o json` does. Helm chart rendering is the rendering pair measured instead.',
    );

    for (const b of benches) results.push(await runBench(b, opts, tmp));

    const load1 = loadavg();
    const versions = execFileSync(join(ROOT, 'scripts/tools.sh'), ['list'], { encoding: 'utf8' }).split('\n').filter((l) => /^(opm|helm|crane|oras)\s/.test(l)).map((l) => l.replace(/\s+/, ' ')).join(', ');
    const out: string[] = [];
    out.push('');
    out.push(`olmpub benchmarks, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: median of ${opts.runs} run(s)${opts.quick ? '' : ' (after one warm-up run where marked w)'}; ratio = olmpub / peer (above 1: olmpub is slower or uses more memory)`);
    out.push(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${load0[0]!.toFixed(1)} at start, ${load1[0]!.toFixed(1)} at end; node ${process.version}; ${versions} (built from the Go module proxy by scripts/tools.sh)`);
    if (catalog) out.push(`large FBC: ${catalog.packages} packages × 3 channels × ${catalog.bundlesPerPackage} bundles = ${catalog.bundles} bundles, ${catalog.channelEntries} channel entries, ${(catalog.bytes / 1048576).toFixed(1)} MiB of JSON (bench/catalog-gen.ts); small FBC: test/fixtures/catalogs/valid/two-channels-json`);
    if (image) out.push(`image: ${image.layers} layers × ${opts.layerMiB} MiB of incompressible data, gzipped: ${(image.totalBytes / 1048576).toFixed(1)} MiB in all (bench/oci-gen.ts)`);
    out.push('');
    out.push(results.length ? table(results) : '(nothing measured)');
    out.push('');
    for (const n of notes) out.push(`- ${n}`);
    for (const s of skipped) out.push(`- ${s}`);
    out.push('- wall time of every run in seconds, and in parentheses the median CPU time (user + system) of the process:');
    for (const line of spread(results)) out.push(`  - ${line}`);
    out.push(`- total ${((Date.now() - started) / 1000).toFixed(0)} s; generated data ${opts.keep ? `kept in ${tmp}` : 'in a temp directory, removed (--keep keeps it)'}`);
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    if (!opts.keep) await rm(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`\nbench: ${(err as Error).message}\n`);
  process.exitCode = 1;
});

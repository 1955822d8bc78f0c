/**
 * The import graph of the two processes keeps pointing one way: no circle of files (type-only
 * imports count: a circle of types is still two files that cannot be read apart), and no
 * import from a part to one it may not use. The rule is the data below, one line per part,
 * bottom to top; docs/architecture.md draws the same layers. To see why a check fails, the
 * message names the files; `npx tsc --noEmit` and this file are the tools, nothing else.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { NAMESPACE_NAMES } from '../../gateway/core/namespace-names.ts';

const root = join(import.meta.dirname, '../..');
const ROOTS = ['gateway', 'broker-worker', 'shared'];
const SOURCE = /\.(ts|mts|mjs|js)$/;

interface Layer {
  name: string;
  /** Folders (ending in /) or single files, from the repository root; the longest match places a file. */
  paths: string[];
  /** Layers this one may import; a layer may always import itself. */
  may: string[];
  why: string;
}

const namespaceLayers = NAMESPACE_NAMES.map((name) => `namespace ${name}`);

/** Bottom to top. Each line: which part, what it may use, and why the line exists. */
const LAYERS: Layer[] = [
  {
    name: 'shared',
    paths: ['shared/'],
    may: [],
    why: 'both processes import it; it imports neither, so the IPC protocol and event schemas cannot lean to one side',
  },
  {
    name: 'broker-worker',
    paths: ['broker-worker/'],
    may: ['shared'],
    why: 'a separate process: it meets the gateway only over IPC, through shared/',
  },
  {
    name: 'core',
    paths: ['gateway/core/'],
    may: [],
    why: 'the words every part uses about a key (namespace names, key identity, scopes, limits); importing none of its users, any of them can read it',
  },
  {
    name: 'http',
    paths: ['gateway/http/', 'gateway/logger.ts', 'gateway/origin-policy.ts'],
    may: [],
    why: 'the HTTP engines and the log: what every request passes through, knowing nothing of MCP or keys',
  },
  {
    name: 'store',
    paths: ['gateway/store/'],
    may: ['shared'],
    why: 'SQLite and Postgres plumbing; the schemas on top of it belong to their users',
  },
  {
    name: 'broker-client',
    paths: ['gateway/broker-client/'],
    may: ['shared'],
    why: 'the gateway end of the IPC link; it speaks the shared protocol and nothing of the gateway',
  },
  {
    name: 'mcp',
    paths: ['gateway/mcp/'],
    may: ['core', 'http'],
    why: 'the MCP wire and the tool contract namespaces write against: it reads key scopes and limits from core, never from the store or the limiter',
  },
  {
    name: 'upstream',
    paths: ['gateway/upstream/'],
    may: ['mcp'],
    why: 'the HTTP client and error codes the third-party namespaces share; tool errors are the only MCP it knows',
  },
  {
    name: 'limits',
    paths: ['gateway/limits/'],
    may: ['core', 'http', 'mcp', 'shared'],
    why: 'rate limits and quotas wrap MCP calls; the quota counter is a port the store fills, so limits never import accounts',
  },
  {
    name: 'ops',
    paths: ['gateway/ops/'],
    may: ['limits', 'shared'],
    why: 'metrics, audit and tracing observe the request path; they count limit events but change nothing',
  },
  {
    name: 'config',
    paths: ['gateway/config.ts'],
    may: ['core', 'http', 'ops'],
    why: 'settings are parsed with the parsers of the parts they configure, and read by everything above',
  },
  {
    name: 'deferred namespaces',
    paths: ['gateway/namespaces/deferred.ts'],
    may: ['mcp'],
    why: "the contract's deferred form (tools listed at start, loaded on first call); it knows only the contract",
  },
  ...NAMESPACE_NAMES.map((name) => ({
    name: `namespace ${name}`,
    paths: [`gateway/namespaces/${name}/`],
    may: ['core', 'mcp', 'upstream', 'store', 'config', 'http', 'shared', 'deferred namespaces'],
    why: 'a namespace sees only the tool contract and its own tools: never the console, accounts, keys, limits, the registry or another namespace',
  })),
  {
    name: 'registry',
    paths: ['gateway/namespaces/registry.ts'],
    may: ['core', 'mcp', 'config', ...namespaceLayers],
    why: 'the one file that knows every namespace, so none of them has to know another',
  },
  {
    name: 'cli',
    paths: ['gateway/cli/'],
    may: ['config'],
    why: 'the command-line plumbing npm run keys and users share; it knows no store',
  },
  {
    name: 'accounts',
    paths: ['gateway/accounts/'],
    may: ['core', 'store', 'cli', 'config', 'shared'],
    why: 'accounts, keys and sessions at rest, and the users CLI; below the request path, which reads it through auth',
  },
  {
    name: 'auth',
    paths: ['gateway/auth/'],
    may: ['core', 'accounts'],
    why: 'the key check: it hashes with core and asks the store, and knows nothing of what the request does next',
  },
  {
    name: 'keys',
    paths: ['gateway/keys/'],
    may: ['core', 'accounts', 'cli', 'config', 'limits'],
    why: 'npm run keys: an operator tool over the store; it names namespaces from core, so it loads no namespace',
  },
  {
    name: 'console',
    paths: ['gateway/console/'],
    may: ['core', 'accounts', 'keys', 'http', 'shared'],
    why: 'the key console: accounts and keys for people; nothing on the MCP path imports it',
  },
  {
    name: 'backup',
    paths: ['gateway/backup/'],
    may: ['config', 'store'],
    why: 'npm run backup copies the stores as files and reads nothing of what is in them',
  },
  {
    name: 'entry',
    paths: [
      'gateway/app.ts',
      'gateway/server.ts',
      'gateway/instance.ts',
      'gateway/listener-threads.ts',
      'gateway/listener-thread.ts',
      'gateway/listener-thread-entry.mjs',
      'gateway/main.ts',
      'gateway/memory-command.ts',
    ],
    may: ['*'],
    why: 'the process and its listener threads: the one place that wires every part together, and that no part imports',
  },
];

interface Graph {
  files: string[];
  edges: Map<string, Set<string>>;
  unresolved: string[];
}

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Every relative import, `import type` and `export … from` and a literal `import()` included. */
function readGraph(): Graph {
  const files = ROOTS.flatMap((dir) => sourceFiles(dir)).sort();
  const known = new Set(files);
  const edges = new Map<string, Set<string>>();
  const unresolved: string[] = [];
  for (const file of files) {
    const targets = new Set<string>();
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = posix.normalize(posix.join(dirname(file), fileName));
      const target = [base, `${base}.ts`, `${base}/index.ts`].find((path) => known.has(path));
      if (target) targets.add(target);
      else if (!existsSync(join(root, base))) unresolved.push(`${file} -> ${fileName}`);
    }
    edges.set(file, targets);
  }
  return { files, edges, unresolved };
}

/** Tarjan's strongly connected components: every group of two or more files is a circle. */
function circles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.edges.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || graph.edges.get(file)?.has(file)) found.push(group.sort());
  };
  for (const file of graph.files) if (!index.has(file)) visit(file);
  return found;
}

function layerOf(file: string): Layer | undefined {
  let best: Layer | undefined;
  let length = -1;
  for (const layer of LAYERS) {
    for (const path of layer.paths) {
      const matches = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (matches && path.length > length) {
        best = layer;
        length = path.length;
      }
    }
  }
  return best;
}

const graph = readGraph();

test('the import graph was read whole: every relative import names a file', () => {
  assert.ok(
    graph.files.length > 100,
    `only ${graph.files.length} source files found under ${ROOTS.join(', ')}`,
  );
  assert.deepEqual(graph.unresolved, [], 'imports that name no file (the graph would miss them)');
});

test('no files import each other in a circle, type-only imports included', () => {
  const found = circles(graph);
  const described = found.map((group) => {
    const ties = group.flatMap((file) =>
      [...(graph.edges.get(file) ?? [])]
        .filter((target) => group.includes(target))
        .map((t) => `${file} -> ${t}`),
    );
    return `circle of ${group.length} files:\n    ${ties.join('\n    ')}`;
  });
  assert.equal(
    found.length,
    0,
    `move what the files share into a file below them both:\n  ${described.join('\n  ')}`,
  );
});

test('every source file belongs to a declared layer, and every layer names layers that exist', () => {
  const names = new Set(LAYERS.map((layer) => layer.name));
  for (const layer of LAYERS) {
    for (const used of layer.may)
      assert.ok(used === '*' || names.has(used), `${layer.name} may use ${used}: no such layer`);
  }
  const homeless = graph.files.filter((file) => !layerOf(file));
  assert.deepEqual(
    homeless,
    [],
    'files no layer in test/architecture/imports.test.ts places: add them to one',
  );
});

test('each part imports only the parts its layer may use', () => {
  const broken: string[] = [];
  for (const [file, targets] of graph.edges) {
    const from = layerOf(file);
    if (!from || from.may.includes('*')) continue;
    for (const target of targets) {
      const to = layerOf(target);
      if (!to || to === from || from.may.includes(to.name)) continue;
      broken.push(`${file} -> ${target} (${from.name} may not use ${to.name}: ${from.why})`);
    }
  }
  assert.deepEqual(broken, [], 'imports against the layer rule');
});

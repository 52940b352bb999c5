// ESLint rule: strait's layering, checked on every import.
//   base <- wire <- dataplane <- control <- cli <- daemon/agents
// A file may import only from its own layer or a lower one. A TypeScript file that
// matches no layer is an error. Within src/, another component's folder is entered
// only through its index.ts (the component's one door).
import { dirname, relative, resolve, sep } from 'node:path';

export const LAYERS = [
  { name: 'base', rank: 0, match: /^src\/base\// },
  { name: 'wire', rank: 1, match: /^src\/wire\// },
  { name: 'dataplane', rank: 2, match: /^src\/dataplane\// },
  { name: 'control', rank: 3, match: /^src\/control\// },
  { name: 'cli', rank: 4, match: /^src\/cli\// },
  { name: 'daemon', rank: 5, match: /^daemon\// },
  { name: 'agents', rank: 5, match: /^agents\// },
  // tests and benchmarks may reach every layer; nothing may import them
  { name: 'test', rank: 9, match: /^(test|bench)\// },
];

// npm packages each layer may use (node: built-ins are allowed everywhere but wire).
const PACKAGES = {
  base: ['ajv', 'pino', 'yaml'],
  wire: [],
  dataplane: [],
  control: ['*'],
  cli: ['*'],
  daemon: ['*'],
  agents: ['*'],
  test: ['*'],
};
// wire is codecs only: no I/O modules.
const WIRE_FORBIDDEN_BUILTINS = /^node:(fs|net|dgram|child_process|http|https|tls|dns|worker_threads|cluster)/;

export function layerOf(rel) {
  const posix = rel.split(sep).join('/');
  return LAYERS.find((l) => l.match.test(posix));
}

function componentOf(rel) {
  const m = /^src\/([^/]+)\/([^/]+)\//.exec(rel);
  return m ? `src/${m[1]}/${m[2]}` : undefined;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'enforce strait layering: base <- wire <- dataplane <- control <- cli <- daemon/agents' },
    schema: [],
  },
  create(context) {
    const root = context.cwd;
    const file = relative(root, context.filename).split(sep).join('/');
    if (!file.endsWith('.ts')) return {};
    const layer = layerOf(file);
    function check(node, spec) {
      if (typeof spec !== 'string') return;
      if (!layer) return;
      if (spec.startsWith('.')) {
        const target = relative(root, resolve(dirname(context.filename), spec)).split(sep).join('/');
        const tl = layerOf(target.replace(/\.js$/, '.ts'));
        if (!tl) {
          context.report({ node, message: `import of '${spec}' leaves every strait layer` });
          return;
        }
        if (tl.name === 'test' && layer.name !== 'test') {
          context.report({ node, message: `${layer.name} must not import test or bench code ('${spec}')` });
          return;
        }
        if (tl.rank > layer.rank) {
          context.report({ node, message: `layer '${layer.name}' must not import from higher layer '${tl.name}' ('${spec}'); order is base <- wire <- dataplane <- control <- cli <- daemon/agents` });
          return;
        }
        const from = componentOf(file);
        const to = componentOf(target);
        if (to && from !== to && !/\/index\.js$/.test(target) && !/\/index$/.test(target)) {
          context.report({ node, message: `enter component '${to}' through its index.ts, not '${spec}'` });
        }
        return;
      }
      if (spec.startsWith('node:')) {
        if (layer.name === 'wire' && WIRE_FORBIDDEN_BUILTINS.test(spec)) {
          context.report({ node, message: `layer 'wire' is codecs only and must not import '${spec}'` });
        }
        return;
      }
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      const allowed = PACKAGES[layer.name];
      if (!allowed.includes('*') && !allowed.includes(pkg)) {
        context.report({ node, message: `layer '${layer.name}' must not use package '${pkg}' (allowed: ${allowed.join(', ') || 'node built-ins only'})` });
      }
    }
    return {
      Program(node) {
        if (!layer) {
          context.report({ node, message: `'${file}' is in no strait layer (src/{base,wire,dataplane,control,cli}/, daemon/, agents/, test/, bench/)` });
        }
      },
      ImportDeclaration(node) { check(node.source, node.source.value); },
      ExportNamedDeclaration(node) { if (node.source) check(node.source, node.source.value); },
      ExportAllDeclaration(node) { check(node.source, node.source.value); },
      ImportExpression(node) { if (node.source.type === 'Literal') check(node.source, node.source.value); },
    };
  },
};

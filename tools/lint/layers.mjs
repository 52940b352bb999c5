// ESLint rule: strait's layout, checked on every import. Two dimensions:
//
//   areas     base <- platform <- products <- world, console, control-module <- cli <- daemon/agents
//             products: multicluster, mesh, gitops, githost. A product imports only
//             platform/ and base/ (and itself); only world/, console/, cli/, daemon/ and
//             agents/ may import products. console/ is the web console's server side, at
//             the world's rank (it shows every product); console/web/ is its browser
//             bundle: it imports only itself and its front-end packages, and nothing
//             outside it imports it. control-module/ assembles the control module
//             process (GitOps, and in Kubernetes mode the mesh and the multicluster control).
//   entries   daemon/ and agents/ hold process entries only: argv, a config file, signals
//             and the call to one product's run. They import no src/cli (the strait CLI is
//             no library), and no TypeScript file there is over MAX_ENTRY_LINES lines.
//   layers    inside a product: wire <- dataplane <- control <- cli (githost's server/
//             is its control layer).
//
// wire/ and base/ do no I/O (no value import of an I/O built-in); dataplane/ uses Node
// built-ins only and, of platform/, only native/ and netns/ (a data-plane process never
// loads openpgp or @kubernetes/client-node). A TypeScript file that is in no area is an
// error. Inside src/, another component's folder is entered only through its index.ts
// (the component's one door).
import { dirname, relative, resolve, sep } from 'node:path';

export const PRODUCTS = ['multicluster', 'mesh', 'gitops', 'githost'];
export const PRODUCT_LAYERS = { wire: 1, dataplane: 2, control: 3, server: 3, cli: 4 };
// area ranks: an area imports its own or lower ranks (products never each other)
const AREA_RANK = { base: 0, platform: 1, product: 2, world: 3, console: 3, 'control-module': 3, web: 3, cli: 4, entry: 5, test: 9 };
/** the most lines a TypeScript file in daemon/ or agents/ may have */
export const MAX_ENTRY_LINES = 60;
// npm packages by area or product layer (node: built-ins are allowed everywhere, I/O ones not in wire/base)
const PACKAGES = {
  base: ['ajv', 'pino', 'yaml'],
  // protobuf descriptors and codecs (Argo CD's gRPC messages are a wire format)
  wire: ['@bufbuild/protobuf'],
  dataplane: [],
  // the browser bundle (bundled by scripts/build-console.mjs; no CDN at run time)
  web: ['preact', 'cytoscape'],
};
// what dataplane may take from platform/
const DATAPLANE_PLATFORM = ['native', 'netns'];
const IO_BUILTINS = /^node:(fs|fs\/promises|net|dgram|child_process|http|https|http2|tls|dns|worker_threads|cluster)$/;

const posix = (p) => p.split(sep).join('/');

/** The area of a repository-relative path: { area, product?, layer?, rank } or undefined. */
export function areaOf(rel) {
  const p = posix(rel);
  if (/^(test|bench)\//.test(p)) return { area: 'test', name: 'test' };
  if (/^(daemon|agents)\//.test(p)) return { area: 'entry', name: p.split('/')[0] };
  if (/^src\/console\/web\//.test(p)) return { area: 'web', name: 'console/web' };
  let m = /^src\/(base|platform|world|console|control-module|cli)\//.exec(p);
  if (m) return { area: m[1], name: m[1] };
  m = /^src\/([^/]+)\/([^/]+)\//.exec(p);
  if (m && PRODUCTS.includes(m[1]) && m[2] in PRODUCT_LAYERS) {
    return { area: 'product', product: m[1], layer: m[2], name: `${m[1]}/${m[2]}` };
  }
  return undefined;
}

/** The component a path belongs to: src/<area>/<c> or src/<product>/<layer>/<c>; a file
 *  directly in a product layer belongs to that layer's folder; one directly in src/cli/ to none. */
export function componentOf(rel) {
  const parts = posix(rel).split('/');
  if (parts[0] !== 'src') return undefined;
  const dirs = parts.slice(0, -1);
  const depth = PRODUCTS.includes(parts[1]) ? 4 : 3;
  if (dirs.length >= depth) return dirs.slice(0, depth).join('/');
  if (PRODUCTS.includes(parts[1]) && dirs.length === 3) return dirs.join('/');
  return undefined;
}

/** Why `from` must not import `to` (both areaOf results, `toRel` the target path), or undefined. */
export function refuse(from, to, toRel) {
  if (to.area === 'test') return from.area === 'test' ? undefined : `${from.name} must not import test or bench code`;
  if (from.area === 'test') return undefined;
  if (from.area === 'web' && to.area !== 'web') return `the browser bundle (console/web) must not import '${to.name}': it talks to the server over HTTP only`;
  if (to.area === 'web' && from.area !== 'web') return `'${from.name}' must not import the browser bundle (console/web)`;
  if (from.area === 'entry' && to.area === 'cli') {
    return `'${from.name}' must not import from 'cli': a process entry calls one product's run, the strait CLI is no library`;
  }
  if (AREA_RANK[to.area] > AREA_RANK[from.area]) {
    return `'${from.name}' must not import from '${to.name}': areas go base <- platform <- products <- world <- cli <- daemon/agents`;
  }
  if (from.area === 'product' && to.area === 'product') {
    if (from.product !== to.product) {
      return `product '${from.product}' must not import product '${to.product}': a product imports only platform/ and base/`;
    }
    if (PRODUCT_LAYERS[to.layer] > PRODUCT_LAYERS[from.layer]) {
      return `layer '${from.layer}' of '${from.product}' must not import from higher layer '${to.layer}'; inside a product: wire <- dataplane <- control <- cli`;
    }
  }
  if (from.area === 'product' && (from.layer === 'wire' || from.layer === 'dataplane') && to.area === 'platform') {
    const comp = posix(toRel).split('/')[2];
    if (from.layer === 'wire') return `layer 'wire' is codecs only and must not import platform/${comp}`;
    if (!DATAPLANE_PLATFORM.includes(comp)) {
      return `layer 'dataplane' may use only platform/{${DATAPLANE_PLATFORM.join(',')}}, not platform/${comp}`;
    }
  }
  return undefined;
}

function packagesOf(a) {
  if (a.area === 'base') return PACKAGES.base;
  if (a.area === 'web') return PACKAGES.web;
  if (a.area === 'product' && (a.layer === 'wire' || a.layer === 'dataplane')) return PACKAGES[a.layer];
  return ['*'];
}

export default {
  meta: {
    type: 'problem',
    docs: {
      description:
        'enforce strait layout: areas base <- platform <- products <- world <- cli <- daemon/agents; inside a product wire <- dataplane <- control <- cli',
    },
    schema: [],
  },
  create(context) {
    const root = context.cwd;
    const file = posix(relative(root, context.filename));
    if (!file.endsWith('.ts') && !file.endsWith('.tsx')) return {};
    const from = areaOf(file);
    function check(node, spec, typeOnly) {
      if (typeof spec !== 'string' || !from) return;
      if (spec.startsWith('.')) {
        const target = posix(relative(root, resolve(dirname(context.filename), spec))).replace(/\.js$/, from.area === 'web' ? '' : '.ts');
        const to = areaOf(target);
        if (!to) {
          context.report({ node, message: `import of '${spec}' leaves every strait area` });
          return;
        }
        const why = refuse(from, to, target);
        if (why) {
          context.report({ node, message: `${why} ('${spec}')` });
          return;
        }
        const fc = componentOf(file);
        const tc = componentOf(target);
        if (tc && fc !== tc && !/\/index\.ts$/.test(target)) {
          context.report({ node, message: `enter component '${tc}' through its index.ts, not '${spec}'` });
        }
        return;
      }
      if (spec.startsWith('node:')) {
        if (from.area === 'web') {
          context.report({ node, message: `the browser bundle (console/web) must not import '${spec}'` });
          return;
        }
        const noIo = from.area === 'base' || (from.area === 'product' && from.layer === 'wire');
        if (noIo && !typeOnly && IO_BUILTINS.test(spec)) {
          context.report({ node, message: `'${from.name}' does no I/O and must not import '${spec}'` });
        }
        return;
      }
      const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      const allowed = packagesOf(from);
      if (!allowed.includes('*') && !allowed.includes(pkg)) {
        context.report({ node, message: `'${from.name}' must not use package '${pkg}' (allowed: ${allowed.join(', ') || 'node built-ins only'})` });
      }
    }
    return {
      Program(node) {
        if (from?.area === 'entry') {
          const text = context.sourceCode.text;
          const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
          if (lines > MAX_ENTRY_LINES) {
            context.report({
              node,
              message: `'${file}' has ${lines} lines, more than ${MAX_ENTRY_LINES}: a process entry keeps argv, config file, signals and the call to one product's run; move the rest into the product`,
            });
          }
        }
        if (!from) {
          context.report({
            node,
            message: `'${file}' is in no strait area (src/{base,platform,world,console,control-module,cli}/, src/{${PRODUCTS.join(',')}}/{wire,dataplane,control,cli}/, daemon/, agents/, test/, bench/)`,
          });
        }
      },
      ImportDeclaration(node) {
        check(node.source, node.source.value, node.importKind === 'type');
      },
      ExportNamedDeclaration(node) {
        if (node.source) check(node.source, node.source.value, node.exportKind === 'type');
      },
      ExportAllDeclaration(node) {
        check(node.source, node.source.value, node.exportKind === 'type');
      },
      ImportExpression(node) {
        if (node.source.type === 'Literal') check(node.source, node.source.value, false);
      },
    };
  },
};

// No import cycles between files: `node tools/lint/cycles.mjs [root]` (run by `npm run lint`).
// Every relative import and re-export counts, `import type` too: a cycle of types is still two
// files that cannot be understood (or moved) one without the other. A cycle is found as a
// strongly connected component of the import graph (Tarjan) and printed as one loop through it.
//
// The one cycle that stays (ALLOWED, type-only, checked to stay so): src/base/errors, where the
// ErrorCode union is derived from the definitions table (codes.ts), whose factories (define.ts)
// build the StraitError that carries an ErrorCode. Erased at run time; breaking it would make
// the code a plain string.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const DIRS = ['src', 'daemon', 'agents', 'test', 'bench'];

/** cycles that may stay, by their files (relative, sorted), when every edge closing them is type-only */
export const ALLOWED = [
  {
    why: 'ErrorCode is derived from the definitions table, whose factories build the StraitError that carries it (types only)',
    under: 'src/base/errors/',
  },
];

function sourceFiles(root, dirs) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) {
        if (e !== 'node_modules' && e !== 'web') walk(p);
      } else if (/\.tsx?$/.test(e) && !e.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of dirs) walk(join(root, d));
  return out;
}

function isTypeOnly(st) {
  if (ts.isExportDeclaration(st)) return st.isTypeOnly;
  const c = st.importClause;
  if (!c) return false; // a side-effect import runs the module
  if (c.isTypeOnly) return true;
  const b = c.namedBindings;
  return !c.name && b !== undefined && ts.isNamedImports(b) && b.elements.length > 0 && b.elements.every((e) => e.isTypeOnly);
}

/** file -> [{ to, typeOnly }] for the relative imports that resolve to a source file */
export function importGraph(root, dirs = DIRS) {
  const files = sourceFiles(root, dirs);
  const known = new Set(files);
  const graph = new Map();
  for (const f of files) {
    const src = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, false);
    const edges = [];
    for (const st of src.statements) {
      const spec =
        (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) && st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)
          ? st.moduleSpecifier.text
          : '';
      if (!spec.startsWith('.')) continue;
      const base = resolve(dirname(f), spec).replace(/\.js$/, '');
      const to = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((x) => known.has(x));
      if (to) edges.push({ to, typeOnly: isTypeOnly(st) });
    }
    graph.set(f, edges);
  }
  return graph;
}

/** strongly connected components with more than one file (or a file importing itself) */
function components(graph, keep = () => true) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const e of graph.get(v)) {
      if (!keep(e)) continue;
      if (!index.has(e.to)) {
        visit(e.to);
        low.set(v, Math.min(low.get(v), low.get(e.to)));
      } else if (onStack.has(e.to)) low.set(v, Math.min(low.get(v), index.get(e.to)));
    }
    if (low.get(v) !== index.get(v)) return;
    const c = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1 || graph.get(v).some((e) => e.to === v && keep(e))) found.push(c);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** one loop through a component: breadth-first from its first file back to it */
function loopThrough(graph, comp) {
  const inside = new Set(comp);
  const start = [...comp].sort()[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const { to } of graph.get(v)) {
      if (!inside.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(to)) {
        prev.set(to, v);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/** { cycles: [{ files, loop, allowed }] } with paths relative to root */
export function findCycles(root, dirs = DIRS) {
  const graph = importGraph(root, dirs);
  const rel = (f) => relative(root, f);
  const runtime = new Set(components(graph, (e) => !e.typeOnly).flat());
  return components(graph).map((comp) => {
    const files = comp.map(rel).sort();
    const typeOnly = !comp.some((f) => runtime.has(f));
    const rule = ALLOWED.find((a) => files.every((f) => f.startsWith(a.under)));
    return { files, loop: loopThrough(graph, comp).map(rel), typeOnly, allowed: Boolean(rule && typeOnly), why: rule?.why ?? '' };
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
  const bad = findCycles(root).filter((c) => !c.allowed);
  for (const c of bad) {
    console.error(`import cycle (${c.files.length} files${c.typeOnly ? ', types only' : ''}): ${c.loop.join(' -> ')}`);
  }
  if (bad.length > 0) {
    console.error(
      `tools/lint/cycles.mjs: ${bad.length} import cycle(s): import the file that defines the name (not the folder's index.ts from inside the folder), or move what both sides need into a third file`,
    );
    process.exit(1);
  }
}

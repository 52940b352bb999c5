// kubectl's `-o jsonpath=TEMPLATE`: text with {actions}, as kubectl's jsonpath printer reads
// them: {.items[*].metadata.name} (several results joined by spaces), {.spec.clusterIP},
// {range .items[*]}…{end}, {"\n"} and other quoted literals, @ for the current object, and
// filters such as {.status.conditions[?(@.type=="Ready")].status}. The expressions are
// evaluated by jsonpath-plus (its safe evaluator, no JavaScript eval). A key that is not
// there prints nothing, as kubectl's default --allow-missing-template-keys=true does.
import { createRequire } from 'node:module';
import type { JSONPath as JSONPathFn } from 'jsonpath-plus';
import { E } from '../../base/errors/index.js';

type Node = { type: 'text'; text: string } | { type: 'expr'; path: string } | { type: 'range'; path: string; body: Node[] };

export interface JsonPathTemplate {
  readonly source: string;
  render(data: unknown): string;
}

function bad(template: string, why: string): Error {
  return E.usage(`invalid jsonpath template ${JSON.stringify(template)}: ${why}; e.g. -o jsonpath='{.items[*].metadata.name}'`, { template });
}

/** kubectl's expression syntax to jsonpath-plus's: ".a.b" and "@.a" become "$.a.b". */
function toJsonPath(expr: string, template: string): string {
  const e = expr.trim();
  if (e === '' || e === '.' || e === '@' || e === '$') return '$';
  if (e.startsWith('..')) return `$${e}`;
  if (e.startsWith('.') || e.startsWith('[')) return `$${e}`;
  if (e.startsWith('@')) return `$${e.slice(1)}`;
  if (e.startsWith('$')) return e;
  throw bad(template, `unrecognized expression ${JSON.stringify(e)} (start it with "." or "@")`);
}

/** Parse a template; STRAIT_ERR_USAGE names what is wrong. */
export function parseJsonPathTemplate(template: string): JsonPathTemplate {
  // like kubectl: a bare expression is one action
  const src = template.includes('{') ? template : `{${template}}`;
  const root: Node[] = [];
  const stack: { body: Node[] }[] = [{ body: root }];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{', i);
    const top = stack[stack.length - 1] as { body: Node[] };
    if (open < 0) {
      top.body.push({ type: 'text', text: src.slice(i) });
      break;
    }
    if (open > i) top.body.push({ type: 'text', text: src.slice(i, open) });
    // the action ends at the first "}" outside a quoted string
    let j = open + 1;
    let quote: string | undefined;
    for (; j < src.length; j++) {
      const c = src[j];
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}') break;
    }
    if (j >= src.length) throw bad(template, `unclosed action at column ${open + 1}`);
    const action = src.slice(open + 1, j).trim();
    i = j + 1;
    if (action === 'end') {
      if (stack.length === 1) throw bad(template, '{end} without {range}');
      stack.pop();
    } else if (action.startsWith('range ')) {
      const node: Node = { type: 'range', path: toJsonPath(action.slice(6), template), body: [] };
      top.body.push(node);
      stack.push(node);
    } else if (action.startsWith('"')) {
      try {
        top.body.push({ type: 'text', text: JSON.parse(action) as string });
      } catch {
        throw bad(template, `bad string literal ${action}`);
      }
    } else if (action.startsWith("'") && action.endsWith("'") && action.length >= 2) {
      top.body.push({ type: 'text', text: action.slice(1, -1) });
    } else {
      top.body.push({ type: 'expr', path: toJsonPath(action, template) });
    }
  }
  if (stack.length > 1) throw bad(template, '{range} without {end}');
  // compile every expression once, so a syntax error shows before any output
  const check = (nodes: Node[]): void => {
    for (const n of nodes) {
      if (n.type === 'text') continue;
      try {
        evaluate(n.path, {});
      } catch (err) {
        throw bad(template, `${n.path}: ${(err as Error).message}`);
      }
      if (n.type === 'range') check(n.body);
    }
  };
  check(root);
  return {
    source: template,
    render: (data: unknown) => renderNodes(root, data),
  };
}

let jsonPath: typeof JSONPathFn | undefined;
function evaluate(path: string, json: unknown): unknown[] {
  jsonPath ??= (createRequire(import.meta.url)('jsonpath-plus') as { JSONPath: typeof JSONPathFn }).JSONPath;
  const out = jsonPath({ path, json: json as object, wrap: true, eval: 'safe' }) as unknown[] | undefined;
  return out ?? [];
}

function show(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function renderNodes(nodes: Node[], data: unknown): string {
  let out = '';
  for (const n of nodes) {
    if (n.type === 'text') out += n.text;
    else if (n.type === 'expr') out += evaluate(n.path, data).map(show).join(' ');
    else for (const item of evaluate(n.path, data)) out += renderNodes(n.body, item);
  }
  return out;
}

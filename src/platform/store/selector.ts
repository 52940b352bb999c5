// Kubernetes label selectors: "a=b,c==d,e!=f,g in (x,y),h notin (z),i,!j".
// Parsed once per list/watch; matching is a loop over plain requirements.
import { E } from '../../base/errors/index.js';

export type Requirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

// DNS-1123 subdomain prefix "/" name, as Kubernetes label keys
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function bad(selector: string, rule: string): never {
  throw E.usage(`invalid label selector ${JSON.stringify(selector)}: ${rule}`, { selector, rule });
}

/** Split on commas that are not inside parentheses. */
function splitTerms(s: string, selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0 || depth > 1) bad(selector, 'unbalanced parentheses');
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) bad(selector, 'unbalanced parentheses');
  out.push(cur);
  return out;
}

function checkKey(key: string, selector: string): string {
  if (!KEY.test(key) || key.length > 316) bad(selector, `${JSON.stringify(key)} is not a valid label key`);
  return key;
}
function checkValue(v: string, selector: string): string {
  if (!VALUE.test(v) || v.length > 63) bad(selector, `${JSON.stringify(v)} is not a valid label value`);
  return v;
}

export function parseSelector(selector: string | undefined): Requirement[] {
  if (selector === undefined || selector.trim() === '') return [];
  const reqs: Requirement[] = [];
  for (const raw of splitTerms(selector, selector)) {
    const term = raw.trim();
    if (term === '') bad(selector, 'empty term');
    let m = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(term);
    if (m) {
      const values = m[3]!.split(',').map((v) => checkValue(v.trim(), selector));
      reqs.push({ op: m[2] as 'in' | 'notin', key: checkKey(m[1]!, selector), values });
      continue;
    }
    m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    if (m) {
      reqs.push({ op: m[2] === '!=' ? 'neq' : 'eq', key: checkKey(m[1]!, selector), value: checkValue(m[3]!, selector) });
      continue;
    }
    m = /^!\s*(\S+)$/.exec(term);
    if (m) {
      reqs.push({ op: 'notexists', key: checkKey(m[1]!, selector) });
      continue;
    }
    reqs.push({ op: 'exists', key: checkKey(term, selector) });
  }
  return reqs;
}

export function matchesSelector(reqs: Requirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = has ? l[r.key] : undefined;
    switch (r.op) {
      case 'eq':
        if (v !== r.value) return false;
        break;
      case 'neq':
        if (v === r.value) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
    }
  }
  return true;
}

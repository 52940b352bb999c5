// Small pieces every view uses. Status is always a word with a symbol; colour only repeats it.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';

export type Tone = 'ok' | 'warn' | 'bad' | 'info';
const SYMBOL: Record<Tone, string> = { ok: '✓', warn: '!', bad: '✕', info: '•' };

export function Badge({ tone, children, title }: { tone: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge ${tone}`} {...(title ? { title } : {})}>
      <span aria-hidden="true">{SYMBOL[tone]} </span>
      {children}
    </span>
  );
}

export function Section({ title, id, children, actions }: { title: string; id: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-labelledby={`${id}-h`} class="section">
      <div class="section-head">
        <h2 id={`${id}-h`}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Table({
  caption,
  head,
  rows,
  empty,
  testId,
}: {
  caption: string;
  head: string[];
  rows: ComponentChildren[][];
  empty: string;
  testId?: string;
}) {
  if (rows.length === 0)
    return (
      <p class="empty" {...(testId ? { 'data-testid': testId } : {})}>
        {empty}
      </p>
    );
  return (
    <div class="table-wrap">
      <table {...(testId ? { 'data-testid': testId } : {})}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>{r.map((c, i) => (i === 0 ? <th scope="row">{c}</th> : <td>{c}</td>))}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A button that runs an action, says it is busy, and shows the server's refusal in words. */
export function Action({ label, run, disabled, describe }: { label: string; run: () => Promise<unknown>; disabled?: boolean; describe?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState(false);
  const click = async () => {
    setBusy(true);
    setError('');
    setDone(false);
    try {
      await run();
      setDone(true);
    } catch (err) {
      setError(err instanceof ApiError ? `${err.message}` : String((err as Error)?.message ?? err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" onClick={click} disabled={busy || disabled} aria-busy={busy} {...(describe ? { 'aria-label': describe } : {})}>
        {busy ? `${label}…` : label}
      </button>
      {error ? (
        <span role="alert" class="error-text">
          ✕ {error}
        </span>
      ) : done ? (
        <span class="sr-only" role="status">
          {label} done
        </span>
      ) : null}
    </span>
  );
}

export const ago = (iso: string): string => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

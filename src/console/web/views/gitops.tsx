// GitOps: Applications with sync status, revision, the signature verdict (key ID and
// signer, or why it was refused), the history of syncs, the projects' policy, the imported
// keys; sync and refresh through the control module's API (Argo CD's REST routes).
import { useEffect, useState } from 'preact/hooks';
import { gpgKeys, refreshApplication, syncApplication, type GpgKey } from '../api';
import type { Live } from '../live';
import { applications, projects, verdict, type AppRow } from '../model';
import { Conditions } from './services';
import { Action, Badge, Section, Table, ago, type Tone } from './common';

const syncTone = (s: string): Tone => (s === 'Synced' ? 'ok' : s === 'OutOfSync' ? 'warn' : s === 'Unknown' ? 'info' : 'bad');
const healthTone = (s: string): Tone => (s === 'Healthy' ? 'ok' : s === 'Missing' || s === 'Unknown' ? 'info' : 'bad');
const short = (rev: string): string => (/^[0-9a-f]{40}$/.test(rev) ? rev.slice(0, 10) : rev);

function AppCard({ a, mayAct }: { a: AppRow; mayAct: boolean }) {
  const v = verdict(a.signature);
  return (
    <article class="card" aria-labelledby={`app-${a.name}`} data-testid={`app-${a.name}`}>
      <header class="card-head">
        <h3 id={`app-${a.name}`}>{a.name}</h3>
        <span class="buttons">
          <Action label="Sync" disabled={!mayAct} describe={`Sync application ${a.name}`} run={() => syncApplication(a.name)} />
          <Action label="Refresh" describe={`Refresh application ${a.name}`} run={() => refreshApplication(a.name)} />
        </span>
      </header>
      <dl class="facts">
        <dt>Sync</dt>
        <dd>
          <Badge tone={syncTone(a.sync)}>{a.sync}</Badge>
        </dd>
        <dt>Health</dt>
        <dd>
          <Badge tone={healthTone(a.health)}>{a.health}</Badge>
        </dd>
        <dt>Revision</dt>
        <dd data-testid={`revision-${a.name}`}>
          <span class="mono" title={a.revision}>
            {a.revision ? short(a.revision) : '–'}
          </span>
          {a.sync === 'Sync Error' ? (
            <>
              {' '}
              <Badge tone="bad">refused</Badge>
            </>
          ) : null}
          {a.lastGood ? (
            <span class="muted">
              {' '}
              · last good:{' '}
              <span class="mono" title={a.lastGood}>
                {short(a.lastGood)}
              </span>
            </span>
          ) : null}
        </dd>
        <dt>Signature</dt>
        <dd data-testid={`signature-${a.name}`}>
          <Badge tone={v.ok ? 'ok' : 'bad'}>{v.ok ? 'verified' : 'refused'}</Badge> {v.text}
          {a.signature && !v.ok && a.signature.enforced === false ? <span class="muted"> (not enforced by the project)</span> : null}
        </dd>
        <dt>Source</dt>
        <dd class="mono">
          {a.repoURL} {a.path ? `· ${a.path}` : ''} · {a.targetRevision}
        </dd>
        <dt>Project</dt>
        <dd>{a.project}</dd>
        <dt>Destination</dt>
        <dd class="mono">{a.destination}</dd>
        <dt>Last operation</dt>
        <dd data-testid={`operation-${a.name}`}>
          {a.phase ? <Badge tone={a.phase === 'Succeeded' ? 'ok' : 'bad'}>{a.phase}</Badge> : '–'} {a.operationMessage}
        </dd>
        <dt>Conditions</dt>
        <dd>{a.conditions.length ? <Conditions list={a.conditions} /> : 'none'}</dd>
        <dt>Reconciled</dt>
        <dd>{a.reconciledAt ? ago(a.reconciledAt) : '–'}</dd>
      </dl>
      <Table
        caption={`Sync history of ${a.name} (newest first)`}
        head={['#', 'Revision', 'Signer', 'Deployed']}
        empty="Never synced."
        rows={a.history.map((h) => [h.id, <span class="mono">{short(h.revision)}</span>, h.signer ?? '–', ago(h.deployedAt)])}
      />
    </article>
  );
}

function Keys() {
  const [keys, setKeys] = useState<GpgKey[] | undefined>();
  const [error, setError] = useState('');
  const load = async () => {
    try {
      setKeys((await gpgKeys()).items ?? []);
      setError('');
    } catch (err) {
      setError(String((err as Error).message));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  return (
    <Section title="Imported GnuPG keys" id="keys" actions={<Action label="Reload keys" run={load} />}>
      {error ? (
        <p role="alert" class="error-text">
          ✕ {error}
        </p>
      ) : null}
      {keys === undefined ? (
        <p>Loading…</p>
      ) : (
        <Table
          caption="Keys the control module verifies signatures with"
          testId="gpg-keys"
          head={['Key ID', 'Owner', 'Type', 'Fingerprint']}
          empty="No key is imported: every signed revision is refused."
          rows={keys.map((k) => [<span class="mono">{k.keyID}</span>, k.owner ?? '–', k.subType ?? '–', <span class="mono">{k.fingerprint ?? '–'}</span>])}
        />
      )}
    </Section>
  );
}

export function GitOpsView({ live, mayAct }: { live: Live; mayAct: boolean }) {
  const apps = applications(live);
  const projs = projects(live);
  return (
    <>
      <Section title="Applications" id="apps">
        {apps.length === 0 ? (
          <p class="empty">
            No Application. Apply one with <code>strait apply -f app.yaml</code>.
          </p>
        ) : (
          apps.map((a) => <AppCard a={a} mayAct={mayAct} />)
        )}
      </Section>
      <Section title="Projects and their policy" id="projects">
        <Table
          caption="AppProjects: the repositories, destinations and signature keys each allows"
          testId="projects"
          head={['Project', 'Source repositories', 'Destinations', 'Signature keys']}
          empty="No AppProject (the default project allows everything and enforces no signature)."
          rows={projs.map((p) => [
            p.name,
            p.sourceRepos.join(', ') || '–',
            p.destinations.join(', ') || '–',
            p.signatureKeys.length ? <span class="mono">{p.signatureKeys.join(', ')}</span> : <Badge tone="warn">none: signatures not enforced</Badge>,
          ])}
        />
      </Section>
      <Keys />
    </>
  );
}

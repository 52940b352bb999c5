// The console's shell: login with the control module's admin account (the API's session
// cookie), then four views over one live copy of the stores.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, login, logout, storeClusters, userInfo } from './api';
import { Live, watchesFor } from './live';
import { Badge } from './views/common';
import { GitOpsView } from './views/gitops';
import { MeshView } from './views/mesh';
import { ServicesView } from './views/services';
import { TopologyView } from './views/topology';

const VIEWS = [
  { id: 'topology', title: 'Topology' },
  { id: 'services', title: 'Services' },
  { id: 'mesh', title: 'Mesh' },
  { id: 'gitops', title: 'GitOps' },
] as const;
type ViewId = (typeof VIEWS)[number]['id'];

const routeOf = (hash: string): ViewId => VIEWS.find((v) => `#/${v.id}` === hash)?.id ?? 'topology';

function Login({ onIn }: { onIn: (user: string) => void }) {
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await login(username, password);
      onIn(username);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String((err as Error).message));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login" id="main">
      <h1>strait console</h1>
      <form onSubmit={submit} aria-describedby={error ? 'login-error' : undefined}>
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          autocomplete="username"
          value={username}
          onInput={(e) => setUsername((e.target as HTMLInputElement).value)}
          required
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          value={password}
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        {error ? (
          <p id="login-error" role="alert" class="error-text">
            ✕ {error}
          </p>
        ) : null}
      </form>
      <p class="muted">
        The control module's admin account, as for <code>strait login</code>. In a local world: <code>strait status</code> names the password file.
      </p>
    </main>
  );
}

/** The bar on top: the views, the live stream's state, the user and the log-out button. */
function TopBar({ route, live, user, onOut }: { route: ViewId; live: Live | undefined; user: string; onOut: () => void }) {
  return (
    <header class="top">
      <span class="brand">strait console</span>
      <nav aria-label="Views">
        <ul>
          {VIEWS.map((v) => (
            <li>
              <a href={`#/${v.id}`} aria-current={route === v.id ? 'page' : undefined}>
                {v.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <span class="who">
        {live ? (
          <span role="status" data-testid="live-state">
            <Badge tone={live.state === 'live' ? 'ok' : 'warn'}>{live.state}</Badge>
          </span>
        ) : null}{' '}
        <span>{user}</span>{' '}
        <button
          type="button"
          onClick={() => {
            void logout().finally(onOut);
          }}
        >
          Log out
        </button>
      </span>
    </header>
  );
}

function Shell({ user, onOut }: { user: string; onOut: () => void }) {
  const [clusters, setClusters] = useState<string[] | undefined>();
  const [error, setError] = useState('');
  const [route, setRoute] = useState<ViewId>(routeOf(location.hash));
  const [, setTick] = useState(0);
  useEffect(() => {
    const f = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  useEffect(() => {
    storeClusters().then(
      (r) => setClusters(r.clusters.sort()),
      (err: Error) => {
        if (err instanceof ApiError && err.status === 401) onOut();
        else setError(err.message);
      },
    );
  }, []);
  const live = useMemo(() => (clusters ? new Live(watchesFor(clusters)) : undefined), [clusters]);
  useEffect(() => {
    if (!live) return;
    const off = live.subscribe(() => {
      setTick((t) => t + 1);
      if (live.state !== 'closed') return;
      // the stream was refused: back to the login when the session is gone, else follow again
      userInfo().then(
        (u) => {
          if (!u.loggedIn) onOut();
          else
            setTimeout(() => {
              if (live.state === 'closed') live.start();
            }, 2000);
        },
        () => setTimeout(() => live.start(), 2000),
      );
    });
    live.start();
    return () => {
      off();
      live.stop();
    };
  }, [live]);
  useEffect(() => {
    const v = VIEWS.find((x) => x.id === route);
    document.title = `${v?.title ?? ''} · strait console`;
  }, [route]);
  const mayAct = user === 'admin';
  return (
    <>
      <a class="skip" href="#main">
        Skip to the view
      </a>
      <TopBar route={route} live={live} user={user} onOut={onOut} />
      <main id="main" tabIndex={-1}>
        <h1>{VIEWS.find((v) => v.id === route)?.title}</h1>
        {error ? (
          <p role="alert" class="error-text">
            ✕ {error}
          </p>
        ) : null}
        {!live || !clusters ? (
          <p>Loading…</p>
        ) : route === 'topology' ? (
          <TopologyView live={live} clusters={clusters} />
        ) : route === 'services' ? (
          <ServicesView live={live} clusters={clusters} mayAct={mayAct} />
        ) : route === 'mesh' ? (
          <MeshView live={live} clusters={clusters} mayAct={mayAct} />
        ) : (
          <GitOpsView live={live} mayAct={mayAct} />
        )}
      </main>
    </>
  );
}

export function App() {
  const [user, setUser] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    userInfo().then(
      (u) => setUser(u.loggedIn ? (u.username ?? 'admin') : null),
      () => setUser(null),
    );
  }, []);
  if (user === undefined) return <p>Loading…</p>;
  if (user === null) return <Login onIn={setUser} />;
  return <Shell user={user} onOut={() => setUser(null)} />;
}

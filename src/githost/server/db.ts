// The githost database: SQLite (better-sqlite3, WAL, synchronous=FULL) under
// <state-dir>/githost/githost.db. Every write is one statement or one transaction,
// so a kill -9 never leaves half a user, token or repository row.
import Database from 'better-sqlite3';
import { E } from '../../base/errors/index.js';

export interface UserRow {
  id: number;
  name: string;
  lower_name: string;
  login_name: string;
  full_name: string;
  email: string;
  lower_email: string;
  passwd_hash: string;
  passwd_salt: string;
  passwd_algo: string;
  must_change_password: number;
  is_admin: number;
  is_active: number;
  prohibit_login: number;
  restricted: number;
  visibility: string;
  created_unix: number;
  updated_unix: number;
  last_login_unix: number;
}

export interface TokenRow {
  id: number;
  uid: number;
  name: string;
  token_hash: string;
  token_last_eight: string;
  scopes: string;
  created_unix: number;
  updated_unix: number;
}

export interface RepoRow {
  id: number;
  owner_id: number;
  name: string;
  lower_name: string;
  description: string;
  private: number;
  mirror: number;
  original_url: string;
  default_branch: string;
  created_unix: number;
  updated_unix: number;
}

export interface GpgKeyRow {
  id: number;
  owner_id: number;
  key_id: string;
  primary_key_id: string;
  content: string;
  emails: string;
  can_sign: number;
  can_encrypt_comms: number;
  can_encrypt_storage: number;
  can_certify: number;
  verified: number;
  created_unix: number;
  expired_unix: number;
  added_unix: number;
}

export interface PublicKeyRow {
  id: number;
  owner_id: number;
  /** the title */
  name: string;
  /** "SHA256:…" */
  fingerprint: string;
  /** "type base64" */
  content: string;
  created_unix: number;
  updated_unix: number;
}

/** A branch protection rule: name, priority and the Gitea option fields as JSON (branch-protection.ts). */
export interface ProtectedBranchRow {
  id: number;
  repo_id: number;
  rule_name: string;
  priority: number;
  /** JSON of the rule's Gitea fields (BranchProtectionRule) */
  rule: string;
  created_unix: number;
  updated_unix: number;
}

/** A tag protection rule (Gitea's ProtectedTag): a name pattern and who may create, move or delete matching tags. */
export interface ProtectedTagRow {
  id: number;
  repo_id: number;
  name_pattern: string;
  /** JSON array of the allowed usernames, as given */
  allowlist_usernames: string;
  created_unix: number;
  updated_unix: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS user (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL, lower_name TEXT NOT NULL UNIQUE, login_name TEXT NOT NULL DEFAULT '',
  full_name TEXT NOT NULL DEFAULT '', email TEXT NOT NULL, lower_email TEXT NOT NULL UNIQUE,
  passwd_hash TEXT NOT NULL, passwd_salt TEXT NOT NULL, passwd_algo TEXT NOT NULL,
  must_change_password INTEGER NOT NULL DEFAULT 0, is_admin INTEGER NOT NULL DEFAULT 0,
  is_active INTEGER NOT NULL DEFAULT 1, prohibit_login INTEGER NOT NULL DEFAULT 0,
  restricted INTEGER NOT NULL DEFAULT 0, visibility TEXT NOT NULL DEFAULT 'public',
  created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL, last_login_unix INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS access_token (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uid INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, token_last_eight TEXT NOT NULL,
  scopes TEXT NOT NULL, created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL,
  UNIQUE (uid, name)
);
CREATE TABLE IF NOT EXISTS repository (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  name TEXT NOT NULL, lower_name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
  private INTEGER NOT NULL DEFAULT 0, mirror INTEGER NOT NULL DEFAULT 0, original_url TEXT NOT NULL DEFAULT '',
  default_branch TEXT NOT NULL DEFAULT 'main', created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL,
  UNIQUE (owner_id, lower_name)
);
CREATE TABLE IF NOT EXISTS collaboration (
  repo_id INTEGER NOT NULL REFERENCES repository(id) ON DELETE CASCADE,
  user_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  mode TEXT NOT NULL, created_unix INTEGER NOT NULL,
  PRIMARY KEY (repo_id, user_id)
);
CREATE TABLE IF NOT EXISTS gpg_key (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  key_id TEXT NOT NULL UNIQUE, primary_key_id TEXT NOT NULL DEFAULT '', content TEXT NOT NULL,
  emails TEXT NOT NULL DEFAULT '[]', can_sign INTEGER NOT NULL, can_encrypt_comms INTEGER NOT NULL,
  can_encrypt_storage INTEGER NOT NULL, can_certify INTEGER NOT NULL, verified INTEGER NOT NULL DEFAULT 1,
  created_unix INTEGER NOT NULL, expired_unix INTEGER NOT NULL DEFAULT 0, added_unix INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS gpg_key_owner ON gpg_key(owner_id);
CREATE TABLE IF NOT EXISTS public_key (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  name TEXT NOT NULL, fingerprint TEXT NOT NULL UNIQUE, content TEXT NOT NULL,
  created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL,
  UNIQUE (owner_id, name)
);
CREATE TABLE IF NOT EXISTS protected_branch (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  repo_id INTEGER NOT NULL REFERENCES repository(id) ON DELETE CASCADE,
  rule_name TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT 0, rule TEXT NOT NULL,
  created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL,
  UNIQUE (repo_id, rule_name)
);
CREATE TABLE IF NOT EXISTS protected_tag (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  repo_id INTEGER NOT NULL REFERENCES repository(id) ON DELETE CASCADE,
  name_pattern TEXT NOT NULL, allowlist_usernames TEXT NOT NULL,
  created_unix INTEGER NOT NULL, updated_unix INTEGER NOT NULL,
  UNIQUE (repo_id, name_pattern)
);
`;

export type NewUser = Omit<UserRow, 'id' | 'lower_name' | 'lower_email' | 'created_unix' | 'updated_unix' | 'last_login_unix'>;
export type NewRepo = Omit<RepoRow, 'id' | 'lower_name' | 'created_unix' | 'updated_unix'>;
export type NewGpgKey = Omit<GpgKeyRow, 'id' | 'added_unix'>;

export class GithostDb {
  readonly db: Database.Database;
  private readonly q;

  constructor(readonly path: string) {
    try {
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      this.db.pragma('busy_timeout = 5000');
      this.db.exec(SCHEMA);
    } catch (err) {
      throw E.githostDatabase(path, (err as Error).message);
    }
    const d = this.db;
    this.q = {
      userById: d.prepare<[number], UserRow>('SELECT * FROM user WHERE id = ?'),
      userByName: d.prepare<[string], UserRow>('SELECT * FROM user WHERE lower_name = ?'),
      userByEmail: d.prepare<[string], UserRow>('SELECT * FROM user WHERE lower_email = ?'),
      userCount: d.prepare<[], { n: number }>('SELECT count(*) AS n FROM user'),
      insertUser: d.prepare(`INSERT INTO user (name, lower_name, login_name, full_name, email, lower_email, passwd_hash, passwd_salt,
        passwd_algo, must_change_password, is_admin, is_active, prohibit_login, restricted, visibility, created_unix, updated_unix)
        VALUES (@name, @lower_name, @login_name, @full_name, @email, @lower_email, @passwd_hash, @passwd_salt, @passwd_algo,
        @must_change_password, @is_admin, @is_active, @prohibit_login, @restricted, @visibility, @created_unix, @updated_unix)`),
      tokenByHash: d.prepare<[string], TokenRow>('SELECT * FROM access_token WHERE token_hash = ?'),
      tokenByName: d.prepare<[number, string], TokenRow>('SELECT * FROM access_token WHERE uid = ? AND name = ?'),
      tokensOf: d.prepare<[number], TokenRow>('SELECT * FROM access_token WHERE uid = ? ORDER BY id'),
      insertToken: d.prepare(`INSERT INTO access_token (uid, name, token_hash, token_last_eight, scopes, created_unix, updated_unix)
        VALUES (@uid, @name, @token_hash, @token_last_eight, @scopes, @created_unix, @updated_unix)`),
      deleteToken: d.prepare<[number, number]>('DELETE FROM access_token WHERE uid = ? AND id = ?'),
      touchToken: d.prepare<[number, number]>('UPDATE access_token SET updated_unix = ? WHERE id = ?'),
      repoByName: d.prepare<[number, string], RepoRow>('SELECT * FROM repository WHERE owner_id = ? AND lower_name = ?'),
      repoById: d.prepare<[number], RepoRow>('SELECT * FROM repository WHERE id = ?'),
      allRepos: d.prepare<[], RepoRow & { owner_lower: string }>('SELECT r.*, u.lower_name AS owner_lower FROM repository r JOIN user u ON u.id = r.owner_id'),
      reposOfOwner: d.prepare<[number], RepoRow>('SELECT * FROM repository WHERE owner_id = ? ORDER BY id'),
      collaborations: d.prepare<[number], { repo_id: number; mode: string }>('SELECT repo_id, mode FROM collaboration WHERE user_id = ?'),
      insertRepo: d.prepare(`INSERT INTO repository (owner_id, name, lower_name, description, private, mirror, original_url, default_branch,
        created_unix, updated_unix) VALUES (@owner_id, @name, @lower_name, @description, @private, @mirror, @original_url, @default_branch,
        @created_unix, @updated_unix)`),
      touchRepo: d.prepare<[number, number]>('UPDATE repository SET updated_unix = ? WHERE id = ?'),
      setDefaultBranch: d.prepare<[string, number]>('UPDATE repository SET default_branch = ? WHERE id = ?'),
      collaboration: d.prepare<[number, number], { mode: string }>('SELECT mode FROM collaboration WHERE repo_id = ? AND user_id = ?'),
      upsertCollaboration: d.prepare(`INSERT INTO collaboration (repo_id, user_id, mode, created_unix) VALUES (?, ?, ?, ?)
        ON CONFLICT (repo_id, user_id) DO UPDATE SET mode = excluded.mode`),
      gpgKeysOf: d.prepare<[number], GpgKeyRow>('SELECT * FROM gpg_key WHERE owner_id = ? ORDER BY id'),
      gpgKeyByKeyId: d.prepare<[string], GpgKeyRow>('SELECT * FROM gpg_key WHERE key_id = ?'),
      gpgKeyOfUser: d.prepare<[number, number], GpgKeyRow>('SELECT * FROM gpg_key WHERE id = ? AND owner_id = ?'),
      gpgSubkeys: d.prepare<[string], GpgKeyRow>('SELECT * FROM gpg_key WHERE primary_key_id = ? ORDER BY id'),
      deleteGpgKey: d.prepare<[number, string, string]>('DELETE FROM gpg_key WHERE owner_id = ? AND (key_id = ? OR primary_key_id = ?)'),
      publicKeysOf: d.prepare<[number], PublicKeyRow>('SELECT * FROM public_key WHERE owner_id = ? ORDER BY id'),
      publicKeyById: d.prepare<[number], PublicKeyRow>('SELECT * FROM public_key WHERE id = ?'),
      publicKeyByFingerprint: d.prepare<[string], PublicKeyRow>('SELECT * FROM public_key WHERE fingerprint = ?'),
      publicKeyByName: d.prepare<[number, string], PublicKeyRow>('SELECT * FROM public_key WHERE owner_id = ? AND name = ?'),
      insertPublicKey: d.prepare(`INSERT INTO public_key (owner_id, name, fingerprint, content, created_unix, updated_unix)
        VALUES (@owner_id, @name, @fingerprint, @content, @created_unix, @updated_unix)`),
      deletePublicKey: d.prepare<[number, number]>('DELETE FROM public_key WHERE owner_id = ? AND id = ?'),
      protectionsOf: d.prepare<[number], ProtectedBranchRow>('SELECT * FROM protected_branch WHERE repo_id = ? ORDER BY created_unix, id'),
      protectionByName: d.prepare<[number, string], ProtectedBranchRow>('SELECT * FROM protected_branch WHERE repo_id = ? AND rule_name = ?'),
      insertProtection: d.prepare(`INSERT INTO protected_branch (repo_id, rule_name, priority, rule, created_unix, updated_unix)
        VALUES (@repo_id, @rule_name, @priority, @rule, @created_unix, @updated_unix)`),
      updateProtection: d.prepare<[number, string, number, number]>('UPDATE protected_branch SET priority = ?, rule = ?, updated_unix = ? WHERE id = ?'),
      deleteProtection: d.prepare<[number, number]>('DELETE FROM protected_branch WHERE repo_id = ? AND id = ?'),
      tagProtectionsOf: d.prepare<[number], ProtectedTagRow>('SELECT * FROM protected_tag WHERE repo_id = ? ORDER BY id'),
      tagProtectionById: d.prepare<[number, number], ProtectedTagRow>('SELECT * FROM protected_tag WHERE repo_id = ? AND id = ?'),
      tagProtectionByPattern: d.prepare<[number, string], ProtectedTagRow>('SELECT * FROM protected_tag WHERE repo_id = ? AND name_pattern = ?'),
      insertTagProtection: d.prepare(`INSERT INTO protected_tag (repo_id, name_pattern, allowlist_usernames, created_unix, updated_unix)
        VALUES (@repo_id, @name_pattern, @allowlist_usernames, @created_unix, @updated_unix)`),
      updateTagProtection: d.prepare<[string, string, number, number]>(
        'UPDATE protected_tag SET name_pattern = ?, allowlist_usernames = ?, updated_unix = ? WHERE id = ?',
      ),
      deleteTagProtection: d.prepare<[number, number]>('DELETE FROM protected_tag WHERE repo_id = ? AND id = ?'),
      insertGpgKey: d.prepare(`INSERT INTO gpg_key (owner_id, key_id, primary_key_id, content, emails, can_sign, can_encrypt_comms,
        can_encrypt_storage, can_certify, verified, created_unix, expired_unix, added_unix) VALUES (@owner_id, @key_id, @primary_key_id,
        @content, @emails, @can_sign, @can_encrypt_comms, @can_encrypt_storage, @can_certify, @verified, @created_unix, @expired_unix, @added_unix)`),
    };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  userById(id: number): UserRow | undefined {
    return this.q.userById.get(id);
  }
  userByName(name: string): UserRow | undefined {
    return this.q.userByName.get(name.toLowerCase());
  }
  userByEmail(email: string): UserRow | undefined {
    return this.q.userByEmail.get(email.toLowerCase());
  }
  userCount(): number {
    return this.q.userCount.get()?.n ?? 0;
  }

  /** Insert a user; name and e-mail uniqueness is checked inside the same transaction. */
  insertUser(u: NewUser): UserRow {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.userByName(u.name)) throw E.githostUserExists(u.name);
        if (this.userByEmail(u.email)) throw E.githostEmailUsed(u.email);
        const info = this.q.insertUser.run({
          ...u,
          lower_name: u.name.toLowerCase(),
          lower_email: u.email.toLowerCase(),
          created_unix: now,
          updated_unix: now,
        });
        return this.userById(Number(info.lastInsertRowid)) as UserRow;
      })
      .immediate();
  }

  tokenByHash(hash: string): TokenRow | undefined {
    return this.q.tokenByHash.get(hash);
  }
  tokenByName(uid: number, name: string): TokenRow | undefined {
    return this.q.tokenByName.get(uid, name);
  }
  tokensOf(uid: number): TokenRow[] {
    return this.q.tokensOf.all(uid);
  }
  deleteToken(uid: number, id: number): boolean {
    return this.q.deleteToken.run(uid, id).changes > 0;
  }

  /**
   * Record a token's use (Gitea's last_used_at). Written at most once a second per
   * token, so a busy client does not turn every request into a synchronous write.
   */
  touchToken(row: TokenRow): void {
    const now = Math.floor(Date.now() / 1000);
    if (now > row.updated_unix) this.q.touchToken.run(now, row.id);
  }

  /** Insert a token; returns undefined when the user already has one with that name. */
  insertToken(t: Omit<TokenRow, 'id' | 'created_unix' | 'updated_unix'>): TokenRow | undefined {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.tokenByName(t.uid, t.name)) return undefined;
        const info = this.q.insertToken.run({ ...t, created_unix: now, updated_unix: now });
        return { ...t, id: Number(info.lastInsertRowid), created_unix: now, updated_unix: now };
      })
      .immediate();
  }

  repoByName(ownerId: number, name: string): RepoRow | undefined {
    return this.q.repoByName.get(ownerId, name.toLowerCase());
  }
  repoById(id: number): RepoRow | undefined {
    return this.q.repoById.get(id);
  }
  allRepos(): (RepoRow & { owner_lower: string })[] {
    return this.q.allRepos.all();
  }
  reposOfOwner(ownerId: number): RepoRow[] {
    return this.q.reposOfOwner.all(ownerId);
  }
  /** repository id to access mode for every repository `userId` collaborates on */
  collaborationsOf(userId: number): Map<number, string> {
    return new Map(this.q.collaborations.all(userId).map((c) => [c.repo_id, c.mode]));
  }
  touchRepo(id: number): void {
    this.q.touchRepo.run(Math.floor(Date.now() / 1000), id);
  }
  setDefaultBranch(id: number, branch: string): void {
    this.q.setDefaultBranch.run(branch, id);
  }

  /** Insert a repository row, running `commitFiles` (e.g. the rename into place) inside the transaction. */
  insertRepo(r: NewRepo, ownerName: string, commitFiles: () => void): RepoRow {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.repoByName(r.owner_id, r.name)) throw E.githostRepoExists(ownerName, r.name);
        const info = this.q.insertRepo.run({ ...r, lower_name: r.name.toLowerCase(), created_unix: now, updated_unix: now });
        commitFiles();
        return this.repoById(Number(info.lastInsertRowid)) as RepoRow;
      })
      .immediate();
  }

  collaborationMode(repoId: number, userId: number): string | undefined {
    return this.q.collaboration.get(repoId, userId)?.mode;
  }
  setCollaboration(repoId: number, userId: number, mode: string): void {
    this.q.upsertCollaboration.run(repoId, userId, mode, Math.floor(Date.now() / 1000));
  }

  gpgKeysOf(uid: number): GpgKeyRow[] {
    return this.q.gpgKeysOf.all(uid);
  }
  gpgKeyByKeyId(keyId: string): GpgKeyRow | undefined {
    return this.q.gpgKeyByKeyId.get(keyId);
  }
  /** a key (primary or subkey) by its row id, when `ownerId` owns it */
  gpgKeyOfUser(ownerId: number, id: number): GpgKeyRow | undefined {
    return this.q.gpgKeyOfUser.get(id, ownerId);
  }
  gpgSubkeys(keyId: string): GpgKeyRow[] {
    return this.q.gpgSubkeys.all(keyId);
  }
  /** delete a key and the subkeys it is the primary of (Gitea's deleteGPGKey) */
  deleteGpgKey(ownerId: number, keyId: string): number {
    return this.q.deleteGpgKey.run(ownerId, keyId, keyId).changes;
  }
  publicKeysOf(uid: number): PublicKeyRow[] {
    return this.q.publicKeysOf.all(uid);
  }
  publicKeyById(id: number): PublicKeyRow | undefined {
    return this.q.publicKeyById.get(id);
  }
  publicKeyByFingerprint(fp: string): PublicKeyRow | undefined {
    return this.q.publicKeyByFingerprint.get(fp);
  }
  /** Insert an SSH key; undefined when its fingerprint or the owner's title is taken (checked in the same transaction). */
  insertPublicKey(k: Omit<PublicKeyRow, 'id' | 'created_unix' | 'updated_unix'>): PublicKeyRow | 'fingerprint' | 'name' {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.q.publicKeyByFingerprint.get(k.fingerprint)) return 'fingerprint' as const;
        if (this.q.publicKeyByName.get(k.owner_id, k.name)) return 'name' as const;
        const info = this.q.insertPublicKey.run({ ...k, created_unix: now, updated_unix: now });
        return { ...k, id: Number(info.lastInsertRowid), created_unix: now, updated_unix: now };
      })
      .immediate();
  }
  deletePublicKey(ownerId: number, id: number): boolean {
    return this.q.deletePublicKey.run(ownerId, id).changes > 0;
  }

  protectionsOf(repoId: number): ProtectedBranchRow[] {
    return this.q.protectionsOf.all(repoId);
  }
  protectionByName(repoId: number, name: string): ProtectedBranchRow | undefined {
    return this.q.protectionByName.get(repoId, name);
  }
  /** Insert a rule; undefined when the repository has one with that name. */
  insertProtection(p: Omit<ProtectedBranchRow, 'id' | 'created_unix' | 'updated_unix'>): ProtectedBranchRow | undefined {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.protectionByName(p.repo_id, p.rule_name)) return undefined;
        const info = this.q.insertProtection.run({ ...p, created_unix: now, updated_unix: now });
        return { ...p, id: Number(info.lastInsertRowid), created_unix: now, updated_unix: now };
      })
      .immediate();
  }
  updateProtection(id: number, priority: number, rule: string): void {
    this.q.updateProtection.run(priority, rule, Math.floor(Date.now() / 1000), id);
  }
  deleteProtection(repoId: number, id: number): boolean {
    return this.q.deleteProtection.run(repoId, id).changes > 0;
  }

  tagProtectionsOf(repoId: number): ProtectedTagRow[] {
    return this.q.tagProtectionsOf.all(repoId);
  }
  tagProtectionById(repoId: number, id: number): ProtectedTagRow | undefined {
    return this.q.tagProtectionById.get(repoId, id);
  }
  /** Insert a rule; undefined when the repository has one with that pattern. */
  insertTagProtection(repoId: number, namePattern: string, usernames: string[]): ProtectedTagRow | undefined {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() => {
        if (this.q.tagProtectionByPattern.get(repoId, namePattern)) return undefined;
        const row = { repo_id: repoId, name_pattern: namePattern, allowlist_usernames: JSON.stringify(usernames), created_unix: now, updated_unix: now };
        const info = this.q.insertTagProtection.run(row);
        return { ...row, id: Number(info.lastInsertRowid) };
      })
      .immediate();
  }
  updateTagProtection(id: number, namePattern: string, usernames: string[]): void {
    this.q.updateTagProtection.run(namePattern, JSON.stringify(usernames), Math.floor(Date.now() / 1000), id);
  }
  deleteTagProtection(repoId: number, id: number): boolean {
    return this.q.deleteTagProtection.run(repoId, id).changes > 0;
  }

  insertGpgKeys(keys: NewGpgKey[]): GpgKeyRow[] {
    const now = Math.floor(Date.now() / 1000);
    return this.db
      .transaction(() =>
        keys.map((k) => {
          const info = this.q.insertGpgKey.run({ ...k, added_unix: now });
          return { ...k, id: Number(info.lastInsertRowid), added_unix: now };
        }),
      )
      .immediate();
  }
}

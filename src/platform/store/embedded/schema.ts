// The embedded store's tables. One SQLite database per store dir (store.db), WAL mode,
// synchronous=FULL: a write is acknowledged only after its commit reached the disk.
//   objects  current state, one row per (kind, namespace, name)
//   changes  the change log watches replay from; pruned to the newest historyLimit rows
//   meta     rv = last resourceVersion handed out; compacted = newest rv pruned from changes
export const SCHEMA_VERSION = 1;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS objects (
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  rv INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (kind, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (
  rv INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  type TEXT NOT NULL,
  old_labels TEXT,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_by_kind ON changes (kind, rv);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('rv', 0), ('compacted', 0), ('schema', ${SCHEMA_VERSION});
`;

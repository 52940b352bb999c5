// Objects' settings in words in the console (test/unit/units.test.ts runs the table).

/** A project's destination: "*" is any cluster or any namespace, not a star beside a star. */
export function destinationText(server: string, namespace: string): string {
  const where = server === '*' ? 'any cluster' : server || 'no cluster';
  const ns = namespace === '*' ? 'any namespace' : namespace ? `namespace ${namespace}` : 'no namespace';
  return `${where}, ${ns}`;
}

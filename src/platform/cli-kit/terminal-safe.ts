// Text the CLI prints comes partly from others: Git metadata (an author name, a commit
// message), object names and messages in a store, an API's error text. A terminal obeys the
// control characters in it (ESC sequences can move the cursor, repaint a line, retitle the
// window; a carriage return overwrites), so a name could paint `Synced` over a refusal. One
// mechanism for every command (kubectl escapes the same class, k8s.io/cli-runtime
// printers.EscapeTerminal): everything the `strait` process writes to stdout and stderr has
// its C0 controls (but tab and newline), DEL and its C1 controls shown as visible escapes:
// ESC as `^[`, CR as `^M`, DEL as `^?`, U+009B as `\u009b`.
//
// JSON and YAML output stay exact: formatJson and formatYaml (output.ts) write every control
// character as an escape of their own syntax, so the guard has nothing to change there.

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const visible = (c: string): string => {
  const n = c.charCodeAt(0);
  if (n < 0x20) return `^${String.fromCharCode(n + 0x40)}`;
  if (n === 0x7f) return '^?';
  return `\\u${n.toString(16).padStart(4, '0')}`;
};

/** The text with its control characters (but tab and newline) made visible. */
export function escapeControls(text: string): string {
  CONTROLS.lastIndex = 0;
  return CONTROLS.test(text) ? text.replace(CONTROLS, visible) : text;
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/**
 * From now on, what is written to `stream` as a string (console.log, process.stdout.write)
 * has its control characters made visible; bytes (a Buffer) are decoded as UTF-8 first.
 */
export function guardTerminalOutput(stream: NodeJS.WriteStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
    if (typeof chunk === 'string') return write(escapeControls(chunk), ...rest);
    if (chunk instanceof Uint8Array) {
      const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8');
      const safe = escapeControls(text);
      return write(safe === text ? chunk : safe, ...(typeof rest[0] === 'string' ? rest.slice(1) : rest));
    }
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

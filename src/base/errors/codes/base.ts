// Codes owned by base: configuration, input, privileges, system programs.
import { def, q } from '../define.js';
import type { ErrorDetail } from '../strait-error.js';

export const base = {
  configInvalid: def('STRAIT_ERR_CONFIG_INVALID', 'usage', (path: string, value: unknown, rule: string) => ({
    message: `invalid configuration at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  configUnknownKey: def('STRAIT_ERR_CONFIG_UNKNOWN_KEY', 'usage', (path: string, key: string, suggestion?: string) => ({
    message: `unknown configuration key ${q(key)} at ${path || '(top level)'}; ${suggestion ? `did you mean ${q(suggestion)}?` : 'remove it or check its spelling'}`,
    detail: { path, key, ...(suggestion ? { suggestion } : {}) },
  })),
  configRenamedKey: def('STRAIT_ERR_CONFIG_RENAMED_KEY', 'usage', (path: string, oldKey: string, newKey: string) => ({
    message: `configuration key ${q(oldKey)} at ${path || '(top level)'} was renamed to ${q(newKey)}; use ${q(newKey)} instead`,
    detail: { path, oldKey, newKey },
  })),
  versionUnsupported: def('STRAIT_ERR_VERSION_UNSUPPORTED', 'usage', (what: string, version: unknown, supported: number[]) => ({
    message:
      `${what} has format version ${q(version)}, which this strait does not read (it reads version ${supported.join(', ')}; no version means ${supported[0]}): ` +
      (typeof version === 'number' && Number.isInteger(version) && version > Math.max(...supported)
        ? 'a newer strait wrote it; upgrade this component (docs/upgrades.md, "Version skew")'
        : 'a version is a positive integer'),
    detail: { what, version, supported },
  })),
  usage: def('STRAIT_ERR_USAGE', 'usage', (message: string, detail?: ErrorDetail) => ({ message, detail: detail ?? {} })),
  fileUnreadable: def('STRAIT_ERR_FILE_UNREADABLE', 'usage', (path: string, reason: string) => ({
    message: `cannot read ${q(path)}: ${reason}`,
    detail: { path, reason },
  })),
  inputTooLarge: def('STRAIT_ERR_INPUT_TOO_LARGE', 'usage', (path: string, limitBytes: number) => ({
    message: `${q(path)} is larger than ${limitBytes} bytes (${Math.round((limitBytes / 1024 / 1024) * 10) / 10} MiB), the most strait reads from one input; split it or check that it is the file you meant`,
    detail: { path, limitBytes },
  })),
  notRoot: def('STRAIT_ERR_PRIVILEGE', 'denied', (what: string) => ({
    message: `${what} needs root or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1); run as root or enable them`,
    detail: { what },
  })),
  systemTool: def('STRAIT_ERR_SYSTEM_TOOL', 'failed', (command: string, exit: number | string, stderr: string) => ({
    message: `${q(command)} failed (exit ${exit}): ${stderr.trim().slice(0, 500)}`,
    detail: { command, exit, stderr },
  })),
  portInUse: def('STRAIT_ERR_PORT_IN_USE', 'conflict', (address: string) => ({
    message: `cannot listen on ${address}: the address is in use by another program; stop that program or choose another port`,
    detail: { address },
  })),
  listenFailed: def('STRAIT_ERR_LISTEN_FAILED', 'failed', (address: string, reason: string) => ({
    message: `cannot listen on ${address}: ${reason}`,
    detail: { address, reason },
  })),
  internal: def('STRAIT_ERR_INTERNAL', 'internal', (what: string) => ({ message: `internal error: ${what}`, detail: { what } })),
};

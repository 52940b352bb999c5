// Kubernetes mode of a command: --kubeconfig and --context, declared here once for every
// command that takes them (resource commands, show, export, verify, diagnose, deploy-broker,
// join). Either one selects Kubernetes mode, as kubectl reads them: --kubeconfig alone uses
// the file's current-context; --context alone looks in $KUBECONFIG, else ~/.kube/config.
// The kubeconfig is read when the store is first used: a missing or unreadable file or an
// unknown context is STRAIT_ERR_KUBE_CONFIG (exit 2) before anything is written.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { openKubernetesStore, type KubernetesResourceStore } from '../store/index.js';

export interface KubeCliOptions {
  kubeconfig?: string;
  context?: string;
}

/** Declare --kubeconfig and --context on `cmd`. */
export function addKubeOptions<C extends Command>(cmd: C): C {
  cmd
    .option(
      '--kubeconfig <file>',
      'Kubernetes mode: act on the cluster of this kubeconfig instead of the local world (with --context only: $KUBECONFIG, else ~/.kube/config)',
    )
    .option('--context <name>', 'Kubernetes mode: the kubeconfig context to use (default: its current-context)');
  return cmd;
}

/** True when the command was asked to act on a Kubernetes cluster. */
export function isKubeMode(opts: KubeCliOptions): boolean {
  return opts.kubeconfig !== undefined || opts.context !== undefined;
}

/** The Kubernetes store of --kubeconfig/--context (one API server). */
export function openKubeStore(opts: KubeCliOptions): KubernetesResourceStore {
  if (opts.kubeconfig === '') throw E.usage('--kubeconfig needs a file name', { flag: 'kubeconfig' });
  if (opts.context === '') throw E.usage('--context needs a context name', { flag: 'context' });
  return openKubernetesStore({
    ...(opts.kubeconfig !== undefined ? { kubeConfigPath: opts.kubeconfig } : {}),
    ...(opts.context !== undefined ? { context: opts.context } : {}),
  });
}

/** What messages call the cluster of --kubeconfig/--context before its cluster ID is known. */
export function kubeLabel(opts: KubeCliOptions): string {
  const file = opts.kubeconfig ?? process.env['KUBECONFIG'] ?? '~/.kube/config';
  return opts.context !== undefined ? `context ${opts.context} of ${file}` : `the current context of ${file}`;
}

/**
 * In Kubernetes mode the cluster is the kubeconfig's: an explicit --cluster or --state-dir
 * (which name a cluster of the local world) is refused rather than silently ignored.
 */
export function refuseWorldOptions(cmd: Command, opts: KubeCliOptions): void {
  if (!isKubeMode(opts)) return;
  let root: Command = cmd;
  while (root.parent) root = root.parent;
  for (const [name, flag] of [
    ['cluster', '--cluster'],
    ['stateDir', '--state-dir'],
  ] as const) {
    if (root.getOptionValueSource(name) === 'cli' || cmd.getOptionValueSource(name) === 'cli') {
      throw E.usage(`${flag} names the local world; with --kubeconfig/--context the cluster is the kubeconfig's (pick it with --context)`, {
        flag: flag.slice(2),
      });
    }
  }
}

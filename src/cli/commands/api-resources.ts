// strait api-resources: the kinds strait knows, as kubectl api-resources prints them.
import type { Command } from 'commander';
import { allKinds } from '../../platform/resources/index.js';
import { formatJson, formatTable, parseOutputFormat } from '../../platform/cli-kit/index.js';

export function registerApiResourcesCommand(program: Command): void {
  program
    .command('api-resources')
    .description('list the resource kinds strait knows (names usable with get, describe and delete)')
    .option('-o, --output <format>', 'text or json', 'text')
    .action((opts: { output: string }) => {
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const kinds = [...allKinds()].sort((a, b) => a.plural.localeCompare(b.plural));
      if (format === 'json') {
        process.stdout.write(
          formatJson(
            kinds.map((k) => ({
              name: k.plural,
              singularName: k.singular,
              shortNames: k.shortNames,
              apiVersion: k.apiVersion,
              alsoServed: k.alsoServed ?? [],
              namespaced: k.namespaced,
              kind: k.kind,
            })),
          ),
        );
        return;
      }
      process.stdout.write(
        formatTable(
          ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'],
          kinds.map((k) => [k.plural, k.shortNames.join(','), k.apiVersion, String(k.namespaced), k.kind]),
        ),
      );
    });
}

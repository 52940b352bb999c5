// Configuration validation: once at start, unknown keys rejected, renamed keys get a
// pointed message, defaults applied, then the result is deeply frozen.
export {
  defineConfig,
  deepFreeze,
  closestKey,
  editDistance,
  CONFIG_AJV_OPTIONS,
  configValidatorName,
  DEFINED_CONFIG_SCHEMAS,
  generatedConfigValidator,
  type ConfigSchema,
  type ConfigDefinition,
} from './define-config.js';
export { isIPv4Cidr, parseCidr, cidrsOverlap, cidrContains, ipv4ToInt, intToIpv4, type Cidr } from './cidr.js';
export { parseIpv4, parsePort, type Ipv4, type Port } from './address.js';
export { jsonHasDuplicateKey, parseConfigText } from './config-text.js';
export { AJV_VERSION, loadYaml, newAjv } from './lazy.js';

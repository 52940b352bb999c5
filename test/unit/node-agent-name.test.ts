// The node agent takes its node's name from $STRAIT_NODE_NAME (the Downward API's
// spec.nodeName in deploy/node-agent.yaml) when its file names none: real clusters
// showed every agent logging "node":"node".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withNodeName } from '../../src/multicluster/control/node-agent/index.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';

const file = { remoteSubnets: ['10.2.0.0/16'], gateway: { address: '172.30.1.2' } };

test('node agent: $STRAIT_NODE_NAME names the node when the file does not', () => {
  assert.equal(parseNodeAgentConfig(withNodeName(file, 'a-wk')).nodeName, 'a-wk');
});

test("node agent: the file's nodeName wins over $STRAIT_NODE_NAME", () => {
  assert.equal(parseNodeAgentConfig(withNodeName({ ...file, nodeName: 'from-file' }, 'a-wk')).nodeName, 'from-file');
});

test('node agent: without either, the default name stays', () => {
  assert.equal(parseNodeAgentConfig(withNodeName(file, undefined)).nodeName, 'node');
  assert.equal(parseNodeAgentConfig(withNodeName(file, '')).nodeName, 'node');
});

test('node agent: a file that is not an object is left to the parser to refuse', () => {
  assert.equal(withNodeName('text', 'a-wk'), 'text');
  assert.throws(() => parseNodeAgentConfig(withNodeName(['x'], 'a-wk')), /STRAIT_ERR|object/i);
});

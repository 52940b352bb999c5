// The control module process: GitOps sync with OpenPGP signature enforcement, the
// key store and the login/gpg HTTP API (port 8080).
//   node dist/daemon/control/main.js [--config FILE] [--state-dir DIR] [--namespace argocd]
//     [--listen 127.0.0.1:8080] [--insecure] [--poll-interval 180] [--store-dir DIR |
//      --store-socket SOCK --store-token-file FILE --cluster NAME | --kubeconfig FILE]
// Kubernetes mode (STRAIT_STORE=kubernetes, or --kubeconfig): the store is the API server
// (in-cluster ServiceAccount, $KUBECONFIG or --kubeconfig), and besides GitOps the process
// runs the mesh and the multicluster control (src/control-module/kubernetes.ts).
// Flags override the YAML config file (src/control-module/args.ts).
import { runControlModule } from '../../src/control-module/index.js';
import { runEntry } from '../entry.js';

runEntry(() => runControlModule(process.argv));

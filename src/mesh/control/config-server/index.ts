// The mesh configuration service of Kubernetes mode: sidecars fetch their configuration
// from the control module over TLS with a pod-bound ServiceAccount token. One door:
//   const s = await serveMeshConfig({ cert, key, port: 15012, authenticate, podConfig });
export { serveMeshConfig, PASS_THROUGH, type MeshCaller, type MeshConfigServer, type MeshConfigServerOptions } from './server.js';
export { DEFAULT_TOKEN_REVIEW_LIMITS, boundedReviews, THROTTLED, type TokenReviewLimits } from './token-reviews.js';

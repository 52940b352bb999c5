// DNS queries before (or instead of) the general codec: a bounded plausibility check,
// a reader of the one question and EDNS size of a plain query, and the question
// comparison a forwarder matches replies with. Bounds-checked reads, no I/O.
export { readQuery, sameQuestion, type Query } from './query.js';
export { plausibleQuery } from './precheck.js';

// Built-in workload images of the local world (strait/echo; strait/idle needs no process).
export { startEcho, type EchoIdentity, type EchoReply, type EchoServer } from './echo.js';
export { runPodRuntime, type RuntimePod } from './pod-runtime.js';

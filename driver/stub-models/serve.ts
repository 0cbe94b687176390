// The stub model server as a process of its own, for a cluster: a Deployment of the driver image runs
//   node /opt/tcab/driver/stub-models/serve.ts
// with TCAB_STUB_SCRIPT (a StubScript as JSON) and TCAB_STUB_PORT (default 8080), and driver Pods reach it through
// a Service (TCAB_BASE_URL_<SLUG>=http://<svc>.<ns>.svc.cluster.local:<port>), as they would a model gateway.
// The server itself binds loopback only (a stub must never face a real network by accident); here the Pod's own
// network namespace is the boundary, so a front server on 0.0.0.0 hands requests to it.
// GET /_stub/requests lists the model requests (wire, status, a hash of the key presented). GET /_stub/tool-results lists what the harnesses' tools returned to the model (tool results, in order): what a
// command run inside a driver container printed, for tests. Headers are never logged nor listed: they carry
// whatever API key the harness was given.
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import { StubScript } from '../../shared/stub-script.ts';
import { startStubModelServer } from './server.ts';
import { toolResults } from './tool-results.ts';

const script = StubScript.parse(JSON.parse(process.env.TCAB_STUB_SCRIPT ?? '{"steps":[{"text":"Hello from the stub model."}]}'));
const port = Number(process.env.TCAB_STUB_PORT ?? 8080);
if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`TCAB_STUB_PORT must be a TCP port, got "${process.env.TCAB_STUB_PORT}"`);

const stub = await startStubModelServer({ script });
const front = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/_stub/tool-results') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(toolResults(stub.requests)));
    return;
  }
  if (req.method === 'GET' && req.url === '/_stub/requests') {
    // Each model request: its wire, status and the key it presented as a SHA-256 prefix (a test compares it with the
    // hash of the key it expects the provider to get, e.g. through a model gateway; the key itself is never listed).
    const presented = (h: Record<string, string>) => h['x-api-key'] ?? h['x-goog-api-key'] ?? h.authorization?.replace(/^Bearer /i, '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stub.requests.filter((r) => r.wire !== 'none').map((r) => ({ path: r.path, wire: r.wire, status: r.status, key_sha256: presented(r.headers) ? createHash('sha256').update(presented(r.headers)!).digest('hex').slice(0, 16) : null }))));
    return;
  }
  const upstream = request({ host: '127.0.0.1', port: stub.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (error) => res.destroy(error));
  req.pipe(upstream);
});
await new Promise<void>((resolve) => front.listen(port, '0.0.0.0', resolve));
process.stdout.write(`stub model server: ${script.steps.length} step(s), listening on 0.0.0.0:${port}\n`);
const stop = () => {
  front.close();
  void stub.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

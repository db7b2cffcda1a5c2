// A static file server for the web page, bound to 127.0.0.1. It sends the page's
// Content-Security-Policy (read from index.html's meta tag) as a header on every response:
// the worker only obeys a header, and frame-ancestors only works there.
//   node scripts/web.d/serve.mjs ROOT [PORT]      (PORT 0 picks a free port)
import { createServer } from 'node:http';
import { readFileSync, statSync, createReadStream } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

/** The policy of ROOT/index.html's `<meta http-equiv="Content-Security-Policy">`. */
export function pagePolicy(root) {
  const html = readFileSync(join(root, 'index.html'), 'utf8');
  const match = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  if (!match) throw new Error(`${root}/index.html has no Content-Security-Policy meta tag`);
  return match[1];
}

/** Starts the server; resolves to {server, url}. */
export function serve(root, port = 8080) {
  const base = resolve(root);
  const policy = `${pagePolicy(base)}; frame-ancestors 'none'`;
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    let file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      const size = statSync(file).size;
      res.writeHead(200, {
        'Content-Type': TYPES[extname(file)] || 'application/octet-stream',
        'Content-Length': size,
        'Content-Security-Policy': policy,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-cache',
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Security-Policy': policy }).end('not found\n');
    }
  });
  return new Promise((resolvePromise) => {
    server.listen(port, '127.0.0.1', () => {
      resolvePromise({ server, url: `http://127.0.0.1:${server.address().port}/` });
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [root = 'web-demo', port = '8080'] = process.argv.slice(2);
  const { url } = await serve(root, Number(port));
  console.log(`karpenter-why web page: ${url} (Ctrl-C to stop)`);
}

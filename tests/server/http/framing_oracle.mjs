// The independent side of the request-framing differential test: Node's HTTP server (llhttp, strict mode) is given
// each request of a corpus on its own connection, and what it made of the first request is written out.
//   node framing_oracle.mjs CORPUS.json OUT.json [MAX_HEADER_BYTES]
// CORPUS.json: ["<base64 bytes>", ...]. OUT.json: one entry per case, in order:
//   {"outcome": "accept", "method", "url", "body": "<base64>"}  the first request was read whole
//   {"outcome": "reject", "code"}                               llhttp refused it (its error code)
//   {"outcome": "incomplete"}                                   the bytes ended before the request did
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';

const [corpusPath, outPath, maxHeaderSize] = process.argv.slice(2);
const corpus = JSON.parse(readFileSync(corpusPath, 'utf8'));

// Each server-side connection is tied to its case when it is accepted (cases run one at a time), and only the first
// event of a case decides it: later events (a pipelined second request, the close) are ignored.
let pending = null;
const decide = (c, outcome) => { if (c && !c.decided) { c.decided = true; c.resolve(outcome); } };

// EOF inside a message is "incomplete"; any other parser error is a refusal.
function classify(err) {
  const code = err.code || 'ERROR';
  if (code === 'HPE_INVALID_EOF_STATE' || code === 'ECONNRESET' || code === 'ECONNABORTED') return { outcome: 'incomplete' };
  return { outcome: 'reject', code };
}

// requireHostHeader is off: the corpus checks framing; kairo's Host rule is tested against the RFC directly.
const server = createServer({ requireHostHeader: false, maxHeaderSize: Number(maxHeaderSize || 16384) }, (req, res) => {
  const c = req.socket.framingCase;
  if (req.socket.firstRequest) return;  // a pipelined second request: not this case's question
  req.socket.firstRequest = req;
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    decide(c, { outcome: 'accept', method: req.method, url: req.url, body: Buffer.concat(chunks).toString('base64') });
    res.end();
  });
  req.on('error', (e) => decide(c, classify(e)));
  req.on('aborted', () => decide(c, { outcome: 'incomplete' }));
});
server.on('connection', (socket) => {
  const c = pending;
  socket.framingCase = c;
  // Whatever happened, the connection ends; a case nothing decided by then was cut short.
  socket.on('close', () => setTimeout(() => decide(c, { outcome: 'incomplete' }), 50));
});
// An error in bytes after a complete first request is about those bytes: the first request's 'end' still decides.
server.on('clientError', (err, socket) => {
  if (socket.firstRequest && socket.firstRequest.complete) return;
  decide(socket.framingCase, classify(err));
  socket.destroy();
});

server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const results = [];
  for (const b64 of corpus) {
    results.push(await new Promise((resolve) => {
      pending = { decided: false, resolve };
      const sock = connect(port, '127.0.0.1', () => sock.end(Buffer.from(b64, 'base64')));
      sock.on('error', () => {});
      sock.resume();
    }));
  }
  writeFileSync(outPath, JSON.stringify(results));
  server.close();
  process.exit(0);
});

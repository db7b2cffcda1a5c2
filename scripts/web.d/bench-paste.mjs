// Times the web page's large paste in headless Chromium, as the browser e2e test does, but
// several times and each first paste in a freshly loaded page (DESIGN.md: 150 MB/s):
//   node scripts/web.d/bench-paste.mjs [ROUNDS] [REPEATS] [ROOT...]   (after scripts/web --build
//   and npm ci in tests/browser; ROOT defaults to web-demo, several are timed in turn, round by
//   round, to compare builds in the same conditions on a shared machine)
// Per round: a new page, wait for the engine, one 50 MB paste (the "first" number), then
// REPEATS more pastes of the same text in that page; and a fresh page's first diagnosis time
// for a small case pasted as soon as the page takes input. Prints medians. With KW_BENCH_CPU=1
// each paste is traced and the worker thread's CPU time for the analysis is printed too
// ("cpu"): on a machine shared with other work it varies far less than the wall time.
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { chromium } = await import(join(REPO, 'tests', 'browser', 'node_modules', 'playwright-core', 'index.mjs'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const MB = Number(process.env.KW_BENCH_MB || 50);
const rounds = Number(process.argv[2] || 5);
const repeats = Number(process.argv[3] || 2);
const roots = process.argv.length > 4 ? process.argv.slice(4) : [join(REPO, 'web-demo')];

function corpusInput(name) {
  const dir = join(REPO, 'tests', 'corpus', name);
  return readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith('input.'))), 'utf8');
}
const tail = corpusInput('karpenter-log-insufficient-capacity');
const small = corpusInput('describe-pod-pending-karpenter-a');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The worker thread's CPU time (ms) in its longest analysis task of a trace. */
function workerCpuMs(trace) {
  const { traceEvents } = JSON.parse(trace.toString());
  const threads = new Map();
  for (const e of traceEvents) if (e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
  const runs = traceEvents.filter((e) => e.name === 'RunMicrotasks' && e.ph === 'X'
    && (threads.get(`${e.pid}:${e.tid}`) || '').startsWith('DedicatedWorker'));
  runs.sort((a, b) => b.dur - a.dur);
  return runs.length ? runs[0].tdur / 1000 : NaN;
}

async function largePaste(page) {
  const traced = Boolean(process.env.KW_BENCH_CPU);
  if (traced) await page.context().browser().startTracing(page, { categories: ['devtools.timeline', 'toplevel', 'v8.execute'] });
  const before = await page.evaluate(() => Number(document.getElementById('report').dataset.seq || 0));
  await page.evaluate(({ tail: t, mb }) => {
    const noise = '{"level":"INFO","time":"2024-05-01T10:00:00.000Z","logger":"controller","message":"found provisionable pod(s)","commit":"a1b2c3d","controller":"provisioner","Pods":"shop/web-0","duration":"12.3ms"}\n';
    const target = mb * (1 << 20);
    const text = noise.repeat(Math.ceil((target - t.length) / noise.length)) + t;
    const clipboardData = new DataTransfer();
    clipboardData.setData('text/plain', text);
    const area = document.getElementById('input');
    area.focus();
    area.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
  }, { tail, mb: MB });
  await page.waitForFunction((seq) => Number(document.getElementById('report').dataset.seq || 0) > seq
    && document.documentElement.dataset.engine === 'ready', before, { timeout: 300_000, polling: 50 });
  const { ms, bytes } = await page.$eval('#report', (r) => ({ ms: Number(r.dataset.ms), bytes: Number(r.dataset.bytes) }));
  const cpu = traced ? workerCpuMs(await page.context().browser().stopTracing()) : NaN;
  await page.click('#clear-input');
  await page.waitForSelector('#empty-state', { state: 'visible' });
  return { ms, mbps: bytes / (1 << 20) / (ms / 1000), cpu };
}

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
const sites = [];
for (const root of roots) {
  const { server, url } = await serve(root, 0);
  sites.push({ root, server, url, first: [], again: [], diagnosis: [] });
}
for (let round = 0; round < rounds; round += 1) {
  for (const site of sites) {
    const { url, first, again, diagnosis } = site;
    const context = await browser.newContext();
    const page = await context.newPage();
    if (process.env.KW_BENCH_CONSOLE) page.on('console', (m) => console.log('  console:', m.text()));
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForSelector('html[data-engine="ready"]');
    await page.waitForTimeout(500);
    const runs = [];
    for (let k = 0; k <= repeats; k += 1) runs.push(await largePaste(page));
    first.push(runs[0]);
    again.push(...runs.slice(1));
    await context.close();

    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    await p.goto(url, { waitUntil: 'domcontentloaded' });
    await p.evaluate((t) => {
      const area = document.getElementById('input');
      area.value = t;
      area.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
    }, small);
    await p.waitForFunction(() => Number(document.getElementById('report').dataset.seq || 0) > 0, null, { timeout: 60_000 });
    diagnosis.push(await p.evaluate(() => Number(document.getElementById('report').dataset.renderedAt)));
    await fresh.close();
    const cpu = (r) => (Number.isNaN(r.cpu) ? '' : ` cpu ${r.cpu.toFixed(0)} ms`);
    console.log(`${site.root} round ${round + 1}: first ${runs[0].mbps.toFixed(0)} MB/s (${runs[0].ms.toFixed(0)} ms${cpu(runs[0])}), `
      + `again ${runs.slice(1).map((r) => `${r.mbps.toFixed(0)} MB/s${cpu(r)}`).join(', ')}, first diagnosis ${diagnosis.at(-1)} ms`);
  }
}
await browser.close();
for (const { root, server, first, again, diagnosis } of sites) {
  server.close();
  console.log(`${root}: median of ${rounds}: first paste ${median(first.map((r) => r.mbps)).toFixed(0)} MB/s `
    + `(${median(first.map((r) => r.ms)).toFixed(0)} ms), repeat ${median(again.map((r) => r.mbps)).toFixed(0)} MB/s, `
    + `first diagnosis ${median(diagnosis)} ms`
    + (process.env.KW_BENCH_CPU ? `; worker cpu: first ${median(first.map((r) => r.cpu)).toFixed(0)} ms, repeat ${median(again.map((r) => r.cpu)).toFixed(0)} ms` : ''));
}
